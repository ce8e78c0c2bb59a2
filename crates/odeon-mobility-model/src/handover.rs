//! The two-phase hand-over, source and target side (steps 1–6 of the protocol in
//! `docs/design/mobility.md`).
//!
//! The source is the coordinator and the only node that decides: it keeps its frozen
//! copy and everything that arrives until the target, holding a copy it may not run,
//! says Ready; then it commits (and becomes a forwarder) or, on a refusal, a timeout
//! or the target's loss, resumes. The target runs the actor only on Commit, and drops
//! its copy on Abort or if it loses the source first. So there is never more than one
//! copy that runs; the price is a window (Ready sent .. Commit received) in which the
//! loss of either node loses the actor, which `props.rs` states exactly.

use std::collections::VecDeque;
use std::mem;

use crate::model::{Bug, Frame, HOME, Item, MAX_NODES, NodeIx, Place, Route};
use crate::node::Sim;
use crate::props::Event;

impl Sim<'_> {
    /// Step 1: the host `n` freezes between two messages and ships its snapshot to `t`.
    pub(crate) fn start_move(&mut self, n: NodeIx, t: NodeIx) {
        self.st.ghost.moves += 1;
        let mv = self.st.ghost.moves;
        if self.node(n).lost & crate::model::bit(t) != 0 {
            // Refused at the call: the target is known to be unreachable.
            self.st.ghost.refused += 1;
            self.fire(Event::Refused);
            return;
        }
        let Place::Host { mailbox, hw } =
            mem::replace(&mut self.node(n).place, Place::Away { route: Route::Dead })
        else {
            unreachable!("only the host moves the actor")
        };
        let snapshot: Vec<Item> = mailbox.into_iter().collect();
        let epoch = self.node(n).epoch;
        self.st.send(
            n,
            t,
            Frame::Handover {
                mv,
                epoch,
                snapshot: snapshot.clone(),
                hw,
            },
        );
        if self.bug(Bug::SourceDiscardsBeforeCommit) {
            // The defect: the source forgets at once; the target runs on receipt.
            self.node(n).place = Place::Away {
                route: Route::Direct(t),
            };
            self.after_commit(n, t, snapshot);
            return;
        }
        self.node(n).place = Place::Frozen {
            mv,
            target: t,
            snapshot,
            held: Vec::new(),
            hw,
        };
    }

    /// Step 2, at the target: hold a copy (not running). If this node's own route to
    /// the actor does not lead straight to the source, drain it first (a flush, which
    /// the frozen source acknowledges): only then are all of this node's earlier
    /// messages queued at the source, ahead of anything it sends once it runs the actor.
    pub(crate) fn receive_handover(
        &mut self,
        from: NodeIx,
        to: NodeIx,
        mv: u8,
        src_epoch: u8,
        snapshot: Vec<Item>,
        hw: [u8; MAX_NODES],
    ) {
        let refuses = self.cfg.refusers & crate::model::bit(to) != 0;
        let instant = self.bug(Bug::SourceDiscardsBeforeCommit)
            || self.bug(Bug::TargetActivatesWithoutCommit);
        let Place::Away { route } = &self.node(to).place else {
            // Only one copy runs: a node that has one refuses another.
            self.st.send(to, from, Frame::Refuse { mv });
            return;
        };
        if refuses || matches!(route, Route::Relocating { .. } | Route::Dead) {
            self.st.send(to, from, Frame::Refuse { mv });
            return;
        }
        let route = route.clone();
        // No drain is needed when the route leads straight to the source (what this
        // node sent is on the link ahead of Ready), or when the route is direct and
        // clean: nothing sent on it since it was last drained, so nothing of this
        // node's can arrive at an owner after Ready.
        let clean = matches!(route, Route::Direct(_))
            && (!self.node(to).route_used || self.bug(Bug::SkipDrainOnUsedRoute));
        let drained = matches!(route, Route::Direct(h) if h == from)
            || clean
            || self.bug(Bug::ReadyWithoutDrain);
        if clean && !matches!(route, Route::Direct(h) if h == from) {
            self.fire(Event::DrainSkipped);
        }
        self.node(to).place = Place::Prepared {
            mv,
            src_epoch,
            from,
            snapshot,
            hw,
            held: Vec::new(),
            route,
            ready_sent: drained,
        };
        if instant {
            if self.bug(Bug::TargetActivatesWithoutCommit) {
                self.st.send(to, from, Frame::Ready { mv });
            }
            let epoch = self.node(from).epoch.max(self.node(to).epoch) + 1;
            self.activate(from, to, epoch, Vec::new(), hw);
        } else if drained {
            self.st.send(to, from, Frame::Ready { mv });
        } else {
            // A direct route that does not lead to the source: flush through it. (A
            // route already switching has its flush on the way.)
            self.start_switch(to);
        }
    }

    /// Step 3, at the source: Ready commits. The source becomes a forwarder whose
    /// route is the target, sends Commit with what it held, rebinds the asks it
    /// shipped, and hints its route holders (eager repair, so that its entry can go).
    pub(crate) fn receive_ready(&mut self, from: NodeIx, to: NodeIx, mv: u8) {
        let Place::Frozen {
            mv: m, target: t, ..
        } = &self.node(to).place
        else {
            return;
        };
        if (*m, *t) != (mv, from) {
            return;
        }
        let Place::Frozen {
            snapshot, held, hw, ..
        } = mem::replace(
            &mut self.node(to).place,
            Place::Away {
                route: Route::Direct(from),
            },
        )
        else {
            unreachable!()
        };
        // Its route is new and nothing was sent on it: what it held goes in Commit.
        self.node(to).route_used = false;
        let epoch = self.node(to).epoch + 1;
        let held: Vec<Item> = held.into_iter().map(bump).collect();
        self.st.send(
            to,
            from,
            Frame::Commit {
                mv,
                epoch,
                held: held.clone(),
                hw,
            },
        );
        self.st.ghost.commit_in_flight = Some((to, from));
        let shipped: Vec<Item> = snapshot.into_iter().map(bump).chain(held).collect();
        self.after_commit(to, from, shipped);
    }

    /// The source `s` has given the actor to `t`: everything shipped is in `t`'s
    /// custody, asks are rebound, holders are hinted.
    fn after_commit(&mut self, s: NodeIx, t: NodeIx, shipped: Vec<Item>) {
        self.st.ghost.moved += 1;
        self.fire(Event::Moved);
        let node = self.node(s);
        node.epoch += 1;
        node.hinted = 0;
        for item in &shipped {
            self.st.hold(t, item);
            if let Item::Msg {
                id,
                ask: true,
                hops,
                ..
            } = *item
            {
                self.bind_ask(s, id, t, hops, false);
            }
        }
        self.hint_holders(s, t);
        if self.bug(Bug::GcWithoutFlush) && s != HOME {
            self.node(s).holders = [0; MAX_NODES];
        }
        self.gc(s);
    }

    /// Step 2 failed at the target (it refused): the source resumes.
    pub(crate) fn receive_refuse(&mut self, from: NodeIx, to: NodeIx, mv: u8) {
        if matches!(self.node(to).place, Place::Frozen { mv: m, target, .. } if m == mv && target == from)
        {
            self.resume(to);
            self.st.ghost.refused += 1;
            self.fire(Event::Refused);
        }
    }

    /// The source runs the actor again: its frozen mailbox, then what it held.
    pub(crate) fn resume(&mut self, n: NodeIx) {
        let place = &mut self.node(n).place;
        let Place::Frozen {
            snapshot, held, hw, ..
        } = mem::replace(place, Place::Away { route: Route::Dead })
        else {
            unreachable!("resume a node that is not frozen")
        };
        *place = Place::Host {
            mailbox: snapshot.into_iter().chain(held).collect::<VecDeque<_>>(),
            hw,
        };
    }

    /// A frozen source gives up waiting (timeout): it aborts and resumes.
    pub(crate) fn timeout(&mut self, n: NodeIx) {
        let Place::Frozen { mv, target, .. } = self.node(n).place else {
            return;
        };
        self.st.send(n, target, Frame::Abort { mv });
        self.resume(n);
        self.st.ghost.failed += 1;
        self.fire(Event::ResumedAtSource);
    }

    /// Step 4, at the target: Commit activates the copy.
    pub(crate) fn receive_commit(
        &mut self,
        from: NodeIx,
        to: NodeIx,
        mv: u8,
        epoch: u8,
        held: Vec<Item>,
        hw: [u8; MAX_NODES],
    ) {
        let bugged = !self.cfg.bugs.is_empty();
        match &mut self.node(to).place {
            Place::Prepared { mv: m, from: f, .. } if (*m, *f) == (mv, from) => {
                self.activate(from, to, epoch, held, hw);
            }
            Place::Host { mailbox, .. } if bugged => mailbox.extend(held),
            _ => {}
        }
    }

    /// The target runs the actor: the shipped mailbox, what the source held, then what
    /// arrived here while prepared (through the owner's checks). It tells the birth
    /// node's directory (step 5).
    fn activate(
        &mut self,
        from: NodeIx,
        to: NodeIx,
        epoch: u8,
        held: Vec<Item>,
        hw: [u8; MAX_NODES],
    ) {
        let Place::Prepared {
            snapshot,
            held: mine,
            route,
            ..
        } = mem::replace(
            &mut self.node(to).place,
            Place::Host {
                mailbox: VecDeque::new(),
                hw,
            },
        )
        else {
            unreachable!()
        };
        if let Some((_, t)) = self.st.ghost.commit_in_flight
            && t == to
        {
            self.st.ghost.commit_in_flight = None;
        }
        let shipped: Vec<Item> = snapshot.into_iter().map(bump).chain(held).collect();
        for item in &shipped {
            if let Item::Msg {
                id,
                ask: true,
                hops,
                ..
            } = *item
            {
                self.bind_ask(to, id, to, hops, true);
            }
        }
        if let Place::Host { mailbox, .. } = &mut self.node(to).place {
            mailbox.extend(shipped);
        }
        let (buffered, hop) = match route {
            Route::Switching { buffer, old } => (buffer, Some(old)),
            Route::Relocating { buffer, .. } => (buffer, None),
            Route::Direct(h) => (Vec::new(), Some(h)),
            Route::Dead => (Vec::new(), None),
        };
        // The pin this node held on its route's node (the source, or a former owner
        // that acknowledged its drain) is released: it routes nowhere now.
        if let Some(h) = hop {
            self.st.send(to, h, Frame::Unpin);
        }
        for item in buffered.into_iter().chain(mine) {
            self.owner_take(to, item);
        }
        // From now on this node's clients send straight into the mailbox, unnumbered.
        // Its numbered messages all reached the source before Ready (drained), except
        // stragglers from a route through a node that died: they must not come after
        // the direct ones, so the mark for this origin jumps to the last number used.
        let seq_out = self.node(to).seq_out;
        if let Place::Host { hw, .. } = &mut self.node(to).place {
            hw[usize::from(to)] = hw[usize::from(to)].max(seq_out);
        }
        let node = self.node(to);
        node.epoch = node.epoch.max(epoch);
        node.export = true;
        node.hinted = 0;
        node.hint_due = false;
        node.holders[usize::from(from)] += 1;
        self.fire(Event::Activated);
        if to != HOME {
            self.st.send(to, HOME, Frame::Located { epoch });
        }
    }

    /// The source aborted the move: the target drops its copy.
    pub(crate) fn receive_abort(&mut self, from: NodeIx, to: NodeIx, mv: u8) {
        if matches!(self.node(to).place, Place::Prepared { mv: m, from: f, .. } if (m, f) == (mv, from))
        {
            self.discard(to, false);
        }
    }

    /// The target drops its copy (abort, or the source was lost): what it held goes on
    /// along its own route, as if it had never been prepared. If the source was lost,
    /// the asks it shipped fail back to their callers: had it committed, they would be
    /// bound here (an abort leaves them at the source, which answers them).
    pub(crate) fn discard(&mut self, n: NodeIx, source_lost: bool) {
        let Place::Prepared {
            route,
            held,
            from,
            snapshot,
            ..
        } = mem::replace(&mut self.node(n).place, Place::Away { route: Route::Dead })
        else {
            return;
        };
        if let Some((s, t)) = self.st.ghost.commit_in_flight
            && (s, t) == (from, n)
        {
            self.st.ghost.commit_in_flight = None;
        }
        if source_lost {
            for item in snapshot {
                self.drop_item(n, item);
            }
        }
        let lost = self.node(n).lost;
        let hop_lost = match &route {
            Route::Direct(h) | Route::Switching { old: h, .. } => lost & crate::model::bit(*h) != 0,
            _ => false,
        };
        if hop_lost {
            let mut buffer = match route {
                Route::Switching { buffer, .. } => buffer,
                _ => Vec::new(),
            };
            buffer.extend(held);
            self.relocate(n, buffer);
            return;
        }
        self.node(n).place = Place::Away { route };
        for item in held {
            self.route_push(n, item);
        }
        if mem::take(&mut self.node(n).hint_due) {
            self.start_switch(n);
        }
        self.gc(n);
    }
}

/// An item shipped to the target makes one more hop (ask binding reports must grow).
fn bump(item: Item) -> Item {
    match item {
        Item::Msg { id, ask, seq, hops } => Item::Msg {
            id,
            ask,
            seq,
            hops: hops + 1,
        },
        flush => flush,
    }
}
