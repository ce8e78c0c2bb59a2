//! Nodes (SALSA's theaters): an identity, a listener, one link per peer node, the
//! table of actors reachable from other nodes, and a name registry.
//!
//! # How a remote tell flows
//! `actor_ref.tell(msg)` on a ref to a remote actor → the core boxes `msg` and calls
//! this crate's endpoint → the message is encoded (postcard; refs inside it become
//! [`WireRef`]s) on the caller's thread and handed to the peer's outbox → if the link
//! is idle, the caller's thread writes it to the socket at once; otherwise it is
//! queued and the peer's driver writes what is queued in one batch (`outbox.rs`) → the
//! other node's reader task decodes each frame in order and enqueues it on the actor's
//! mailbox. A remote ask's reply is encoded and sent the same way by the worker that
//! ran the handler, as it replies (`inline.rs`).
//!
//! Per sender–receiver FIFO holds because one link carries everything between two
//! nodes, a sender's frames enter the outbox in the order it sends them, and the
//! reader delivers them in arrival order.
//!
//! # Delivery when links fail
//! Frames written to a link that then fails may be lost; frames still queued go out on
//! the next link to the same peer, if one is back within `lost_after`. Delivered
//! messages keep their order. If the peer cannot be reached again within `lost_after`,
//! or its link stays silent that long, it is lost: its link is closed and the frames
//! still queued are dropped, never delivered later (see `peer.rs` and the crate docs'
//! "Delivery semantics").

mod api;
mod codec;
pub(crate) mod dispatch;
mod endpoint;
mod incarnation;
mod link;
mod name_value;
mod objects;
mod outbox;
mod peer;
mod read_spin;
mod registry;
mod sharing;

use std::any::Any;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use odeon::SystemHandle;
use parking_lot::Mutex;

pub use api::{Node, NodeBuilder, NodeError, RegistryError, SpawnError, Spawnable};

use crate::interface::{Interface, SharedCodec};
use crate::transport::LinkConfig;
use crate::wire::{NodeId, Outcome, WireFailure, WireRef};
use endpoint::RemoteEndpoint;
pub(crate) use outbox::Pushed;
pub(crate) use peer::{Peer, Pending};

/// Timing of link recovery.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub(crate) min_backoff: Duration,
    pub(crate) max_backoff: Duration,
    pub(crate) lost_after: Duration,
    pub(crate) request_timeout: Duration,
    /// Messages queued per peer before tells fail with `Full` (sends wait).
    pub(crate) outbox_bound: usize,
    /// How long a link may stay idle before it sends a heartbeat.
    pub(crate) heartbeat_interval: Duration,
    /// Whether a link's reader may run a delivered message's turn itself
    /// (`NodeBuilder::inline_turns`).
    pub(crate) inline_turns: bool,
    /// How long a link's reader polls its socket before it waits for readiness, after
    /// a read that completed an ask or while one is outstanding (`NodeBuilder::read_spin`).
    pub(crate) read_spin: Duration,
}

impl Settings {
    /// The heartbeat interval in use: the configured one, but at most a quarter of
    /// `lost_after`, so that a healthy idle link is never taken for a silent one.
    pub(crate) fn heartbeat(&self) -> Duration {
        self.heartbeat_interval.min(self.lost_after / 4)
    }

    /// What this node asks of a peer in `Attach`/`Attached`: the longest it may stay
    /// silent, in milliseconds (a quarter of `lost_after`, so that nodes with other
    /// settings still hear from each other in time).
    pub(crate) fn quiet_ms(&self) -> u32 {
        u32::try_from((self.lost_after / 4).as_millis()).unwrap_or(u32::MAX)
    }
}

/// The heartbeat interval on a link: this node's own, or less if the peer asked for
/// less (never below a floor that keeps a confused peer from making us spin).
pub(crate) fn link_heartbeat(own: Duration, asked: Option<Duration>) -> Duration {
    const FLOOR: Duration = Duration::from_millis(10);
    match asked {
        Some(asked) => own.min(asked.max(FLOOR)),
        None => own,
    }
}

/// A local actor reachable from other nodes, under a random token.
#[derive(Clone)]
pub(crate) struct Export {
    /// The actor's id (its identity on this node; the token is its address).
    pub(crate) id: u64,
    pub(crate) interface: &'static Interface,
    pub(crate) target: Arc<dyn Any + Send + Sync>,
}

