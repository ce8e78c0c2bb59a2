//! The node's side of the entries: finding a mobile actor's [`Mobile`] (by token, by
//! local ref, by move), creating it where a ref first touches a node, and feeding it
//! the mobility frames that arrive from peers (the target's checks before an offer
//! reaches its entry included).

use std::any::Any;
use std::sync::Arc;

use super::driver::Mobile;
use super::entry::{MobileEntry, Place, Route};
use super::stub::MobileEndpoint;
use crate::interface::{ErasedRef, Interface, Mobility};
use crate::node::{NodeInner, Peer};
use crate::wire::{Outcome, Traffic, WireFailure, WireMigrateRefusal, WireRef};

impl NodeInner {
    fn peer_ids(&self) -> Vec<crate::wire::NodeId> {
        self.live_peers().iter().map(|p| p.id.clone()).collect()
    }

    /// The entry of the mobile actor whose cell here is `target`, if it has one.
    pub(crate) fn mobile_by_local(
        &self,
        mobility: &'static Mobility,
        target: &ErasedRef,
    ) -> Option<Arc<Mobile>> {
        // Cold (exporting or moving a mobile actor): a scan, outside the table's lock.
        let all: Vec<Arc<Mobile>> = self.mobile.lock().values().cloned().collect();
        all.into_iter().find(|m| {
            std::ptr::eq(m.mobility, mobility)
                && m.local().is_some_and(|l| (mobility.same)(&*l, target))
        })
    }

    /// The entry of a local mobile actor (a boxed `ActorRef<A>`), made on first use:
    /// exporting it creates its birth entry.
    pub(crate) fn mobile_for_local(
        self: &Arc<Self>,
        interface: &'static Interface,
        local: Box<dyn Any + Send>,
    ) -> Result<Arc<Mobile>, String> {
        let wire = self.export_local(interface, local)?;
        self.mobile
            .lock()
            .get(&wire.token)
            .cloned()
            .ok_or_else(|| format!("{} is not mobile", interface.actor_type))
    }

    /// `export_local` for a mobile type, before a token is made: the wire ref of an
    /// actor that already has an entry here (it keeps its birth identity and token).
    pub(crate) fn exported_mobile(
        &self,
        interface: &'static Interface,
        target: &ErasedRef,
    ) -> Option<WireRef> {
        let mobility = interface.mobility?;
        if let Some(birth) = (mobility.identity)(target) {
            // An actor that moved here, or a stub it left (whose cell the node may no
            // longer hold, `collect.rs`): found by its identity.
            let all: Vec<Arc<Mobile>> = self.mobile.lock().values().cloned().collect();
            if let Some(m) = all
                .into_iter()
                .find(|m| std::ptr::eq(m.mobility, mobility) && m.birth() == birth)
            {
                return Some(m.wire.clone());
            }
        }
        let m = self.mobile_by_local(mobility, target)?;
        Some(m.wire.clone())
    }

    /// `export_local` for a mobile type, after the token is made: the actor was born
    /// here and runs here.
    pub(crate) fn born_mobile(
        &self,
        interface: &'static Interface,
        wire: &WireRef,
        target: Arc<ErasedRef>,
    ) {
        let Some(mobility) = interface.mobility else {
            return;
        };
        let mut table = self.mobile.lock();
        table.entry(wire.token).or_insert_with(|| {
            let entry = MobileEntry::born(wire.clone(), self.peer_ids());
            Mobile::new(entry, interface, mobility, Some(target))
        });
    }

    /// `resolve` for a mobile type: the cell here if there is one (the running actor,
    /// or the stub it left), else an endpoint through this node's entry.
    pub(crate) fn resolve_mobile(
        self: &Arc<Self>,
        interface: &'static Interface,
        mobility: &'static Mobility,
        wire: &WireRef,
    ) -> Option<Box<dyn Any + Send>> {
        // A birth node that is lost or unknown here cannot be routed to: the entry
        // relocates from the start (`faults.rs`).
        let birth_known =
            wire.node == self.me || self.known_peer(&wire.node).is_some_and(|p| !p.is_lost());
        let peers = self.peer_ids();
        let mut start = Vec::new();
        let mobile = {
            let mut table = self.mobile.lock();
            let mobile = match table.get(&wire.token) {
                Some(m) => m.clone(),
                // Our own actor with no entry: it stopped, or the token is forged.
                None if wire.node == self.me => return None,
                None => {
                    let entry = if birth_known {
                        self.fresh_away(wire, peers)
                    } else {
                        let (entry, outs) = self.relocating_entry(wire, peers);
                        start = outs;
                        entry
                    };
                    let fresh = Mobile::new(entry, interface, mobility, None);
                    table.insert(wire.token, fresh.clone());
                    fresh
                }
            };
            if let Some(local) = mobile.local() {
                return Some((interface.ops.clone_ref)(&*local));
            }
            // Under the table's lock: the entry cannot be forgotten meanwhile.
            NodeInner::mobile_used(&mobile);
            mobile
        };
        if !start.is_empty() {
            let mut d = mobile.state.lock();
            self.perform(&mobile, &mut d, start);
        }
        let birth = mobile.wire.node.clone();
        Some((interface.ops.from_endpoint)(Arc::new(MobileEndpoint {
            node: self.clone(),
            id: wire.id,
            birth,
            mobile,
        })))
    }

