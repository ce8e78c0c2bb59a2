//! Steps 7–10: what a node does with the actor's traffic when it does not run it
//! (forward along its route, hint, flush and switch, collect its entry) and when it
//! owns it (take a message through the straggler check, acknowledge a flush).
//!
//! A direct port of the model's `node.rs` (`route_push`, `forward`, `bind_ask`,
//! `drop_item`, `owner_take`, `receive_item`, `route_hop`, `receive_hint`,
//! `start_switch`, `receive_flush_ack`, `receive_located`, `gc`, `hint_holders`) and
//! `repair.rs::receive_unpin`; each function names its model twin.

use std::mem;

use super::entry::{Item, MobileEntry, Out, Place, Route, failed_reply};
use crate::wire::{NodeId, Traffic};

impl MobileEntry {
    /// Sends or queues `item` along this node's route (model: `route_push`). A
    /// relocation probe (`via != origin`) has no place in any order and never waits
    /// in a buffer: a switching node sends it through its old route, a node with no
    /// route answers `Gone` (buffered, it can wait on a switch that waits on the
    /// relocation: the model found that cycle).
    pub(crate) fn route_push(&mut self, item: Item) {
        let route = match &mut self.place {
            Place::Away { route } => route,
            Place::Prepared(p) => &mut p.route,
            _ => unreachable!("route_push on an owner"),
        };
        if let Item::Flush { origin, nonce, via } = &item
            && via != origin
        {
            match route {
                Route::Direct(h) | Route::Switching { old: h, .. } => {
                    let h = h.clone();
                    self.forward(&h, item);
                }
                Route::Relocating { .. } | Route::Dead => {
                    let frame = Traffic::Gone {
                        to: self.actor.token,
                        nonce: *nonce,
                        via: via.clone(),
                    };
                    let origin = origin.clone();
                    self.send_frame(&origin, frame);
                }
            }
            return;
        }
        match route {
            Route::Direct(h) => {
                let h = h.clone();
                self.forward(&h, item);
            }
            Route::Switching { buffer, .. } | Route::Relocating { buffer, .. } => buffer.push(item),
            Route::Dead => self.drop_item(item),
        }
    }

    /// Puts `item` on the link to `to`, one hop more; an ask's origin learns where it
    /// went (model: `forward`).
    pub(crate) fn forward(&mut self, to: &NodeId, item: Item) {
        let item = match item {
            Item::Msg(mut m) => {
                // A message on the route's link may still be on its way to an owner:
                // as a target, this node must drain before Ready (step 3). A flush
                // does not count: its origin buffers what comes after it until an
                // owner acknowledges it, wherever the actor is by then.
                self.route_used = true;
                m.hops = m.hops.wrapping_add(1);
                if let Some((origin, request)) = m.reply.clone() {
                    self.bind_ask(&origin, request, to, m.hops, false);
                }
                Item::Msg(m)
            }
            flush => flush,
        };
        let frame = self.item_frame(item);
        self.send_frame(to, frame);
    }

    /// Tells an ask's origin where it is: sent to `at`, or received by `at == me`
    /// (`confirmed`) (model: `bind_ask`; the binding table itself is the node's).
    pub(crate) fn bind_ask(
        &mut self,
        origin: &NodeId,
        request: u64,
        at: &NodeId,
        hops: u8,
        confirmed: bool,
    ) {
        if *origin == self.me {
            self.out.push(Out::Rebind {
                request,
                reporter: self.me.clone(),
                at: at.clone(),
                hops,
                confirmed,
            });
        } else {
            let frame = Traffic::AskAt {
                request,
                at: at.clone(),
                hops,
                confirmed,
            };
            self.send_frame(origin, frame);
        }
    }

    /// `item` cannot go on from here: a tell is lost, an ask fails back to its origin,
    /// a flush tells its origin the actor is gone that way (model: `drop_item`).
    pub(crate) fn drop_item(&mut self, item: Item) {
        match item {
            Item::Msg(m) => {
                if let Some((origin, request)) = m.reply {
                    if origin == self.me {
                        self.out.push(Out::FailAsk { request });
                    } else {
                        self.send_frame(&origin, failed_reply(request));
                    }
                }
            }
            Item::Flush { origin, nonce, via } if origin != self.me => {
                let frame = Traffic::Gone {
                    to: self.actor.token,
                    nonce,
                    via,
                };
                self.send_frame(&origin, frame);
            }
            Item::Flush { .. } => {}
        }
    }