type SpawnFn = fn(
    &SystemHandle,
    &[u8],
    &(dyn odeon::remote::RefCodec + 'static),
) -> Result<Box<dyn Any + Send>, String>;

/// The export table: a token is handed out once per actor and lives until it stops.
#[derive(Default)]
pub(crate) struct Exports {
    by_token: HashMap<u64, Export>,
    tokens: HashMap<u64, u64>,
}

/// A fresh export token: 64 random bits from the OS, so that a peer cannot reach an
/// actor whose ref it was never given by guessing (ids are sequential; tokens are not).
fn fresh_token(taken: &HashMap<u64, Export>) -> Result<u64, String> {
    loop {
        let mut b = [0u8; 8];
        getrandom::fill(&mut b).map_err(|e| format!("no randomness for an export token: {e}"))?;
        let token = u64::from_le_bytes(b);
        if token != 0 && !taken.contains_key(&token) {
            return Ok(token);
        }
    }
}

pub(crate) struct NodeInner {
    pub(crate) me: NodeId,
    pub(crate) listen: SocketAddr,
    pub(crate) link: LinkConfig,
    pub(crate) system: SystemHandle,
    pub(crate) io: tokio::runtime::Handle,
    pub(crate) settings: Settings,
    peers: Mutex<HashMap<NodeId, Arc<Peer>>>,
    /// Exported actors by token, and each exported actor's token by actor id.
    exports: Mutex<Exports>,
    /// Registered names → the ref each resolves to: an actor exported here, or a
    /// mobile actor's birth `WireRef` (which may name another node: it moved here).
    names: Mutex<HashMap<String, WireRef>>,
    spawnables: HashMap<&'static str, (SpawnFn, &'static Interface)>,
    next_request: AtomicU64,
    closing: AtomicBool,
    codec: SharedCodec,
    /// Mobile actor types this node accepts arrivals of, by wire name.
    pub(crate) mobiles: HashMap<&'static str, &'static Interface>,
    /// One entry per mobile actor this node has touched, by its token (design §7
    /// step 2; the token is the actor's on every node).
    pub(crate) mobile: Mutex<HashMap<u64, Arc<crate::migration::driver::Mobile>>>,
    /// Hand-overs in progress, by (the other node, move id): their frames name the
    /// move, not the actor.
    pub(crate) migrations: Mutex<HashMap<(NodeId, u64), Arc<crate::migration::driver::Mobile>>>,
    /// The hand-over timeouts of the moves this node is the source of.
    pub(crate) deadlines: Arc<crate::migration::deadlines::Deadlines>,
    /// Asks sent through a mobile entry, by request id: answered by whichever node
    /// hosts the actor, so not in a per-peer table.
    pub(crate) mobile_asks: Mutex<HashMap<u64, Pending>>,
    /// Offers whose state is still arriving in chunks (`migration/chunk.rs`).
    pub(crate) offers_incoming: crate::migration::chunk::Incoming,
    /// Moves this node was the source of, and messages it forwarded (`Metrics`).
    pub(crate) migration_stats: Arc<crate::metrics::MigrationStats>,
    /// Where each of `mobile_asks` may be (design §3.3; `migration/binding.rs`).
    pub(crate) ask_bindings: Mutex<HashMap<u64, crate::migration::binding::Binding>>,
    /// Nodes declared lost while this node had mobile entries (a binding that names
    /// one fails at once; a node not linked yet is not lost). One entry per lost
    /// incarnation.
    pub(crate) lost_nodes: Mutex<std::collections::HashSet<NodeId>>,
    /// The largest sequence number a forgotten mobile entry had given out: a later
    /// entry here numbers on from it (`migration/collect.rs`).
    pub(crate) mobile_retired_seq: AtomicU64,
    /// This node, for callers that hold only `&self` (losing a peer).
    pub(crate) this: std::sync::Weak<NodeInner>,
    /// Bestowed objects handed to other nodes, by token (`objects.rs`).
    pub(crate) objects: Mutex<HashMap<u64, objects::ObjectExport>>,
}

/// Every node of this process, so that a ref or a context finds the node of its
/// system (`migrate_to`). Cold: read only when a move starts.
static NODES: Mutex<Vec<std::sync::Weak<NodeInner>>> = Mutex::new(Vec::new());

/// Enters a new node in [`NODES`] (and forgets the dropped ones).
pub(crate) fn register_node(node: &Arc<NodeInner>) {
    let mut nodes = NODES.lock();
    nodes.retain(|n| n.strong_count() > 0);
    nodes.push(Arc::downgrade(node));
}

/// The running node of `system`, if any.
pub(crate) fn node_of(system: &SystemHandle) -> Option<Arc<NodeInner>> {
    NODES
        .lock()
        .iter()
        .filter_map(std::sync::Weak::upgrade)
        .find(|n| !n.is_closing() && n.system.same_system(system))
}

