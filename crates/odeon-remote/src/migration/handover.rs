//! Steps 1–6: the two-phase hand-over, source and target.
//!
//! Source: `Host` → [`freeze`](MobileEntry::freeze) → `Frozen` → on `MigrateReady`
//! commit (`Away { Direct(target) }`, [`Out::Moved`]) or, on `MigrateRefused`, the
//! driver's [`timeout`](MobileEntry::timeout) or the target's loss, resume (`Host`,
//! [`Out::Resumed`] with everything in order). Target: `Away` → on `MigrateOffer`
//! `Prepared` (draining its own route, step 3) → `MigrateReady` sent → on
//! `MigrateCommit` activate (`Host`, [`Out::Activate`]) or, on `MigrateAbort`, an
//! acknowledgement that shows the source left, or the source's loss, discard
//! (`Away`, [`Out::Discarded`]).
//!
//! A direct port of the model's `handover.rs` (`start_move`, `receive_handover`,
//! `receive_ready`, `after_commit`, `receive_refuse`, `resume`, `timeout`,
//! `receive_commit`, `activate`, `receive_abort`, `discard`).

use std::mem;

use super::entry::{Frozen, HighWater, Item, MobileEntry, MoveFailed, Out, Place, Prepared, Route};
use crate::wire::{NodeId, QueuedMessage, Traffic, WireMigrateRefusal};

/// Why [`MobileEntry::freeze`] did not start a move (nothing changed).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum FreezeError {
    /// This node does not run the actor (or is already moving it).
    #[error("the actor does not run here")]
    NotHost,
    /// The target is this node.
    #[error("already on {0}")]
    AlreadyThere(NodeId),
    /// The target is known to be lost.
    #[error("{0} cannot be reached")]
    Unreachable(NodeId),
}

impl MobileEntry {
    /// Steps 1–2: the host freezes between two messages and offers the actor to
    /// `target`. `snapshot` is the mailbox at this moment, in order (the driver drains
    /// it); `state` the encoded state. From now on what arrives is held.
    ///
    /// # Errors
    /// [`FreezeError`] if the move cannot start; nothing changed then.
    #[must_use = "the outputs must be performed"]
    pub(crate) fn freeze(
        &mut self,
        migration: u64,
        target: &NodeId,
        state: Vec<u8>,
        snapshot: Vec<QueuedMessage>,
    ) -> Result<Vec<Out>, FreezeError> {
        if *target == self.me {
            return Err(FreezeError::AlreadyThere(target.clone()));
        }
        if self.is_lost(target) {
            return Err(FreezeError::Unreachable(target.clone()));
        }
        let Place::Host { hw } = &mut self.place else {
            return Err(FreezeError::NotHost);
        };
        let hw = mem::take(hw);
        let frame = Traffic::MigrateOffer {
            migration,
            actor: self.actor.clone(),
            epoch: self.epoch,
            state,
            mailbox: snapshot.clone(),
            high_water: hw.iter().map(|(n, s)| (n.clone(), *s)).collect(),
            watchers: Vec::new(),
            links: Vec::new(),
            names: Vec::new(),
            chunks: 0,
        };
        self.send_frame(target, frame);
        self.place = Place::Frozen(Frozen {
            migration,
            target: target.clone(),
            snapshot,
            held: Vec::new(),
            hw,
        });
        Ok(self.take_out())
    }

    /// Step 3 at the target: hold a copy that does not run; if this node's route does
    /// not lead straight to the source, drain it first (model: `receive_handover`).
    /// The driver checks the type, the token and the state before calling this, and
    /// answers `MigrateRefused` itself when they fail.
    pub(crate) fn receive_offer(
        &mut self,
        from: &NodeId,
        migration: u64,
        src_epoch: u32,
        state: Vec<u8>,
        snapshot: Vec<QueuedMessage>,
        high_water: Vec<(NodeId, u64)>,
    ) {
        let refusal = match &self.place {
            // Only one copy runs: a node that has one refuses another.
            Place::Host { .. } | Place::Frozen(_) | Place::Prepared(_) => {
                Some(WireMigrateRefusal::AlreadyThere)
            }
            Place::Away {
                route: Route::Relocating { .. } | Route::Dead,
            } => Some(WireMigrateRefusal::Busy),
            Place::Away { .. } => None,
        };
        if let Some(why) = refusal {
            self.send_frame(from, Traffic::MigrateRefused { migration, why });
            return;
        }
        let Place::Away { route } =
            mem::replace(&mut self.place, Place::Away { route: Route::Dead })
        else {
            unreachable!()
        };
        // No drain is needed when the route leads straight to the source (what this
        // node sent is on the link ahead of Ready), or when it is direct and clean:
        // nothing sent on it since it was last drained, so nothing of this node's can
        // reach an owner after Ready (model: `receive_handover`).
        let straight = route == Route::Direct(from.clone());
        let clean = matches!(route, Route::Direct(_)) && !self.route_used;
        let drained = straight || clean;
        if clean && !straight {
            super::steps::step("drain_skipped", migration);
        }
        self.place = Place::Prepared(Prepared {
            migration,
            src_epoch,
            from: from.clone(),
            state,
            snapshot,
            hw: high_water.into_iter().collect(),
            held: Vec::new(),
            route,
            ready_sent: drained,
        });
        if drained {
            self.send_frame(from, Traffic::MigrateReady { migration });
        } else {
            // A direct route elsewhere: flush through it (a route already switching has
            // its flush on the way).
            super::steps::step("drain", migration);
            self.start_switch();
        }
    }