    /// The owner (host or frozen source) takes an item (model: `owner_take`). A flush
    /// is acknowledged at once: everything its origin sent before it is queued here,
    /// in order. A numbered message not newer than one already taken from its origin
    /// is a straggler from a path through a node that died (step 9): dropping it
    /// leaves a gap, never a reordering.
    pub(crate) fn owner_take(&mut self, item: Item) {
        match item {
            Item::Flush { origin, nonce, .. } => {
                let frozen_for = match &self.place {
                    Place::Frozen(f) => Some(f.migration),
                    _ => None,
                };
                if origin == self.me || self.is_lost(&origin) {
                    // Its origin is gone: nobody to acknowledge, and a pin it could
                    // never release would keep this entry forever.
                    return;
                }
                self.pin(&origin);
                self.exported = true;
                let frame = Traffic::FlushAck {
                    to: self.actor.token,
                    nonce,
                    epoch: self.epoch,
                    frozen_for,
                };
                self.send_frame(&origin, frame);
            }
            Item::Msg(m) => {
                let hw = match &mut self.place {
                    Place::Host { hw } => hw,
                    Place::Frozen(f) => &mut f.hw,
                    _ => unreachable!("owner_take on a non-owner"),
                };
                if m.seq != 0 {
                    let mark = hw.entry(m.origin.clone()).or_default();
                    if m.seq <= *mark {
                        self.out.push(Out::Straggler {
                            origin: m.origin.clone(),
                            seq: m.seq,
                        });
                        self.drop_item(Item::Msg(m));
                        return;
                    }
                    *mark = m.seq;
                }
                match &mut self.place {
                    Place::Host { .. } => self.out.push(Out::Deliver(m)),
                    Place::Frozen(f) => f.held.push(m),
                    _ => unreachable!(),
                }
            }
        }
    }

    /// An item arrives from `from` (model: `receive_item`).
    pub(crate) fn receive_item(&mut self, from: &NodeId, item: Item) {
        if let Item::Flush { origin, nonce, via } = &item
            && *origin == self.me
        {
            // A relocation probe that came back to its origin: no copy that way.
            let (nonce, via) = (*nonce, via.clone());
            self.receive_gone(nonce, &via);
            return;
        }
        // The first hop's receipt is not reported: the origin's binding already names
        // this node alone (`binding.rs`), so a direct ask draws no `AskAt`.
        if let Item::Msg(m) = &item
            && let Some((origin, request)) = m.reply.clone()
            && !(m.hops == 1 && origin == *from)
        {
            let (me, hops) = (self.me.clone(), m.hops);
            self.bind_ask(&origin, request, &me, hops, true);
        }
        if self.me == self.actor.node && !self.holders.contains_key(from) && !self.is_lost(from) {
            // Routes to the birth node come from refs (every `WireRef` names it), not
            // from an acknowledgement: it pins a sender at first contact, so that its
            // hints and reflushes reach it like any holder (step 7).
            self.pin(from);
        }
        match &mut self.place {
            Place::Host { .. } | Place::Frozen(_) => self.owner_take(item),
            Place::Prepared(p) => {
                let probe = matches!(&item, Item::Flush { origin, via, .. } if via != origin);
                if !p.ready_sent && probe {
                    // A draining target holds no order for a probe (see `route_push`).
                    self.route_push(item);
                } else {
                    p.held.push(item);
                }
            }
            Place::Away { .. } => {
                if !self.exported {
                    // A sender still routes here after the entry was dropped.
                    self.out.push(Out::Stray { from: from.clone() });
                    self.drop_item(item);
                    return;
                }
                let own_flush = matches!(&item, Item::Flush { origin, .. } if origin == from);
                if !own_flush && !self.hinted.contains(from) {
                    // Lazy location repair: the sender learns it should switch.
                    self.hinted.insert(from.clone());
                    let at = self.route_hop().unwrap_or_else(|| self.me.clone());
                    let frame = Traffic::Hint {
                        to: self.actor.token,
                        at,
                        epoch: self.epoch,
                    };
                    self.send_frame(from, frame);
                }
                self.route_push(item);
                self.gc();
            }
        }
    }

    /// Where this node's route leads next, if it has one (model: `route_hop`).
    pub(crate) fn route_hop(&self) -> Option<NodeId> {
        let route = match &self.place {
            Place::Away { route } => route,
            Place::Prepared(p) => &p.route,
            _ => return None,
        };
        match route {
            Route::Direct(h) | Route::Switching { old: h, .. } => Some(h.clone()),
            _ => None,
        }
    }

    /// A hint from `from`: if this node routes straight through it, flush and switch
    /// (model: `receive_hint`). A node already switching ignores it (its flush is on
    /// its way); a prepared one switches if the hand-over is dropped.
    pub(crate) fn receive_hint(&mut self, from: &NodeId) {
        match &self.place {
            Place::Away {
                route: Route::Direct(h),
            } if h == from => self.start_switch(),
            Place::Prepared(p) if p.route == Route::Direct(from.clone()) => self.hint_due = true,
            _ => {}
        }
    }