impl NodeInner {
    pub(crate) fn codec(&self) -> SharedCodec {
        self.codec.clone()
    }

    pub(crate) fn is_closing(&self) -> bool {
        self.closing.load(Ordering::Acquire)
    }

    pub(crate) fn next_request(&self) -> u64 {
        self.next_request.fetch_add(1, Ordering::Relaxed)
    }

    /// The live peer `id`, if this node knows it: a member gossip reported, a seed, or
    /// a node that linked to us. Refs read from messages resolve only through this, so
    /// that a ref cannot make this node dial an address it was not told by membership.
    pub(crate) fn known_peer(&self, id: &NodeId) -> Option<Arc<Peer>> {
        self.peers.lock().get(id).filter(|p| !p.is_lost()).cloned()
    }

    /// The peer `id`, started (and dialing `listen`) if it is new or was lost.
    pub(crate) fn peer(self: &Arc<Self>, id: &NodeId, listen: Option<SocketAddr>) -> Arc<Peer> {
        let mut peers = self.peers.lock();
        if let Some(p) = peers.get(id)
            && !p.is_lost()
        {
            return p.clone();
        }
        let p = Peer::start(self, id.clone(), listen);
        peers.insert(id.clone(), p.clone());
        p
    }

    /// The peer for an inbound link from `id`'s session `session`: the current one,
    /// or a new one if `id` started a new session since their last link (it lost this
    /// node, so this node loses it too: see `peer.rs`).
    pub(crate) fn peer_for_link(
        self: &Arc<Self>,
        id: &NodeId,
        listen: SocketAddr,
        session: u64,
    ) -> Arc<Peer> {
        let p = self.peer(id, Some(listen));
        if p.continues(session) {
            return p;
        }
        self.forget_peer(&p, "it lost this node since their last link");
        self.peer(id, Some(listen))
    }

    pub(crate) fn live_peers(&self) -> Vec<Arc<Peer>> {
        self.peers
            .lock()
            .values()
            .filter(|p| !p.is_lost())
            .cloned()
            .collect()
    }

    /// Gossip's failure detector declared `id` down. A peer whose link is up is left
    /// to the link's own watch (silent for `lost_after`, heartbeats included, loses it):
    /// gossip's phi-accrual detector can fire after a pause of two seconds, shorter than
    /// `lost_after`, and a pause shorter than `lost_after` must not lose anything. A
    /// peer without a link is lost at once.
    pub(crate) fn gossip_down(&self, id: &NodeId) {
        let peer = self.peers.lock().get(id).cloned();
        let Some(p) = peer else { return };
        if p.state.lock().active {
            tracing::debug!(peer = %id, "gossip reports it down; its link decides");
            return;
        }
        self.forget_peer(&p, "the failure detector declared it down");
    }

    /// Loses the peer `id`, if it is known.
    pub(crate) fn forget_by_id(&self, id: &NodeId, why: &str) {
        let peer = self.peers.lock().get(id).cloned();
        if let Some(p) = peer {
            self.forget_peer(&p, why);
        }
    }

    /// Loses `peer` (see `peer.rs`) and drops it from the table.
    pub(crate) fn forget_peer(&self, peer: &Arc<Peer>, why: &str) {
        self.forget(peer, why, false);
    }

    /// Loses `peer`, which said it is leaving.
    pub(crate) fn forget_leaving(&self, peer: &Arc<Peer>) {
        self.forget(peer, "it left the cluster", true);
    }

    fn forget(&self, peer: &Arc<Peer>, why: &str, left: bool) {
        for (to, from) in peer.lose(why, left) {
            self.break_link(to, from);
        }
        {
            let mut peers = self.peers.lock();
            if peers.get(&peer.id).is_some_and(|p| Arc::ptr_eq(p, peer)) {
                peers.remove(&peer.id);
            }
        }
        if let Some(node) = self.this.upgrade() {
            node.mobile_node_lost(&peer.id);
        }
    }

    /// Stops our actor exported as `to`: its linked actor `from` on another node failed
    /// or was lost.
    pub(crate) fn break_link(&self, to: u64, from: u64) {
        if let Some(e) = self.export(to) {
            (e.interface.ops.stop_linked)(&*e.target, odeon::ActorId::from_u64(from));
        }
    }

    /// The actor exported under `token`.
    pub(crate) fn export(&self, token: u64) -> Option<Export> {
        self.exports.lock().by_token.get(&token).cloned()
    }

