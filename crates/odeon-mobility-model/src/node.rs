//! What a node does with the actor's traffic: accept from local clients, take as the
//! owner, forward along its route, hint, flush and switch, relocate after a loss, and
//! drop its forwarding entry once no holder is left. The hand-over itself is in
//! `handover.rs`; both follow the numbered steps of `docs/design/mobility.md`.

use std::mem;

use crate::model::{
    Bug, Config, Frame, HOME, Item, MAX_NODES, MsgId, NodeIx, Place, Route, State, bit,
};
use crate::props::Event;

/// One transition in progress: the configuration, the state it changes, and the
/// events it fires (collected by the explorer for the `sometimes` checks, never part
/// of the state).
#[derive(Debug)]
pub(crate) struct Sim<'a> {
    pub(crate) cfg: &'a Config,
    pub(crate) st: &'a mut State,
    pub(crate) events: u16,
}

impl Sim<'_> {
    pub(crate) fn fire(&mut self, e: Event) {
        self.events |= e as u16;
    }

    pub(crate) fn bug(&self, b: Bug) -> bool {
        self.cfg.bugs.contains(&b)
    }

    /// The node a message's client lives on: where its reply goes.
    pub(crate) fn origin(&self, id: MsgId) -> NodeIx {
        self.cfg.clients[usize::from(id.client)].node
    }

    pub(crate) fn node(&mut self, n: NodeIx) -> &mut crate::model::Node {
        &mut self.st.nodes[usize::from(n)]
    }

    /// Client `c` sends its next message from its node `n`. "Accepted" means the send
    /// call returned `Ok`: the node took the message into its mailbox, held queue,
    /// route buffer or outbox. Only a node that knows the actor is lost refuses.
    pub(crate) fn client_send(&mut self, c: usize) {
        let n = self.cfg.clients[c].node;
        let index = self.st.sent[c];
        self.st.sent[c] += 1;
        let id = MsgId {
            client: c as u8,
            index,
        };
        let ask = self.cfg.clients[c].asks[usize::from(index)];
        let owner = matches!(
            self.node(n).place,
            Place::Host { .. } | Place::Frozen { .. }
        );
        if matches!(self.node(n).place, Place::Away { route: Route::Dead }) {
            // Refused at the call: a tell gets its message back, an ask fails now.
            self.st.msg(id).answered = ask;
            return;
        }
        // Items that may travel between nodes are numbered by their origin node, so
        // that a host can drop a straggler from a dead path (see `owner_take`).
        let seq = if owner {
            0
        } else {
            self.node(n).seq_out += 1;
            self.node(n).seq_out
        };
        let item = Item::Msg {
            id,
            ask,
            seq,
            hops: 0,
        };
        self.st.msg(id).accepted = true;
        self.st.hold(n, &item);
        if ask {
            self.node(n).pending.push((id, 0, 0));
        }
        match &mut self.node(n).place {
            Place::Host { mailbox, .. } => mailbox.push_back(item),
            Place::Frozen { held, .. } | Place::Prepared { held, .. } => held.push(item),
            Place::Away { .. } => self.route_push(n, item),
        }
    }

    /// Sends or queues `item` along `n`'s route (a node that does not run the actor).
    ///
    /// A relocation flush (`via != origin`) is a probe with no place in any order, so
    /// it never waits in a buffer: a switching node sends it through its old route, a
    /// node with no route answers `Gone`. (Buffered, it can wait on a switch that waits
    /// on the relocation: the checker found that cycle.)
    pub(crate) fn route_push(&mut self, n: NodeIx, item: Item) {
        let route = match &mut self.node(n).place {
            Place::Away { route } | Place::Prepared { route, .. } => route,
            _ => unreachable!("route_push on an owner"),
        };
        if let Item::Flush { origin, nonce, via } = item
            && via != origin
        {
            match *route {
                Route::Direct(h) | Route::Switching { old: h, .. } => self.forward(n, h, item),
                Route::Relocating { .. } | Route::Dead => {
                    self.st.send(n, origin, Frame::Gone { nonce, via });
                }
            }
            return;
        }
        match route {
            Route::Direct(h) => {
                let h = *h;
                self.forward(n, h, item);
            }
            Route::Switching { buffer, .. } | Route::Relocating { buffer, .. } => {
                buffer.push(item);
                self.st.hold(n, &item);
            }
            Route::Dead => self.drop_item(n, item),
        }
    }

    /// Puts `item` on the link `n -> to`; an ask's origin learns where it went.
    pub(crate) fn forward(&mut self, n: NodeIx, to: NodeIx, item: Item) {
        let item = match item {
            Item::Msg { id, ask, seq, hops } => {
                // A message on the route's link may still be on its way to an owner:
                // as a target, this node must drain before Ready (hand-over step 3).
                // A flush does not count: its origin buffers what comes after it until
                // an owner acknowledges it, wherever the actor is by then.
                self.node(n).route_used = true;
                if ask {
                    self.bind_ask(n, id, to, hops + 1, false);
                }
                Item::Msg {
                    id,
                    ask,
                    seq,
                    hops: hops + 1,
                }
            }
            flush => flush,
        };
        self.st.send(n, to, Frame::Fwd(item));
    }

    /// Tells an ask's origin where it is (reported by `n`): sent to `at`, or
    /// (`confirmed`) received by `at == n`. See [`Frame::AskAt`].
    pub(crate) fn bind_ask(&mut self, n: NodeIx, id: MsgId, at: NodeIx, hops: u8, confirmed: bool) {
        let origin = self.origin(id);
        if origin == n {
            self.rebind(n, id, n, at, hops, confirmed);
        } else {
            self.st.send(
                n,
                origin,
                Frame::AskAt {
                    id,
                    at,
                    hops,
                    confirmed,
                },
            );
        }
    }

    /// The origin `n` updates an ask's binding from `reporter`'s report. A report
    /// with more hops replaces the binding ({reporter, at}, or {at} if confirmed); a
    /// confirmation of the current hop narrows it to {at}. The origin itself never
    /// counts. Bound to a node already declared lost, the ask fails now.
    pub(crate) fn rebind(
        &mut self,
        n: NodeIx,
        id: MsgId,
        reporter: NodeIx,
        at: NodeIx,
        hops: u8,
        confirmed: bool,
    ) {
        let node = self.node(n);
        let lost = node.lost;
        let Some(p) = node.pending.iter_mut().find(|p| p.0 == id) else {
            return;
        };
        if hops > p.2 {
            p.1 = if confirmed {
                bit(at)
            } else {
                bit(reporter) | bit(at)
            };
            p.2 = hops;
        } else if hops == p.2 && confirmed {
            p.1 = bit(at);
        } else {
            return;
        }
        p.1 &= !bit(n);
        if p.1 & lost != 0 {
            self.complete(n, id, false);
        }
    }

    /// An ask's answer reaches its origin `n` (a reply, or an error).
    pub(crate) fn complete(&mut self, n: NodeIx, id: MsgId, ok: bool) {
        if ok {
            self.st.msg(id).replies += 1;
        }
        let pending = &mut self.node(n).pending;
        if let Some(i) = pending.iter().position(|p| p.0 == id) {
            pending.remove(i);
            let g = self.st.msg(id);
            g.answered = true;
            g.answered_ok = ok;
        }
    }

    /// `item` cannot go on from `n`: a tell is lost, an ask fails back to its origin, a
    /// flush tells its origin that the actor is gone.
    pub(crate) fn drop_item(&mut self, n: NodeIx, item: Item) {
        match item {
            Item::Msg { id, ask: true, .. } => {
                let origin = self.origin(id);
                if origin == n {
                    self.complete(n, id, false);
                } else {
                    self.st.send(n, origin, Frame::Reply { id, ok: false });
                }
            }
            Item::Msg { .. } => {}
            Item::Flush { origin, nonce, via } if origin != n => {
                self.st.send(n, origin, Frame::Gone { nonce, via });
            }
            Item::Flush { .. } => {}
        }
    }

    /// The owner `n` (host or frozen source) takes an item. A flush is acknowledged at
    /// once: everything its origin sent before it is already queued here, in order. A
    /// numbered message not newer than one already taken from its origin node is a
    /// straggler from a path through a node that died: dropping it keeps per-sender
    /// FIFO (a gap, never a reordering).
    pub(crate) fn owner_take(&mut self, n: NodeIx, item: Item) {
        match item {
            Item::Flush { origin, nonce, .. } => {
                let frozen_for = match self.node(n).place {
                    Place::Frozen { mv, .. } => mv,
                    _ => 0,
                };
                let node = self.node(n);
                if origin == n || node.lost & bit(origin) != 0 {
                    // Its origin is gone: nobody to acknowledge, and a pin it could
                    // never release would keep this entry forever.
                    return;
                }
                node.holders[usize::from(origin)] += 1;
                node.export = true;
                let epoch = node.epoch;
                self.st.send(
                    n,
                    origin,
                    Frame::FlushAck {
                        epoch,
                        nonce,
                        frozen_for,
                    },
                );
            }
            Item::Msg { id, seq, .. } => {
                let o = usize::from(self.origin(id));
                let straggler_check = !self.bug(Bug::NoStragglerCheck);
                let (Place::Host { hw, .. } | Place::Frozen { hw, .. }) = &mut self.node(n).place
                else {
                    unreachable!("owner_take on a non-owner")
                };
                if seq != 0 {
                    if straggler_check && seq <= hw[o] {
                        self.fire(Event::StragglerDropped);
                        self.drop_item(n, item);
                        return;
                    }
                    hw[o] = hw[o].max(seq);
                }
                self.st.hold(n, &item);
                match &mut self.node(n).place {
                    Place::Host { mailbox, .. } => mailbox.push_back(item),
                    Place::Frozen { held, .. } => held.push(item),
                    _ => unreachable!(),
                }
            }
        }
    }

    /// `to` receives an item from `from`.
    pub(crate) fn receive_item(&mut self, from: NodeIx, to: NodeIx, item: Item) {
        if let Item::Flush { origin, nonce, via } = item
            && origin == to
        {
            // A relocation flush that came back to its origin: no copy that way.
            self.receive_gone(to, nonce, via);
            return;
        }
        // The first hop's receipt is not reported: the origin's binding is already
        // {first hop} at one hop (its own report on sending), so the report would
        // change nothing, and a direct ask to the host draws no `AskAt`.
        if let Item::Msg {
            id,
            ask: true,
            hops,
            ..
        } = item
            && !(hops == 1 && from == self.origin(id))
        {
            self.bind_ask(to, id, to, hops, true);
        }
        if to == HOME && self.node(to).holders[usize::from(from)] == 0 {
            // Routes to the birth node come from refs (`WireRef` names it), not from
            // an acknowledgement: the birth node pins a sender at first contact, so
            // that hints and reflushes reach it like any holder.
            self.node(to).holders[usize::from(from)] = 1;
        }
        match &mut self.node(to).place {
            Place::Host { .. } | Place::Frozen { .. } => self.owner_take(to, item),
            Place::Prepared {
                ready_sent: false, ..
            } if matches!(item, Item::Flush { origin, via, .. } if via != origin) => {
                // A draining target holds no order for a probe (see `route_push`).
                self.route_push(to, item);
            }
            Place::Prepared { held, .. } => {
                held.push(item);
                self.st.hold(to, &item);
            }
            Place::Away { .. } => {
                if !self.node(to).export {
                    // A sender still routes here after the entry was dropped.
                    self.st.ghost.stray += 1;
                    self.drop_item(to, item);
                    return;
                }
                self.fire(Event::Forwarded);
                let is_own_flush = matches!(item, Item::Flush { origin, .. } if origin == from);
                if !is_own_flush && self.node(to).hinted & bit(from) == 0 {
                    // Lazy location repair: the sender learns it should switch.
                    self.node(to).hinted |= bit(from);
                    let at = self.route_hop(to).unwrap_or(to);
                    self.st.send(to, from, Frame::Hint { at });
                }
                self.route_push(to, item);
                self.gc(to);
            }
        }
    }

    /// Where `n`'s route leads next, if it has one.
    pub(crate) fn route_hop(&self, n: NodeIx) -> Option<NodeIx> {
        match &self.st.nodes[usize::from(n)].place {
            Place::Away { route } | Place::Prepared { route, .. } => match route {
                Route::Direct(h) => Some(*h),
                Route::Switching { old, .. } => Some(*old),
                _ => None,
            },
            _ => None,
        }
    }

    /// A hint from `from`: if `to` routes through `from`, flush and switch. (A node
    /// already switching ignores it: its flush is on its way.)
    pub(crate) fn receive_hint(&mut self, from: NodeIx, to: NodeIx, at: NodeIx) {
        enum Do {
            Switch,
            Jump,
            Later,
            Nothing,
        }
        let jump = self.bug(Bug::SwitchWithoutFlush);
        let what = match &self.node(to).place {
            Place::Away {
                route: Route::Direct(h),
            } if *h == from => {
                if jump {
                    Do::Jump
                } else {
                    Do::Switch
                }
            }
            Place::Prepared {
                route: Route::Direct(h),
                ..
            } if *h == from => Do::Later,
            _ => Do::Nothing,
        };
        match what {
            Do::Switch => self.start_switch(to),
            Do::Jump => {
                if at != to {
                    self.node(to).place = Place::Away {
                        route: Route::Direct(at),
                    };
                }
            }
            Do::Later => self.node(to).hint_due = true,
            Do::Nothing => {}
        }
    }

    /// Sends `n`'s flush again through its old route, with a new nonce: called when
    /// `n` declares any node lost, since its flush may have been lost with that node.
    /// The old route's node still forwards it: `n`'s pin on it is not released yet.
    pub(crate) fn reflush(&mut self, n: NodeIx) {
        let node = self.node(n);
        let (Place::Away { route } | Place::Prepared { route, .. }) = &node.place else {
            return;
        };
        let Route::Switching { old, .. } = *route else {
            return;
        };
        if node.lost & bit(old) != 0 {
            return;
        }
        node.nonce += 1;
        let nonce = node.nonce;
        self.st.send(
            n,
            old,
            Frame::Fwd(Item::Flush {
                origin: n,
                nonce,
                via: n,
            }),
        );
    }

    /// `n` leaves its direct route: a flush goes first, new items wait for its ack.
    pub(crate) fn start_switch(&mut self, n: NodeIx) {
        let node = self.node(n);
        let (Place::Away { route } | Place::Prepared { route, .. }) = &mut node.place else {
            return;
        };
        let Route::Direct(h) = *route else { return };
        node.nonce += 1;
        node.hint_due = false;
        let nonce = node.nonce;
        *route = Route::Switching {
            old: h,
            buffer: Vec::new(),
        };
        self.st.send(
            n,
            h,
            Frame::Fwd(Item::Flush {
                origin: n,
                nonce,
                via: n,
            }),
        );
    }

    /// The owner `from` acknowledged `to`'s flush `nonce`.
    pub(crate) fn receive_flush_ack(
        &mut self,
        from: NodeIx,
        to: NodeIx,
        epoch: u8,
        nonce: u8,
        frozen_for: u8,
    ) {
        let node = self.node(to);
        let current = node.nonce == nonce;
        let (prepared, route) = match &mut node.place {
            Place::Away { route } => (None, route),
            Place::Prepared {
                route,
                mv,
                src_epoch,
                from: src,
                ready_sent,
                ..
            } => (Some((*mv, *src_epoch, *src, ready_sent)), route),
            _ => (None, &mut Route::Dead),
        };
        if let Route::Relocating { .. } = route {
            if current {
                self.finish_relocation(to, Some(from));
            } else {
                self.st.send(to, from, Frame::Unpin);
            }
            return;
        }
        let Route::Switching { buffer, old } = route else {
            // Stale: release the pin the acknowledgement took.
            self.st.send(to, from, Frame::Unpin);
            return;
        };
        if !current {
            self.st.send(to, from, Frame::Unpin);
            return;
        }
        let buffer = mem::take(buffer);
        let old = *old;
        *route = Route::Direct(from);
        node.epoch = node.epoch.max(epoch);
        // The owner's acknowledgement proves everything sent on the old route is in
        // the actor's custody; the buffer, forwarded below, marks the new one used.
        node.route_used = false;
        // A prepared target is drained only when the hand-over's source, frozen for
        // this move, acknowledged: then everything it sent, the buffer included (sent
        // just below, ahead of Ready on the same link), is queued at the source. An
        // earlier owner (its epoch is older: it was frozen when the flush reached it,
        // and has moved the actor on since) only ends this switch: flush again (the
        // next owner's epoch is newer, so this ends). Any other owner means the source
        // left this move (it cannot commit without Ready): drop the copy now rather
        // than wait for its Abort.
        let (ready, again, stale) = match prepared {
            Some((mv, _, src, sent)) if src == from && frozen_for == mv => (
                (!mem::replace(sent, true)).then_some((mv, src)),
                false,
                false,
            ),
            Some((_, src_epoch, _, _)) if epoch < src_epoch => {
                (None, !self.bug(Bug::ReadyWithoutDrain), false)
            }
            Some(_) => (None, false, true),
            None => (None, false, false),
        };
        self.fire(Event::Switched);
        // The old route's node may forget this one now (its pin is released only
        // here, not when the flush passed: a flush lost with a crashed node is sent
        // again through the same node, which must still forward it).
        self.st.send(to, old, Frame::Unpin);
        for item in buffer {
            self.forward(to, from, item);
        }
        // A prepared target whose own route is now drained into the source answers
        // Ready (hand-over step 3).
        if let Some((mv, src)) = ready {
            self.st.send(to, src, Frame::Ready { mv });
        }
        if again {
            self.start_switch(to);
        }
        if stale {
            self.discard(to, false);
        }
    }

    /// The birth node's directory hears of a new host: it switches like on a hint.
    pub(crate) fn receive_located(&mut self, from: NodeIx, to: NodeIx, epoch: u8) {
        let node = self.node(to);
        if epoch <= node.epoch {
            return;
        }
        match &node.place {
            Place::Away {
                route: Route::Direct(h),
            } if *h != from => self.start_switch(to),
            Place::Away {
                route: Route::Direct(_),
            } => node.epoch = epoch,
            _ => {}
        }
    }

    /// Drops `n`'s forwarding entry once no other node routes through it (its holder
    /// pins are all released) and it is not the birth node.
    pub(crate) fn gc(&mut self, n: NodeIx) {
        let node = self.node(n);
        if n != HOME
            && node.export
            && matches!(node.place, Place::Away { .. })
            && node.holders == [0; MAX_NODES]
        {
            node.export = false;
            self.fire(Event::ForwarderCollected);
        }
    }

    /// Hints every node that holds a pin on `n` (it routes through `n`).
    pub(crate) fn hint_holders(&mut self, n: NodeIx, at: NodeIx) {
        for p in 0..self.cfg.nodes {
            if self.node(n).holders[usize::from(p)] > 0 && p != n {
                self.node(n).hinted |= bit(p);
                self.st.send(n, p, Frame::Hint { at });
            }
        }
    }
}