    /// This node leaves its direct route: a flush goes first, later items wait for
    /// the owner's acknowledgement (model: `start_switch`).
    pub(crate) fn start_switch(&mut self) {
        let route = match &mut self.place {
            Place::Away { route } => route,
            Place::Prepared(p) => &mut p.route,
            _ => return,
        };
        let Route::Direct(h) = route else { return };
        let h = h.clone();
        *route = Route::Switching {
            old: h.clone(),
            buffer: Vec::new(),
        };
        self.nonce += 1;
        self.hint_due = false;
        let flush = Item::Flush {
            origin: self.me.clone(),
            nonce: self.nonce,
            via: self.me.clone(),
        };
        let frame = self.item_frame(flush);
        self.send_frame(&h, frame);
    }

    /// The owner `from` acknowledged this node's flush `nonce` (model:
    /// `receive_flush_ack`).
    pub(crate) fn receive_flush_ack(
        &mut self,
        from: &NodeId,
        epoch: u32,
        nonce: u64,
        frozen_for: Option<u64>,
    ) {
        let current = self.nonce == nonce;
        let unpin = Traffic::Unpin {
            to: self.actor.token,
        };
        let (prepared, route) = match &mut self.place {
            Place::Away { route } => (None, route),
            Place::Prepared(p) => (
                Some((p.migration, p.src_epoch, p.from.clone(), &mut p.ready_sent)),
                &mut p.route,
            ),
            _ => {
                // Stale (this node owns the actor now): release the pin it took.
                self.send_frame(from, unpin);
                return;
            }
        };
        if let Route::Relocating { .. } = route {
            if current {
                self.finish_relocation(Some(from.clone()));
            } else {
                self.send_frame(from, unpin);
            }
            return;
        }
        let Route::Switching { buffer, old } = route else {
            self.send_frame(from, unpin);
            return;
        };
        if !current {
            self.send_frame(from, unpin);
            return;
        }
        let buffer = mem::take(buffer);
        let old = old.clone();
        *route = Route::Direct(from.clone());
        // The owner's acknowledgement proves everything sent on the old route is in
        // the actor's custody; the buffer, forwarded below, marks the new one used.
        self.route_used = false;
        // A prepared target is drained only when the hand-over's source, frozen for
        // this move, acknowledged: then everything it sent, the buffer included (sent
        // just below, ahead of Ready on the same link), is queued at the source. An
        // earlier owner (older epoch: frozen for an earlier move) only ends this
        // switch: flush again. Any other owner means the source left this move (it
        // cannot commit without Ready): drop the copy now.
        let (ready, again, stale) = match prepared {
            Some((mv, _, src, sent)) if src == *from && frozen_for == Some(mv) => {
                let first = !mem::replace(sent, true);
                (first.then_some((mv, src)), false, false)
            }
            Some((_, src_epoch, _, _)) if epoch < src_epoch => (None, true, false),
            Some(_) => (None, false, true),
            None => (None, false, false),
        };
        self.epoch = self.epoch.max(epoch);
        // The old route's node may forget this one now (only now: a flush lost with a
        // crashed node is sent again through the same node, which must still forward).
        self.send_frame(&old, unpin);
        for item in buffer {
            self.forward(from, item);
        }
        if let Some((migration, src)) = ready {
            self.send_frame(&src, Traffic::MigrateReady { migration });
        }
        if again {
            self.start_switch();
        }
        if stale {
            self.discard(false);
        }
    }

    /// The birth node's directory hears of a new host (step 6; model:
    /// `receive_located`): it switches as on a hint.
    pub(crate) fn receive_located(&mut self, from: &NodeId, epoch: u32) {
        if epoch <= self.epoch {
            return;
        }
        match &self.place {
            Place::Away {
                route: Route::Direct(h),
            } if h != from => self.start_switch(),
            Place::Away {
                route: Route::Direct(_),
            } => self.epoch = epoch,
            _ => {}
        }
    }

    /// Drops this node's forwarding entry once no holder pins it and it is not the
    /// birth node (step 10; model: `gc`).
    pub(crate) fn gc(&mut self) {
        if self.me != self.actor.node
            && self.exported
            && matches!(self.place, Place::Away { .. })
            && self.pins() == 0
        {
            self.exported = false;
            self.out.push(Out::Collected);
        }
    }

    /// Hints every holder (eager repair at commit; model: `hint_holders`).
    pub(crate) fn hint_holders(&mut self, at: &NodeId) {
        let holders: Vec<NodeId> = self
            .holders
            .iter()
            .filter(|(p, n)| **n > 0 && **p != self.me)
            .map(|(p, _)| p.clone())
            .collect();
        for p in holders {
            self.hinted.insert(p.clone());
            let frame = Traffic::Hint {
                to: self.actor.token,
                at: at.clone(),
                epoch: self.epoch,
            };
            self.send_frame(&p, frame);
        }
    }

    /// `from` released one pin (model: `receive_unpin`).
    pub(crate) fn receive_unpin(&mut self, from: &NodeId) {
        if let Some(n) = self.holders.get_mut(from) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.holders.remove(from);
            }
        }
        self.gc();
    }
}