    /// Makes a local actor reachable by a random token, until it stops.
    pub(crate) fn export_local(
        self: &Arc<Self>,
        interface: &'static Interface,
        local: Box<dyn Any + Send>,
    ) -> Result<WireRef, String> {
        let target: Arc<dyn Any + Send + Sync> = (interface.ops.into_shared)(local)
            .ok_or("the ref does not match its interface")?
            .into();
        if let Some(wire) = self.exported_mobile(interface, &*target) {
            return Ok(wire);
        }
        let id = (interface.ops.id)(&*target).ok_or("the ref does not match its interface")?;
        let (token, fresh) = {
            let mut exports = self.exports.lock();
            match exports.tokens.get(&id) {
                Some(token) => (*token, false),
                None => {
                    let token = fresh_token(&exports.by_token)?;
                    exports.tokens.insert(id, token);
                    exports.by_token.insert(
                        token,
                        Export {
                            id,
                            interface,
                            target: target.clone(),
                        },
                    );
                    (token, true)
                }
            }
        };
        if fresh {
            // Outside the lock: the watch fires at once if the actor already stopped.
            let node = Arc::downgrade(self);
            (interface.ops.watch)(
                &*target,
                Box::new(move |_| {
                    if let Some(node) = node.upgrade() {
                        {
                            let mut exports = node.exports.lock();
                            exports.by_token.remove(&token);
                            exports.tokens.remove(&id);
                        }
                        let me = node.me.clone();
                        node.names
                            .lock()
                            .retain(|_, v| v.node != me || v.token != token);
                    }
                }),
            );
        }
        let wire = WireRef {
            node: self.me.clone(),
            id,
            token,
            actor_type: interface.actor_type.to_string(),
        };
        self.born_mobile(interface, &wire, target);
        Ok(wire)
    }

    /// A boxed `ActorRef<A>` for `wire` (`interface` is `A`'s).
    pub(crate) fn resolve(
        self: &Arc<Self>,
        interface: &'static Interface,
        wire: &WireRef,
    ) -> Box<dyn Any + Send> {
        // Resolving is not on a send path: the branch costs non-mobile refs nothing
        // per message.
        if let Some(mobility) = interface.mobility
            && let Some(r) = self.resolve_mobile(interface, mobility, wire)
        {
            return r;
        }
        let peer = if wire.node == self.me {
            if let Some(e) = self.export(wire.token)
                && e.id == wire.id
                && e.interface.type_id == interface.type_id
            {
                return (interface.ops.clone_ref)(&*e.target);
            }
            // Our own actor, no longer exported (it stopped), or a forged token.
            None
        } else {
            self.known_peer(&wire.node)
        };
        let peer = peer.unwrap_or_else(|| {
            if wire.node != self.me {
                tracing::debug!(node = %wire.node, "a ref to a node this node does not know: dead");
            }
            // A ref that refuses sends and reports its actor's node lost to watchers.
            Peer::detached(wire.node.clone())
        });
        (interface.ops.from_endpoint)(Arc::new(RemoteEndpoint {
            node: self.clone(),
            peer,
            id: wire.id,
            token: wire.token,
            interface,
            stopped: Arc::default(),
        }))
    }

    fn lookup_here(&self, name: &str) -> Outcome<'static> {
        let Some(wire) = self.names.lock().get(name).cloned() else {
            return Outcome::Failed(WireFailure::Rejected(format!("no actor named {name:?}")));
        };
        // A mobile actor that moved here is registered under its birth identity, which
        // names another node and is answered as it is (it resolves wherever it runs).
        if wire.node == self.me && self.export(wire.token).is_none_or(|e| e.id != wire.id) {
            return Outcome::Failed(WireFailure::Stopped);
        }
        match crate::wire::encode(&wire) {
            Ok(b) => Outcome::Ok(b.into()),
            Err(e) => Outcome::Failed(WireFailure::Rejected(e.to_string())),
        }
    }

    fn spawn_here(self: &Arc<Self>, actor_type: &str, args: &[u8]) -> Outcome<'static> {
        let Some((spawn, interface)) = self.spawnables.get(actor_type).copied() else {
            tracing::warn!(actor_type, "remote spawn of an unregistered actor type");
            return Outcome::Failed(WireFailure::Rejected(format!(
                "{actor_type:?} is not spawnable on {}",
                self.me
            )));
        };
        let local = match spawn(&self.system, args, &*self.codec) {
            Ok(r) => r,
            Err(e) => return Outcome::Failed(WireFailure::Rejected(e)),
        };
        match self
            .export_local(interface, local)
            .and_then(|w| crate::wire::encode(&w).map_err(|e| e.to_string()))
        {
            Ok(b) => Outcome::Ok(b.into()),
            Err(e) => Outcome::Failed(WireFailure::Rejected(e)),
        }
    }
}