    /// `lost` was declared lost: every mobile entry here learns it (a hand-over with
    /// it ends, routes through it relocate: steps 4, 5 and 11). Nothing to do, and no
    /// cost, on a node without mobile actors.
    pub(crate) fn mobile_node_lost(self: &Arc<Self>, lost: &crate::wire::NodeId) {
        self.lost_nodes.lock().insert(lost.clone());
        self.offers_incoming.node_lost(lost);
        let all: Vec<Arc<Mobile>> = self.mobile.lock().values().cloned().collect();
        for mobile in all {
            {
                // A forgotten entry routes nowhere: nothing to relocate.
                let Some(mut d) = NodeInner::lock_live(&mobile) else {
                    continue;
                };
                let outs = d.entry.node_lost(lost);
                self.perform(&mobile, &mut d, outs);
            }
            self.control_node_lost(&mobile, lost);
        }
        self.asks_node_lost(lost);
    }

    /// A mobility frame from `peer`.
    pub(crate) fn dispatch_mobile(self: &Arc<Self>, peer: &Arc<Peer>, frame: Traffic<'_>) {
        let by_token = |to: u64| self.mobile.lock().get(&to).cloned();
        let by_move = |migration: u64| {
            self.migrations
                .lock()
                .get(&(peer.id.clone(), migration))
                .cloned()
        };
        match &frame {
            Traffic::MigrateReady { migration } => super::steps::step("ready_received", *migration),
            Traffic::MigrateCommit { migration, .. } => {
                super::steps::step("commit_received", *migration)
            }
            Traffic::MigrateOffer { migration, .. } => {
                super::steps::step("offer_received", *migration)
            }
            _ => {}
        }
        let lookup = match &frame {
            // A state larger than a frame comes after its offer (`chunk.rs`).
            Traffic::MigrateOffer { chunks, .. } if *chunks > 0 => {
                return self.offer_chunked(peer, frame);
            }
            Traffic::MigrateChunk { .. } => return self.receive_chunk(peer, frame),
            Traffic::MigrateOffer { .. } => return self.receive_offer(peer, frame),
            Traffic::MTell { to, .. }
            | Traffic::MAsk { to, .. }
            | Traffic::Relay { to, .. }
            | Traffic::Hint { to, .. }
            | Traffic::Flush { to, .. }
            | Traffic::FlushAck { to, .. }
            | Traffic::Gone { to, .. }
            | Traffic::Unpin { to }
            | Traffic::Reflush { to, .. }
            | Traffic::Locate { to, .. }
            | Traffic::Located { to, .. } => Lookup::Token(*to),
            Traffic::MigrateReady { migration }
            | Traffic::MigrateRefused { migration, .. }
            | Traffic::MigrateCommit { migration, .. }
            | Traffic::MigrateAbort { migration } => Lookup::Move(*migration),
            // Ask and watch bindings (§3.3, §3.5): the node's tables, not an entry's.
            Traffic::AskAt {
                request,
                at,
                hops,
                confirmed,
            } => return self.rebind_ask(*request, &peer.id, at, *hops, *confirmed),
            Traffic::WatchAt {
                actor,
                key,
                at,
                hops,
                confirmed,
            } => return self.receive_watch_at(&peer.id, *actor, *key, at, *hops, *confirmed),
            other => {
                tracing::warn!(peer = %peer.id, frame = ?other, "mobility frame not yet handled; ignored");
                return;
            }
        };
        // An entry forgotten while this thread waited for its lock is not the node's
        // any more (`collect.rs`): look again.
        loop {
            let found = match lookup {
                Lookup::Token(to) => by_token(to),
                Lookup::Move(migration) => by_move(migration),
            };
            let Some(mobile) = found else {
                return self.no_entry(peer, frame);
            };
            let Some(mut guard) = NodeInner::lock_live(&mobile) else {
                continue;
            };
            let d = &mut *guard;
            if matches!(frame, Traffic::MigrateReady { .. })
                && let Some(m) = d.moving.as_mut()
                && let super::entry::Place::Frozen(f) = &d.entry.place
            {
                m.held = f.held.len();
            }
            let outs = d.entry.receive(&peer.id, frame);
            self.perform(&mobile, d, outs);
            return;
        }
    }

