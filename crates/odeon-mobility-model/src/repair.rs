//! Faults: a node crashes, the others declare it lost one by one, and whoever routed
//! through it relocates the actor by asking every node (the mechanism that also
//! survives the birth node's death: no single directory is needed to find the actor).

use std::mem;

use crate::model::{Frame, Item, NodeIx, Place, Route, bit};
use crate::node::Sim;
use crate::props::Event;

impl Sim<'_> {
    /// Node `k` stops. Frames already sent by it may still be delivered until their
    /// receiver declares it lost (like bytes in a socket buffer); frames to it are gone.
    pub(crate) fn crash(&mut self, k: NodeIx) {
        if self.st.has_actor_custody(k) {
            self.st.ghost.actor_at_risk = true;
        }
        if let Some((s, t)) = self.st.ghost.commit_in_flight
            && (s == k || t == k)
        {
            self.st.ghost.commit_in_flight = None;
        }
        self.st.ghost.crashes += 1;
        if matches!(self.node(k).place, crate::model::Place::Frozen { .. }) {
            // The move dies with its source: its caller sees a failure (or is gone).
            self.st.ghost.failed += 1;
        }
        self.node(k).alive = false;
        for j in 0..self.cfg.nodes {
            if j != k {
                self.st.link(j, k).clear();
            }
        }
    }

    /// Node `n` declares `k` lost: its link from `k` is closed (what was not read yet
    /// is dropped), asks bound to `k` fail, a hand-over with `k` ends, and routes
    /// through `k` relocate.
    pub(crate) fn detect(&mut self, n: NodeIx, k: NodeIx) {
        self.node(n).lost |= bit(k);
        self.st.link(k, n).clear();
        self.node(n).holders[usize::from(k)] = 0;
        let failed: Vec<_> = self
            .node(n)
            .pending
            .iter()
            .filter(|p| p.1 & bit(k) != 0)
            .map(|p| p.0)
            .collect();
        for id in failed {
            self.complete(n, id, false);
        }
        let hop = self.route_hop(n);
        match &self.node(n).place {
            Place::Frozen { target, .. } if *target == k => {
                // Hand-over step 2 failed: the source still has everything.
                self.resume(n);
                self.st.ghost.failed += 1;
                self.fire(Event::ResumedAtSource);
            }
            Place::Prepared { from, .. } if *from == k => self.discard(n, true),
            Place::Prepared {
                ready_sent: false,
                mv,
                from,
                ..
            } if hop == Some(k) => {
                // Draining through a node that died: give up the hand-over.
                let (mv, from) = (*mv, *from);
                self.st.send(n, from, Frame::Refuse { mv });
                self.discard(n, false);
            }
            _ => {}
        }
        let lost_hop = self.route_hop(n) == Some(k);
        if let Place::Away { route } = &mut self.node(n).place {
            match route {
                Route::Direct(_) | Route::Switching { .. } if lost_hop => {
                    let buffer = match mem::replace(route, Route::Dead) {
                        Route::Switching { buffer, .. } => buffer,
                        _ => Vec::new(),
                    };
                    self.relocate(n, buffer);
                }
                Route::Relocating { waiting, .. } => {
                    *waiting &= !bit(k);
                    if *waiting == 0 {
                        self.finish_relocation(n, None);
                    }
                }
                _ => {}
            }
        }
        self.reflush(n);
        let ttl = self.cfg.nodes;
        self.pass_reflush(n, ttl);
        self.gc(n);
    }

    /// Sends `Reflush` to every node holding a pin on `n`.
    fn pass_reflush(&mut self, n: NodeIx, ttl: u8) {
        for p in 0..self.cfg.nodes {
            if p != n && self.node(n).holders[usize::from(p)] > 0 {
                self.st.send(n, p, Frame::Reflush { ttl });
            }
        }
    }

    /// A `Reflush` from `from`: relevant only if `to` routes through `from`.
    pub(crate) fn receive_reflush(&mut self, from: NodeIx, to: NodeIx, ttl: u8) {
        let node = self.node(to);
        if let Place::Away {
            route: Route::Relocating { waiting, .. },
        } = &node.place
        {
            // A relocation flush through `from` may have died: send it again (the
            // extra pin is released with the others at the end).
            if *waiting & bit(from) != 0 {
                let nonce = node.nonce;
                self.st.send(to, from, Frame::Locate { nonce, again: true });
            }
            return;
        }
        if self.route_hop(to) != Some(from) {
            return;
        }
        self.reflush(to);
        if ttl > 0 {
            self.pass_reflush(to, ttl - 1);
        }
    }

    /// `n`'s route died: a flush goes through every node it does not know to be lost.
    /// Each of them forwards it along its own route, so the flush follows the actor
    /// wherever it moved meanwhile, and only the owner acknowledges it. (Asking nodes
    /// "is it here?" instead misses an actor that moves from a node not yet asked to
    /// one already asked; letting forwarders answer makes cycles of stale routes.)
    pub(crate) fn relocate(&mut self, n: NodeIx, buffer: Vec<Item>) {
        let nodes = self.cfg.nodes;
        let node = self.node(n);
        node.nonce += 1;
        let nonce = node.nonce;
        let waiting = (0..nodes)
            .filter(|&j| j != n && node.lost & bit(j) == 0)
            .fold(0, |m, j| m | bit(j));
        node.place = Place::Away {
            route: Route::Relocating { buffer, waiting },
        };
        self.fire(Event::Relocating);
        for j in 0..nodes {
            if waiting & bit(j) != 0 {
                self.st.send(
                    n,
                    j,
                    Frame::Locate {
                        nonce,
                        again: false,
                    },
                );
            }
        }
        if waiting == 0 {
            self.finish_relocation(n, None);
        }
    }

    /// `to` passes `from`'s relocation flush on, pinning `from` until it is done (so
    /// that a `Reflush` reaches it if the flush dies with a node further on).
    pub(crate) fn receive_locate(&mut self, from: NodeIx, to: NodeIx, nonce: u8, again: bool) {
        let node = self.node(to);
        if let Place::Away {
            route: Route::Relocating { .. } | Route::Dead,
        } = node.place
        {
            // No route here either: this path has no copy. (Buffering it instead lets
            // two relocating nodes wait for each other.)
            self.st.send(to, from, Frame::Gone { nonce, via: to });
            return;
        }
        if !again {
            node.holders[usize::from(from)] += 1;
        }
        node.export = true;
        let item = Item::Flush {
            origin: from,
            nonce,
            via: to,
        };
        match &mut self.node(to).place {
            Place::Host { .. } | Place::Frozen { .. } => self.owner_take(to, item),
            Place::Prepared {
                held,
                ready_sent: true,
                ..
            } => held.push(item),
            Place::Prepared { .. } | Place::Away { .. } => self.route_push(to, item),
        }
    }

    /// Ends `n`'s relocation: the owner `acked` is the new route, or, with no
    /// acknowledgement on any path, the actor is lost. Every node the flush was sent
    /// through pinned `n`: all those pins are released (the owner keeps the pin of its
    /// acknowledgement).
    pub(crate) fn finish_relocation(&mut self, n: NodeIx, acked: Option<NodeIx>) {
        let nodes = self.cfg.nodes;
        let lost = self.node(n).lost;
        let Place::Away { route } = &mut self.node(n).place else {
            unreachable!("only a node without the actor relocates")
        };
        let Route::Relocating { buffer, .. } = mem::replace(route, Route::Dead) else {
            unreachable!("finishing a relocation that is not under way")
        };
        if let Some(b) = acked {
            *route = Route::Direct(b);
        }
        for j in (0..nodes).filter(|&j| j != n && lost & bit(j) == 0) {
            self.st.send(n, j, Frame::Unpin);
        }
        if let Some(b) = acked {
            self.fire(Event::Relocated);
            for item in buffer {
                self.forward(n, b, item);
            }
        } else {
            self.fire(Event::ActorLost);
            for item in buffer {
                self.drop_item(n, item);
            }
        }
    }

    /// `to`'s flush through `via` reached a dead route: for a switch, the actor is
    /// gone; for a relocation, that path has no copy.
    pub(crate) fn receive_gone(&mut self, to: NodeIx, nonce: u8, via: NodeIx) {
        let current = self.node(to).nonce == nonce;
        let Place::Away { route } = &mut self.node(to).place else {
            return;
        };
        match route {
            Route::Switching { .. } if current => {
                let Route::Switching { buffer, .. } = mem::replace(route, Route::Dead) else {
                    unreachable!()
                };
                for item in buffer {
                    self.drop_item(to, item);
                }
            }
            Route::Relocating { waiting, .. } if current && *waiting & bit(via) != 0 => {
                *waiting &= !bit(via);
                if *waiting == 0 {
                    self.finish_relocation(to, None);
                }
            }
            _ => {}
        }
    }

    /// A pin on `to` held by `from` is released.
    pub(crate) fn receive_unpin(&mut self, from: NodeIx, to: NodeIx) {
        let h = &mut self.node(to).holders[usize::from(from)];
        *h = h.saturating_sub(1);
        self.gc(to);
    }
}
