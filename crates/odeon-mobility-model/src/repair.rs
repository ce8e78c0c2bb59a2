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
                Route::Relocating {
                    waiting, answers, ..
                } => {
                    *waiting &= !bit(k);
                    answers.retain(|a| a.2 != k);
                    self.maybe_finish(n);
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
        if self.route_hop(to) != Some(from) {
            return;
        }
        self.reflush(to);
        if ttl > 0 {
            self.pass_reflush(to, ttl - 1);
        }
    }

    /// `n`'s route died: ask every node it does not know to be lost.
    pub(crate) fn relocate(&mut self, n: NodeIx, buffer: Vec<Item>) {
        let nodes = self.cfg.nodes;
        let node = self.node(n);
        node.nonce += 1;
        let nonce = node.nonce;
        let waiting = (0..nodes)
            .filter(|&j| j != n && node.lost & bit(j) == 0)
            .fold(0, |m, j| m | bit(j));
        node.place = Place::Away {
            route: Route::Relocating {
                buffer,
                waiting,
                answers: Vec::new(),
            },
        };
        self.fire(Event::Relocating);
        for j in 0..nodes {
            if waiting & bit(j) != 0 {
                self.st.send(n, j, Frame::Locate { nonce });
            }
        }
        self.maybe_finish(n);
    }

    /// Answers a `Locate`: a node with a copy (the owner, or a prepared target that has
    /// sent Ready, whose route leads straight to the source) pins the asker as a
    /// holder. A forwarder says `NotHere`: its own route may lead to the lost node,
    /// and two relocating forwarders answering each other would make a cycle; so does
    /// a target still draining its own route. While the actor lives, the owner or a
    /// target in the commit window answers, so one answer suffices.
    pub(crate) fn receive_locate(&mut self, from: NodeIx, to: NodeIx, nonce: u8) {
        let node = self.node(to);
        let rank = match &node.place {
            Place::Host { .. } | Place::Frozen { .. } => Some(2),
            Place::Prepared { ready_sent, .. } => ready_sent.then_some(1),
            Place::Away { .. } => None,
        };
        let Some(rank) = rank else {
            self.st.send(to, from, Frame::NotHere { nonce });
            return;
        };
        node.holders[usize::from(from)] += 1;
        node.export = true;
        let epoch = node.epoch;
        self.st.send(to, from, Frame::LocAns { rank, epoch, nonce });
    }

    /// An answer to `to`'s relocation (or a stale one, whose pin is released).
    pub(crate) fn receive_answer(
        &mut self,
        from: NodeIx,
        to: NodeIx,
        nonce: u8,
        ans: Option<(u8, u8)>,
    ) {
        let node = self.node(to);
        let current = node.nonce == nonce;
        match &mut node.place {
            Place::Away {
                route:
                    Route::Relocating {
                        waiting, answers, ..
                    },
            } if current && *waiting & bit(from) != 0 => {
                *waiting &= !bit(from);
                if let Some((rank, epoch)) = ans {
                    answers.push((rank, epoch, from));
                }
                self.maybe_finish(to);
            }
            _ => {
                if ans.is_some() {
                    self.st.send(to, from, Frame::Unpin);
                }
            }
        }
    }

    /// Ends a relocation once every node answered or was lost: the best answer (the
    /// owner, else the newest forwarder) becomes the route and the other pins are
    /// released; with no answer the actor is lost.
    fn maybe_finish(&mut self, n: NodeIx) {
        let Place::Away {
            route:
                Route::Relocating {
                    waiting: 0,
                    answers,
                    ..
                },
        } = &self.node(n).place
        else {
            return;
        };
        let best = answers
            .iter()
            .copied()
            .max_by_key(|&(r, e, j)| (r, e, u8::MAX - j));
        let others: Vec<_> = answers.iter().map(|a| a.2).collect();
        let Place::Away { route } = &mut self.node(n).place else {
            unreachable!()
        };
        let Route::Relocating { buffer, .. } = mem::replace(route, Route::Dead) else {
            unreachable!()
        };
        if let Some((_, epoch, b)) = best {
            *route = Route::Direct(b);
            let node = self.node(n);
            node.epoch = node.epoch.max(epoch);
            self.fire(Event::Relocated);
            for j in others.into_iter().filter(|&j| j != b) {
                self.st.send(n, j, Frame::Unpin);
            }
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

    /// The actor is gone (said a node whose route found no copy).
    pub(crate) fn receive_gone(&mut self, to: NodeIx) {
        let Place::Away { route } = &mut self.node(to).place else {
            return;
        };
        if matches!(route, Route::Switching { .. } | Route::Relocating { .. }) {
            let (Route::Switching { buffer, .. } | Route::Relocating { buffer, .. }) =
                mem::replace(route, Route::Dead)
            else {
                unreachable!()
            };
            for item in buffer {
                self.drop_item(to, item);
            }
        }
    }

    /// A pin on `to` held by `from` is released.
    pub(crate) fn receive_unpin(&mut self, from: NodeIx, to: NodeIx) {
        let h = &mut self.node(to).holders[usize::from(from)];
        *h = h.saturating_sub(1);
        self.gc(to);
    }
}