    /// A mobility frame for an actor this node keeps no entry for.
    fn no_entry(&self, peer: &Arc<Peer>, frame: Traffic<'_>) {
        match frame {
            // A relocation probe to a node that forgot the actor (or never knew it): no
            // copy this way. Unanswered, the prober would wait for this node's loss
            // (step 11).
            Traffic::Locate { to, nonce, .. } => {
                let _ = peer.send(&Traffic::Gone {
                    to,
                    nonce,
                    via: self.me.clone(),
                });
            }
            // Releases of pins this node no longer keeps, and a hint to switch a route
            // this node no longer has (the birth node pins its senders at first
            // contact and hints them at each commit): nothing to do.
            Traffic::Unpin { .. } | Traffic::Reflush { .. } | Traffic::Hint { .. } => {}
            Traffic::MAsk { request, .. } => {
                tracing::warn!(peer = %peer.id, "mobile ask for no entry here");
                let _ = peer.send(&Traffic::Reply {
                    request,
                    outcome: Outcome::Failed(WireFailure::Stopped),
                });
            }
            // A forwarded ask (a watch, since watches are asks) must not vanish: its
            // origin is told it failed, as `drop_item` does.
            Traffic::Relay { msg, .. } if msg.reply.is_some() => {
                tracing::warn!(peer = %peer.id, "forwarded mobile ask for no entry here");
                if let Some((origin, request)) = msg.reply {
                    let frame = super::entry::failed_reply(request);
                    if origin == self.me {
                        self.complete_mobile(request, Outcome::Failed(WireFailure::Stopped));
                    } else if let Some(p) = self.known_peer(&origin) {
                        let _ = p.send(&frame);
                    }
                }
            }
            frame => {
                tracing::warn!(peer = %peer.id, frame = ?frame, "mobility frame for no entry here");
            }
        }
    }

    /// Step 3's checks, which the entry leaves to its driver: the type, the token and
    /// the state's decoding. A refusal is sent from here.
    pub(super) fn receive_offer(self: &Arc<Self>, peer: &Arc<Peer>, frame: Traffic<'_>) {
        let Traffic::MigrateOffer {
            migration,
            actor,
            state,
            watchers,
            links,
            ..
        } = &frame
        else {
            return;
        };
        let migration = *migration;
        let refuse = |why: WireMigrateRefusal| {
            tracing::info!(peer = %peer.id, ?why, "move refused");
            let _ = peer.send(&Traffic::MigrateRefused { migration, why });
        };
        let Some(interface) = self.mobiles.get(actor.actor_type.as_str()).copied() else {
            return refuse(WireMigrateRefusal::UnknownType {
                actor_type: actor.actor_type.clone(),
            });
        };
        let Some(mobility) = interface.mobility else {
            return refuse(WireMigrateRefusal::NotMobile);
        };
        if self.export(actor.token).is_some_and(|e| e.id != actor.id) && actor.node != self.me {
            return refuse(WireMigrateRefusal::TokenClash);
        }
        let decoded = match (mobility.decode_state)(state, &*self.codec()) {
            Ok(s) => s,
            Err(e) => return refuse(WireMigrateRefusal::Decode(e)),
        };
        let actor = actor.clone();
        let peers = self.peer_ids();
        let birth_known =
            actor.node == self.me || self.known_peer(&actor.node).is_some_and(|p| !p.is_lost());
        // An entry forgotten while this thread waited for its lock is not used: its
        // route may lead to a node that forgot the actor too (`collect.rs`). A fresh
        // one routes through the birth node, which never forgets it.
        loop {
            let mobile = self
                .mobile
                .lock()
                .entry(actor.token)
                .or_insert_with(|| {
                    let mut entry = self.fresh_away(&actor, peers.clone());
                    if !birth_known {
                        // Step 3 would drain through the lost birth node and refuse
                        // every such offer with `Unreachable(birth)`: once the birth node
                        // died, the actor could never move to a node that had no entry
                        // for it (`examples/tests/mobility_kill.rs`). This node keeps no
                        // route of its own, so it has nothing to drain; the frozen source
                        // is the owner, which is where a relocation would lead. (A
                        // straggler from an entry forgotten earlier is dropped by step
                        // 9's check, never reordered.)
                        entry.lost.insert(actor.node.clone());
                        entry.place = Place::Away {
                            route: Route::Direct(peer.id.clone()),
                        };
                    }
                    Mobile::new(entry, interface, mobility, None)
                })
                .clone();
            let Some(mut d) = NodeInner::lock_live(&mobile) else {
                continue;
            };
            *mobile.control.incoming.lock() = Some((migration, (watchers.clone(), links.clone())));
            d.arriving = Some((migration, decoded));
            self.migrations
                .lock()
                .insert((peer.id.clone(), migration), mobile.clone());
            let outs = d.entry.receive(&peer.id, frame);
            self.perform(&mobile, &mut d, outs);
            return;
        }
    }
}

/// How a frame names the entry it is for.
#[derive(Clone, Copy)]
enum Lookup {
    /// The actor's export token.
    Token(u64),
    /// The hand-over, by the peer's move id.
    Move(u64),
}