    /// Step 4 at the source: Ready commits (model: `receive_ready`, `after_commit`).
    /// The source forwards to the target from now on, ships what it held, rebinds the
    /// asks it shipped and hints its holders (eager repair, so its entry can go).
    pub(crate) fn receive_ready(&mut self, from: &NodeId, migration: u64) {
        let Place::Frozen(f) = &self.place else {
            return;
        };
        if (f.migration, &f.target) != (migration, from) {
            return;
        }
        let place = mem::replace(
            &mut self.place,
            Place::Away {
                route: Route::Direct(from.clone()),
            },
        );
        let Place::Frozen(f) = place else {
            unreachable!()
        };
        // A new route with nothing sent on it: what the source held goes in Commit.
        self.route_used = false;
        self.epoch += 1;
        let held: Vec<QueuedMessage> = f.held.into_iter().map(bump).collect();
        let frame = Traffic::MigrateCommit {
            migration,
            epoch: self.epoch,
            held: held.clone(),
            high_water: f.hw.iter().map(|(n, s)| (n.clone(), *s)).collect(),
        };
        self.send_frame(from, frame);
        self.hinted.clear();
        for m in f.snapshot.into_iter().map(bump).chain(held) {
            if let Some((origin, request)) = m.reply {
                self.bind_ask(&origin, request, from, m.hops, false);
            }
        }
        self.out.push(Out::Moved {
            migration,
            to: from.clone(),
            epoch: self.epoch,
        });
        self.hint_holders(from);
        self.gc();
    }

    /// Step 4 failed at the target (it refused): the source resumes (model:
    /// `receive_refuse`).
    pub(crate) fn receive_refused(
        &mut self,
        from: &NodeId,
        migration: u64,
        why: WireMigrateRefusal,
    ) {
        if matches!(&self.place, Place::Frozen(f) if f.migration == migration && f.target == *from)
        {
            self.resume(MoveFailed::Refused(why));
        }
    }

    /// The driver's hand-over timeout fired: abort and resume (model: `timeout`).
    #[must_use = "the outputs must be performed"]
    pub(crate) fn timeout(&mut self, migration: u64) -> Vec<Out> {
        if let Place::Frozen(f) = &self.place
            && f.migration == migration
        {
            let target = f.target.clone();
            self.send_frame(&target, Traffic::MigrateAbort { migration });
            self.resume(MoveFailed::Timeout);
        }
        self.take_out()
    }

    /// The driver could not put the offer of `migration` on the link (too large for a
    /// frame, or no link): the target never saw it, so the source resumes at once
    /// with no `MigrateAbort`. The model's abort at any moment before Ready covers it
    /// (a timeout that fires at once).
    pub(crate) fn offer_not_sent(&mut self, migration: u64, why: String) -> Vec<Out> {
        if let Place::Frozen(f) = &self.place
            && f.migration == migration
        {
            self.resume(MoveFailed::NotSent(why));
        }
        self.take_out()
    }

    /// The source runs the actor again: its frozen mailbox, then what it held (model:
    /// `resume`).
    pub(crate) fn resume(&mut self, why: MoveFailed) {
        let place = mem::replace(&mut self.place, Place::Away { route: Route::Dead });
        let Place::Frozen(f) = place else {
            unreachable!("resume a node that is not frozen")
        };
        self.place = Place::Host { hw: f.hw };
        let messages = f.snapshot.into_iter().chain(f.held).collect();
        self.out.push(Out::Resumed {
            migration: f.migration,
            why,
            messages,
        });
    }

