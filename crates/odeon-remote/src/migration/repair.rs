//! Step 11 and the loss half of step 10: a node declares a peer lost, routes through
//! it relocate by sending a probe through every live node, `Reflush` re-sends flushes
//! that may have died with it.
//!
//! A direct port of the model's `repair.rs` (`detect`, `pass_reflush`,
//! `receive_reflush`, `relocate`, `receive_locate`, `finish_relocation`,
//! `receive_gone`) and `node.rs::reflush`.

use std::collections::BTreeSet;
use std::mem;

use super::entry::{Item, MobileEntry, MoveFailed, Out, Place, Route};
use crate::wire::{NodeId, Traffic, WireMigrateRefusal};

impl MobileEntry {
    /// The node's membership declared `k` lost (model: `detect`). Its pins here go, a
    /// hand-over with it ends, routes through it relocate, and flushes that may have
    /// died with it are sent again.
    #[must_use = "the outputs must be performed"]
    pub(crate) fn node_lost(&mut self, k: &NodeId) -> Vec<Out> {
        if !self.lost.insert(k.clone()) {
            return self.take_out();
        }
        self.holders.remove(k);
        let hop = self.route_hop();
        match &self.place {
            Place::Frozen(f) if f.target == *k => self.resume(MoveFailed::TargetLost),
            Place::Prepared(p) if p.from == *k => self.discard(true),
            Place::Prepared(p) if !p.ready_sent && hop.as_ref() == Some(k) => {
                // Draining through a node that died: give up the hand-over.
                let (migration, from) = (p.migration, p.from.clone());
                let why = WireMigrateRefusal::Unreachable(k.clone());
                self.send_frame(&from, Traffic::MigrateRefused { migration, why });
                self.discard(false);
            }
            _ => {}
        }
        let lost_hop = self.route_hop().as_ref() == Some(k);
        if let Place::Away { route } = &mut self.place {
            match route {
                Route::Direct(_) | Route::Switching { .. } if lost_hop => {
                    let buffer = match mem::replace(route, Route::Dead) {
                        Route::Switching { buffer, .. } => buffer,
                        _ => Vec::new(),
                    };
                    self.relocate(buffer);
                }
                Route::Relocating { waiting, .. } => {
                    waiting.remove(k);
                    if waiting.is_empty() {
                        self.finish_relocation(None);
                    }
                }
                _ => {}
            }
        }
        self.reflush();
        let ttl = u8::try_from(self.peers.len() + 1).unwrap_or(u8::MAX);
        self.pass_reflush(ttl);
        self.gc();
        self.take_out()
    }

    /// Sends this node's flush again through its old route, with a new nonce: its
    /// flush may have been lost with a node just declared lost (model: `reflush`).
    pub(crate) fn reflush(&mut self) {
        let route = match &self.place {
            Place::Away { route } => route,
            Place::Prepared(p) => &p.route,
            _ => return,
        };
        let Route::Switching { old, .. } = route else {
            return;
        };
        if self.is_lost(old) {
            return;
        }
        let old = old.clone();
        self.nonce += 1;
        let flush = Item::Flush {
            origin: self.me.clone(),
            nonce: self.nonce,
            via: self.me.clone(),
        };
        let frame = self.item_frame(flush);
        self.send_frame(&old, frame);
    }

    /// Sends `Reflush` to every holder (model: `pass_reflush`).
    fn pass_reflush(&mut self, ttl: u8) {
        let holders: Vec<NodeId> = self
            .holders
            .keys()
            .filter(|p| **p != self.me)
            .cloned()
            .collect();
        for p in holders {
            let frame = Traffic::Reflush {
                to: self.actor.token,
                ttl,
            };
            self.send_frame(&p, frame);
        }
    }

    /// A `Reflush` from `from`: relevant only if this node routes through it (model:
    /// `receive_reflush`).
    pub(crate) fn receive_reflush(&mut self, from: &NodeId, ttl: u8) {
        if let Place::Away {
            route: Route::Relocating { waiting, .. },
        } = &self.place
        {
            // A probe through `from` may have died: send it again (the extra pin is
            // released with the others at the end).
            if waiting.contains(from) {
                let frame = Traffic::Locate {
                    to: self.actor.token,
                    nonce: self.nonce,
                    again: true,
                };
                self.send_frame(from, frame);
            }
            return;
        }
        if self.route_hop().as_ref() != Some(from) {
            return;
        }
        self.reflush();
        if ttl > 0 {
            self.pass_reflush(ttl - 1);
        }
    }