    /// Step 5 at the target: Commit activates the copy (model: `receive_commit`).
    pub(crate) fn receive_commit(
        &mut self,
        from: &NodeId,
        migration: u64,
        epoch: u32,
        held: Vec<QueuedMessage>,
        high_water: Vec<(NodeId, u64)>,
    ) {
        if matches!(&self.place, Place::Prepared(p) if p.migration == migration && p.from == *from)
        {
            self.activate(from, epoch, held, high_water.into_iter().collect());
        }
    }

    /// The target runs the actor: the shipped mailbox, what the source held, then what
    /// arrived here while prepared (through the owner's checks); it tells the birth
    /// node (model: `activate`).
    fn activate(&mut self, from: &NodeId, epoch: u32, held: Vec<QueuedMessage>, hw: HighWater) {
        let place = mem::replace(&mut self.place, Place::Host { hw });
        let Place::Prepared(p) = place else {
            unreachable!()
        };
        let shipped: Vec<QueuedMessage> = p.snapshot.into_iter().map(bump).chain(held).collect();
        let me = self.me.clone();
        for m in &shipped {
            if let Some((origin, request)) = &m.reply {
                self.bind_ask(origin, *request, &me, m.hops, true);
            }
        }
        self.out.push(Out::Activate {
            migration: p.migration,
            state: p.state,
            epoch,
            messages: shipped,
        });
        let (buffered, hop) = match p.route {
            Route::Switching { buffer, old } => (buffer, Some(old)),
            Route::Relocating { buffer, .. } => (buffer, None),
            Route::Direct(h) => (Vec::new(), Some(h)),
            Route::Dead => (Vec::new(), None),
        };
        // The pin this node held on its route's node (the source, or a former owner
        // that acknowledged its drain) is released: it routes nowhere now.
        if let Some(h) = hop {
            let frame = Traffic::Unpin {
                to: self.actor.token,
            };
            self.send_frame(&h, frame);
        }
        for item in buffered.into_iter().chain(p.held) {
            self.owner_take(item);
        }
        // From now on this node's senders send straight into the mailbox, unnumbered.
        // Its numbered messages all reached the source before Ready (drained), except
        // stragglers from a route through a node that died: they must not come after
        // the direct ones, so the mark for this origin jumps to the last number used.
        if let Place::Host { hw } = &mut self.place {
            let mark = hw.entry(self.me.clone()).or_default();
            *mark = (*mark).max(self.seq_out);
        }
        self.epoch = self.epoch.max(epoch);
        self.exported = true;
        self.hinted.clear();
        self.hint_due = false;
        self.pin(from);
        if self.me != self.actor.node {
            let birth = self.actor.node.clone();
            let frame = Traffic::Located {
                to: self.actor.token,
                epoch,
            };
            self.send_frame(&birth, frame);
        }
    }

    /// The source aborted: the target drops its copy (model: `receive_abort`).
    pub(crate) fn receive_abort(&mut self, from: &NodeId, migration: u64) {
        if matches!(&self.place, Place::Prepared(p) if p.migration == migration && p.from == *from)
        {
            self.discard(false);
        }
    }

    /// The target drops its copy: what it held goes on along its own route, as if it
    /// had never been prepared. If the source was lost, the asks it shipped fail back
    /// to their callers (model: `discard`).
    pub(crate) fn discard(&mut self, source_lost: bool) {
        let place = mem::replace(&mut self.place, Place::Away { route: Route::Dead });
        let Place::Prepared(p) = place else {
            self.place = place;
            return;
        };
        self.out.push(Out::Discarded {
            migration: p.migration,
        });
        if source_lost {
            for m in p.snapshot {
                self.drop_item(Item::Msg(m));
            }
        }
        let hop_lost = match &p.route {
            Route::Direct(h) | Route::Switching { old: h, .. } => self.is_lost(h),
            _ => false,
        };
        if hop_lost {
            let mut buffer = match p.route {
                Route::Switching { buffer, .. } => buffer,
                _ => Vec::new(),
            };
            buffer.extend(p.held);
            self.relocate(buffer);
            return;
        }
        self.place = Place::Away { route: p.route };
        for item in p.held {
            self.route_push(item);
        }
        if mem::take(&mut self.hint_due) {
            self.start_switch();
        }
        self.gc();
    }
}

/// A message shipped to the target makes one more hop (binding reports must grow).
fn bump(mut m: QueuedMessage) -> QueuedMessage {
    m.hops = m.hops.wrapping_add(1);
    m
}