    /// This node's route died: a probe goes through every node it does not know to be
    /// lost; only the owner acknowledges it (model: `relocate`).
    pub(crate) fn relocate(&mut self, buffer: Vec<Item>) {
        self.nonce += 1;
        let waiting: BTreeSet<NodeId> = self
            .peers
            .iter()
            .filter(|j| !self.lost.contains(*j))
            .cloned()
            .collect();
        self.place = Place::Away {
            route: Route::Relocating {
                buffer,
                waiting: waiting.clone(),
            },
        };
        for j in &waiting {
            let frame = Traffic::Locate {
                to: self.actor.token,
                nonce: self.nonce,
                again: false,
            };
            self.send_frame(j, frame);
        }
        if waiting.is_empty() {
            self.finish_relocation(None);
        }
    }

    /// Passes `from`'s relocation probe on, pinning `from` until it is done (model:
    /// `receive_locate`).
    pub(crate) fn receive_locate(&mut self, from: &NodeId, nonce: u64, again: bool) {
        if let Place::Away {
            route: Route::Relocating { .. } | Route::Dead,
        } = self.place
        {
            // No route here either. (Buffering the probe instead lets two relocating
            // nodes wait for each other.)
            let frame = Traffic::Gone {
                to: self.actor.token,
                nonce,
                via: self.me.clone(),
            };
            self.send_frame(from, frame);
            return;
        }
        if !again {
            self.pin(from);
        }
        self.exported = true;
        let item = Item::Flush {
            origin: from.clone(),
            nonce,
            via: self.me.clone(),
        };
        match &mut self.place {
            Place::Host { .. } | Place::Frozen(_) => self.owner_take(item),
            Place::Prepared(p) if p.ready_sent => p.held.push(item),
            Place::Prepared(_) | Place::Away { .. } => self.route_push(item),
        }
    }

    /// Ends this node's relocation: the owner `acked` is the new route or, with no
    /// acknowledgement on any path, the actor is lost. Every probe's node pinned this
    /// one: all those pins are released (model: `finish_relocation`).
    pub(crate) fn finish_relocation(&mut self, acked: Option<NodeId>) {
        let Place::Away { route } = &mut self.place else {
            unreachable!("only a node without the actor relocates")
        };
        let Route::Relocating { buffer, .. } = mem::replace(route, Route::Dead) else {
            unreachable!("finishing a relocation that is not under way")
        };
        if let Some(b) = &acked {
            *route = Route::Direct(b.clone());
        }
        let live: Vec<NodeId> = self
            .peers
            .iter()
            .filter(|j| !self.lost.contains(*j))
            .cloned()
            .collect();
        for j in live {
            let frame = Traffic::Unpin {
                to: self.actor.token,
            };
            self.send_frame(&j, frame);
        }
        match acked {
            Some(b) => {
                for item in buffer {
                    self.forward(&b, item);
                }
            }
            None => {
                self.out.push(Out::ActorLost);
                for item in buffer {
                    self.drop_item(item);
                }
            }
        }
    }

    /// This node's flush through `via` reached a dead route (model: `receive_gone`):
    /// for a switch, the actor is gone; for a relocation, that path has no copy.
    pub(crate) fn receive_gone(&mut self, nonce: u64, via: &NodeId) {
        let current = self.nonce == nonce;
        let Place::Away { route } = &mut self.place else {
            return;
        };
        match route {
            Route::Switching { .. } if current => {
                let Route::Switching { buffer, .. } = mem::replace(route, Route::Dead) else {
                    unreachable!()
                };
                self.out.push(Out::ActorLost);
                for item in buffer {
                    self.drop_item(item);
                }
            }
            Route::Relocating { waiting, .. } if current && waiting.contains(via) => {
                waiting.remove(via);
                if waiting.is_empty() {
                    self.finish_relocation(None);
                }
            }
            _ => {}
        }
    }
}
