//! The public face of a node: build it, register and look up actors, spawn remotely,
//! leave.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use odeon::{ActorRef, RemoteActor, SystemHandle};
use parking_lot::Mutex;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{NodeInner, Settings, SpawnFn, codec::NodeCodec};
use crate::Metrics;
use crate::defaults;
use crate::interface::{Interface, decode_with, encode_with};
use crate::membership::{MemberEvent, Membership, MembershipConfig};
#[cfg(feature = "tls")]
use crate::transport::TlsConfig;
use crate::transport::{self, LinkConfig, Listener, Secret};
use crate::wire::{self, NodeId, Traffic, WireRef};

/// An actor type that other nodes may spawn here with [`Node::spawn_on`].
///
/// ```
/// use odeon::{Actor, Context, Handler, Message};
/// use odeon_remote::Spawnable;
/// use serde::{Deserialize, Serialize};
///
/// struct Worker { id: u32 }
/// impl Actor for Worker {}
/// #[derive(Serialize, Deserialize)]
/// struct WhoAreYou;
/// impl Message for WhoAreYou { type Reply = u32; }
/// impl Handler<WhoAreYou> for Worker {
///     fn handle(&mut self, _: WhoAreYou, _: &mut Context<Self>) -> u32 { self.id }
/// }
/// odeon_remote::remote_actor!(Worker = "doc.Worker" { WhoAreYou = "doc.WhoAreYou" });
///
/// impl Spawnable for Worker {
///     type Args = u32;
///     fn create(id: u32) -> Result<Self, String> {
///         if id == 0 { return Err("ids start at 1".into()); }
///         Ok(Worker { id })
///     }
/// }
/// ```
pub trait Spawnable: RemoteActor {
    /// The constructor's arguments, sent over the wire.
    type Args: Serialize + DeserializeOwned + Send + 'static;
    /// Builds the actor; an error is returned to the spawning node.
    fn create(args: Self::Args) -> Result<Self, String>;
}

/// Why a node could not start or link.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NodeError {
    /// No cluster secret was given.
    #[error("a node needs a cluster secret (NodeBuilder::secret)")]
    NoSecret,
    /// The name is empty or too long.
    #[error("invalid node name: {0}")]
    Name(String),
    /// The listen address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The builder was given something it cannot use.
    #[error("invalid node configuration: {0}")]
    Config(String),
    /// The node is bound to an unspecified address (`0.0.0.0`, `::`: every interface)
    /// and was given no address to advertise, so it could not tell others where to
    /// reach it.
    #[error(
        "bound to {bind}, which others cannot dial: give the address to advertise \
         (NodeBuilder::advertise)"
    )]
    NoAdvertise {
        /// The bound address.
        bind: SocketAddr,
    },
    /// Membership (gossip) could not start.
    #[error("membership: {0}")]
    Membership(String),
    /// The metrics endpoint's address ([`NodeBuilder::metrics_http`]) could not be
    /// bound.
    #[error("cannot serve metrics on {addr}: {source}")]
    MetricsBind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// Dialing a peer failed.
    #[error("cannot link to {addr}: {reason}")]
    Link {
        /// The address dialed.
        addr: SocketAddr,
        /// Why.
        reason: String,
    },
}

/// Why a registry operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The name is taken on this node.
    #[error("the name {0:?} is already registered")]
    Taken(String),
    /// Only actors of this node's system can be registered here.
    #[error("only a local actor can be registered")]
    NotLocal,
    /// No live node has an actor under this name.
    #[error("no actor is registered as {0:?}")]
    NotFound(String),
    /// The name belongs to an actor of another type.
    #[error("{name:?} is a {found}, not a {expected}")]
    WrongType {
        /// The name.
        name: String,
        /// The type asked for.
        expected: &'static str,
        /// The type registered.
        found: String,
    },
    /// A reply could not be decoded or a peer refused the request.
    #[error("registry request failed: {0}")]
    Failed(String),
}

/// Why a remote spawn failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpawnError {
    /// No live peer has this name.
    #[error("no live node named {0:?}")]
    NoSuchNode(String),
    /// The target node refused (unknown actor type, constructor error, bad arguments).
    #[error("the node refused the spawn: {0}")]
    Refused(String),
    /// The node did not answer (lost, or past the request timeout).
    #[error("the node did not answer: {0}")]
    Unreachable(String),
}

/// Configures and starts a [`Node`].
#[derive(Debug)]
pub struct NodeBuilder {
    name: String,
    listen: SocketAddr,
    advertise: Option<SocketAddr>,
    secret: Option<Secret>,
    seeds: Vec<SocketAddr>,
    #[cfg(feature = "tls")]
    tls: Option<TlsConfig>,
    gossip_interval: Duration,
    settings: Settings,
    max_frame: usize,
    handshake_timeout: Duration,
    max_pending_handshakes: usize,
    spawnables: HashMap<&'static str, (SpawnFn, &'static Interface)>,
    mobiles: HashMap<&'static str, &'static Interface>,
    misconfigured: Vec<String>,
    metrics_http: Option<SocketAddr>,
}

impl NodeBuilder {
    /// The address to bind, for links (TCP) and gossip (UDP, same port). Default
    /// `127.0.0.1:0`, an ephemeral port. An unspecified IP (`0.0.0.0`, `::`) binds every
    /// interface and then needs [`NodeBuilder::advertise`].
    pub fn listen(mut self, addr: SocketAddr) -> Self {
        self.listen = addr;
        self
    }

    /// The address other nodes reach this node at, when it is not the bound one (Akka's
    /// canonical address, as opposed to its bind address): a node bound to `0.0.0.0`, or
    /// behind a NAT, a port mapping or a proxy. Links (TCP) are dialed at this address:
    /// gossip publishes it as the node's link address, links announce it, and
    /// [`Node::listen_addr`] returns it. Gossip (UDP) is sent to its IP and the *bound*
    /// port, so a TCP-only proxy or port mapping leaves gossip direct. A port of 0 stands
    /// for the bound port. Default: the bound address, which must then be specified, or
    /// [`Node::start`](NodeBuilder::start) fails with [`NodeError::NoAdvertise`].
    pub fn advertise(mut self, addr: SocketAddr) -> Self {
        self.advertise = Some(addr);
        self
    }

    /// The cluster secret every node must prove it knows (at least 16 bytes).
    pub fn secret(mut self, secret: Secret) -> Self {
        self.secret = Some(secret);
        self
    }

    /// Mutual TLS on every link (see [`TlsConfig`] for the certificates it needs). The
    /// secret's SPAKE2 handshake still runs inside TLS.
    ///
    /// Only with the crate's `tls` feature (on by default). Without it this method and
    /// [`TlsConfig`] do not exist, so a program that configures TLS fails to compile
    /// instead of running in plaintext, and the node refuses TLS peers
    /// (`HandshakeError::PeerUsesTls`).
    #[cfg(feature = "tls")]
    pub fn tls(mut self, tls: TlsConfig) -> Self {
        self.tls = Some(tls);
        self
    }

    /// How often membership gossips (default [`defaults::GOSSIP_INTERVAL`]); failure
    /// detection scales with it.
    pub fn gossip_interval(mut self, d: Duration) -> Self {
        self.gossip_interval = d;
        self
    }

    /// A node to link to at start.
    pub fn seed(mut self, addr: SocketAddr) -> Self {
        self.seeds.push(addr);
        self
    }

    /// How long a peer may stay unreachable (no link, or a link that carries nothing,
    /// not even a heartbeat) before it is lost, with its actors (default
    /// [`defaults::LOST_AFTER`]).
    pub fn lost_after(mut self, d: Duration) -> Self {
        self.settings.lost_after = d;
        self
    }

    /// How many messages (tells and asks) may wait toward one peer node before a
    /// `tell` fails with `TellError::Full` (giving the message back) and
    /// `ActorRef::send` waits for room (default [`defaults::OUTBOX_BOUND`]). At least 1.
    pub fn outbox_bound(mut self, messages: usize) -> Self {
        self.settings.outbox_bound = messages;
        self
    }

    /// How long a link may stay idle before it sends a heartbeat (default
    /// [`defaults::HEARTBEAT_INTERVAL`], capped at a quarter of `lost_after`). A link
    /// that carries nothing for `lost_after` is dead and its peer lost.
    pub fn heartbeat_interval(mut self, d: Duration) -> Self {
        self.settings.heartbeat_interval = d;
        self
    }

    /// Whether a link's reader thread may run the turn of a local actor it just
    /// delivered a message to, when every worker of the pool is parked (default
    /// `false`).
    ///
    /// Waking a parked worker costs a thread wake-up, the largest hop of a remote round
    /// trip (tens of microseconds on a virtual machine); the reader is awake already,
    /// so switching this on takes one wake-up off each remote round trip to an idle
    /// node. The turn is an ordinary one (one message at a time per actor, at most the
    /// system's budget, then the pool takes over), but while it runs the reader reads
    /// nothing: a turn that takes longer than 200 µs sends that thread's deliveries to
    /// the pool for the next 50 ms.
    ///
    /// Why it is off by default: odeon promises that an actor which blocks its thread
    /// does not hold up the others (guarantee 3). A worker that blocks is replaced by
    /// the pool's monitor; a reader thread that blocks is not, so one handler that
    /// sleeps or computes for seconds would hold up every message of the node's links
    /// (and their heartbeats) until it returns, and a handler that waits for something
    /// this node's I/O must bring (`block_on` of a remote ask) would never return.
    /// Switch it on for nodes whose handlers are short and never block (actors that
    /// block belong on `odeon::SpawnOptions::blocking`, which never runs inline).
    ///
    /// ```
    /// let builder = odeon_remote::Node::builder("n").inline_turns(true);
    /// # drop(builder);
    /// ```
    pub fn inline_turns(mut self, on: bool) -> Self {
        self.settings.inline_turns = on;
        self
    }

    /// How long a link's reader polls its socket for the peer's next bytes before it
    /// waits for the kernel to wake it (default [`defaults::READ_SPIN`]: zero, no
    /// polling). It polls only after a read that completed one of this node's asks, or
    /// while an ask to that peer is outstanding: a caller is then likely waiting for
    /// the next reply, and a reply that lands during the poll is read without a thread
    /// wake-up (tens of microseconds on a VM whose idle vCPUs halt). Nodes that only
    /// serve, and links that carry tells, never poll. Plain TCP links only.
    ///
    /// Each poll holds the I/O thread for up to this long (other links and timers of
    /// the system's I/O runtime wait meanwhile), and on a machine with fewer cores than
    /// busy threads it takes a core another thread may need: measure before turning it
    /// on (`docs/bench/remote-latency-2026-11-28b.md`).
    ///
    /// ```
    /// use std::time::Duration;
    /// let builder = odeon_remote::Node::builder("n").read_spin(Duration::from_micros(30));
    /// # drop(builder);
    /// ```
    pub fn read_spin(mut self, budget: Duration) -> Self {
        self.settings.read_spin = budget;
        self
    }

    /// The deadline of lookups and remote spawns (default
    /// [`defaults::REQUEST_TIMEOUT`]).
    pub fn request_timeout(mut self, d: Duration) -> Self {
        self.settings.request_timeout = d;
        self
    }

    /// The largest frame accepted from a peer. Unit: bytes.
    pub fn max_frame(mut self, bytes: usize) -> Self {
        self.max_frame = bytes;
        self
    }

    /// The deadline of a link's whole opening handshake (default
    /// [`defaults::HANDSHAKE_TIMEOUT`]).
    pub fn handshake_timeout(mut self, d: Duration) -> Self {
        self.handshake_timeout = d;
        self
    }

    /// How many unauthenticated handshakes the listener runs at once (default
    /// [`defaults::MAX_PENDING_HANDSHAKES`]); connections beyond that are closed at
    /// once and counted in [`Metrics::links`].
    pub fn max_pending_handshakes(mut self, n: usize) -> Self {
        self.max_pending_handshakes = n;
        self
    }

    /// Lets other nodes spawn actors of type `A` here.
    pub fn spawnable<A: Spawnable>(mut self) -> Self {
        let Some(interface) = Interface::of(A::interface()) else {
            // `RemoteActor` implemented by hand rather than by `remote_actor!`.
            self.misconfigured.push(format!(
                "{} has no odeon-remote interface (declare it with remote_actor!)",
                A::TYPE_NAME
            ));
            return self;
        };
        let spawn: SpawnFn = |system, args, codec| {
            let args: A::Args = decode_with(args, codec)
                .map_err(|e| format!("bad arguments for {}: {e}", A::TYPE_NAME))?;
            let actor = A::create(args)?;
            Ok(Box::new(system.spawn(actor)))
        };
        self.spawnables.insert(A::TYPE_NAME, (spawn, interface));
        self
    }

    /// Lets actors of the mobile type `A` (declared with
    /// [`mobile_actor!`](crate::mobile_actor)) move to this node. A move of an actor of
    /// a type the target did not register is refused with
    /// [`MigrateRefusal::UnknownType`](crate::MigrateRefusal::UnknownType).
    ///
    /// ```
    /// use odeon::{Actor, Context, Handler, Message};
    /// use serde::{Deserialize, Serialize};
    /// #[derive(Serialize, Deserialize)]
    /// struct Counter(u64);
    /// impl Actor for Counter {}
    /// #[derive(Serialize, Deserialize)]
    /// struct Add(u64);
    /// impl Message for Add { type Reply = u64; }
    /// impl Handler<Add> for Counter {
    ///     fn handle(&mut self, m: Add, _: &mut Context<Self>) -> u64 { self.0 += m.0; self.0 }
    /// }
    /// odeon_remote::mobile_actor!(Counter = "doc.Counter" { Add = "doc.Add" });
    /// let builder = odeon_remote::Node::builder("a").mobile::<Counter>();
    /// # drop(builder);
    /// ```
    pub fn mobile<A: odeon::MobileActor>(mut self) -> Self {
        match Interface::of(A::interface()).filter(|i| i.mobility.is_some()) {
            Some(interface) => {
                self.mobiles.insert(A::TYPE_NAME, interface);
            }
            None => self.misconfigured.push(format!(
                "{} has no odeon-remote mobility (declare it with mobile_actor!)",
                A::TYPE_NAME
            )),
        }
        self
    }

    /// Serves `GET /metrics` at `addr` in the Prometheus text format: this node's
    /// counters ([`Node::metrics`]) and everything recorded through the `metrics`
    /// facade, which includes odeon's own `odeon_*` metrics when the system was built
    /// with `SystemBuilder::observe(true)` (feature `observe` of this crate). Off unless
    /// called; `start` fails with [`NodeError::MetricsBind`] if `addr` cannot be bound.
    /// Port 0 picks a free port: [`Node::metrics_http_addr`] tells which.
    ///
    /// The same address serves the live dashboard ([`crate::dashboard`]): the page at
    /// `GET /`, the latest [`Snapshot`](crate::dashboard::Snapshot) as JSON at
    /// `GET /api/snapshot`, and one snapshot per second as server-sent events at
    /// `GET /api/events`. The node samples for it once a second, only when this is on.
    ///
    /// ```
    /// use odeon_remote::{Node, Secret};
    /// # let system = odeon::System::new();
    /// let node = system
    ///     .block_on(
    ///         Node::builder("doc")
    ///             .secret(Secret::new("a doc secret, 16+ bytes").unwrap())
    ///             .metrics_http("127.0.0.1:0".parse().unwrap())
    ///             .start(&system.handle()),
    ///     )
    ///     .unwrap();
    /// assert!(node.metrics_http_addr().is_some());
    /// ```
    pub fn metrics_http(mut self, addr: SocketAddr) -> Self {
        self.metrics_http = Some(addr);
        self
    }

    /// Binds the listener, links to the seeds and starts serving, on `system`'s I/O
    /// runtime.
    ///
    /// # Errors
    /// [`NodeError`]: no secret, a bad name, an address that cannot be bound (the
    /// metrics endpoint's: [`NodeError::MetricsBind`]), an unspecified bind address
    /// without an advertised one ([`NodeError::NoAdvertise`]), or a seed that cannot be
    /// linked.
    pub async fn start(self, system: &SystemHandle) -> Result<Node, NodeError> {
        if let Some(why) = self.misconfigured.first() {
            return Err(NodeError::Config(why.clone()));
        }
        if self.settings.outbox_bound == 0 || self.settings.outbox_bound > MAX_PERMITS {
            return Err(NodeError::Config(format!(
                "outbox bound of {} messages (1..={MAX_PERMITS})",
                self.settings.outbox_bound
            )));
        }
        if self.settings.heartbeat().is_zero() {
            return Err(NodeError::Config(
                "zero heartbeat interval or lost_after".into(),
            ));
        }
        let secret = self.secret.ok_or(NodeError::NoSecret)?;
        let me = NodeId {
            name: self.name,
            incarnation: super::incarnation::incarnation(),
        };
        me.validate().map_err(|e| NodeError::Name(e.to_string()))?;
        let mut link = LinkConfig::new(secret);
        link.max_frame = self.max_frame;
        link.handshake_timeout = self.handshake_timeout;
        link.max_pending_handshakes = self.max_pending_handshakes;
        #[cfg(feature = "tls")]
        {
            link.tls = self.tls;
        }
        let io = system.io();
        let (bind_me, bind_link, addr) = (me.clone(), link.clone(), self.listen);
        let listener = io
            .spawn(async move { Listener::bind(addr, bind_me, bind_link).await })
            .await
            .map_err(|e| NodeError::Bind {
                addr,
                source: std::io::Error::other(e),
            })?
            .map_err(|source| NodeError::Bind { addr, source })?;
        let bound = listener.local_addr();
        let listen = advertised(bound, self.advertise)?;
        let link_stats = listener.stats().clone();
        let inner = Arc::new_cyclic(|weak| NodeInner {
            me,
            listen,
            link,
            system: system.clone(),
            io: io.clone(),
            settings: self.settings,
            peers: Mutex::new(HashMap::new()),
            exports: Mutex::new(Default::default()),
            names: Mutex::new(HashMap::new()),
            spawnables: self.spawnables,
            next_request: AtomicU64::new(1),
            closing: AtomicBool::new(false),
            codec: Arc::new(NodeCodec(weak.clone())),
            mobiles: self.mobiles,
            mobile: Mutex::new(HashMap::new()),
            migrations: Mutex::new(HashMap::new()),
            deadlines: Arc::default(),
            mobile_asks: Mutex::new(HashMap::new()),
            offers_incoming: Default::default(),
            migration_stats: Arc::default(),
            ask_bindings: Mutex::new(HashMap::new()),
            lost_nodes: Mutex::new(Default::default()),
            mobile_retired_seq: AtomicU64::new(0),
            this: weak.clone(),
            objects: Mutex::new(HashMap::new()),
        });
        super::register_node(&inner);
        let accepting = io.spawn(accept_loop(Arc::downgrade(&inner), listener));
        // Gossip runs on UDP at the bound port, at the advertised IP (an advertised port
        // may be a TCP proxy's or a port mapping's).
        let mut gossip =
            MembershipConfig::new(inner.me.clone(), bound, listen, inner.link.secret.clone());
        gossip.gossip_advertise = Some(SocketAddr::new(listen.ip(), bound.port()));
        gossip.seeds = self.seeds.clone();
        gossip.gossip_interval = self.gossip_interval;
        gossip.leave_grace = self.gossip_interval.saturating_mul(3);
        let membership = io
            .spawn(Membership::start(gossip))
            .await
            .map_err(|e| NodeError::Membership(e.to_string()))?
            .map_err(|e| NodeError::Membership(e.to_string()))?;
        let events = membership.subscribe();
        let metrics = Metrics::new(
            link_stats,
            membership.stats().clone(),
            inner.migration_stats.clone(),
        );
        let http = match self.metrics_http {
            Some(addr) => Some({
                // Subscribed before reading the members: no change falls between.
                let changes = membership.subscribe();
                crate::observe::MetricsServer::start(
                    &io,
                    addr,
                    inner.me.to_string(),
                    metrics.clone(),
                    crate::dashboard::collector::Collector::start(
                        &io,
                        Arc::downgrade(&inner),
                        inner.me.clone(),
                        metrics.clone(),
                        membership.members(),
                        changes,
                    ),
                )
                .await?
            }),
            None => None,
        };
        let watching = io.spawn(follow_members(Arc::downgrade(&inner), events));
        let node = Node {
            http,
            bound,
            inner,
            accepting: Mutex::new(Some(accepting)),
            membership: Arc::new(Mutex::new(Some(membership))),
            watching,
            left: AtomicBool::new(false),
            metrics,
        };
        for seed in self.seeds {
            node.connect(seed).await?;
        }
        tracing::info!(node = %node.inner.me, %bound, advertised = %listen, "node started");
        Ok(node)
    }
}

/// The largest outbox bound (a semaphore's limit).
const MAX_PERMITS: usize = tokio::sync::Semaphore::MAX_PERMITS >> 4;

/// The address others reach a node at that is bound to `bound` (see
/// [`NodeBuilder::advertise`]).
fn advertised(bound: SocketAddr, advertise: Option<SocketAddr>) -> Result<SocketAddr, NodeError> {
    match advertise {
        None if bound.ip().is_unspecified() => Err(NodeError::NoAdvertise { bind: bound }),
        None => Ok(bound),
        Some(a) if a.ip().is_unspecified() => Err(NodeError::Config(format!(
            "advertised address {a} is unspecified"
        ))),
        Some(a) if a.port() == 0 => Ok(SocketAddr::new(a.ip(), bound.port())),
        Some(a) => Ok(a),
    }
}

/// Links to members as gossip reports them, and loses them when it reports them gone.
async fn follow_members(
    node: std::sync::Weak<NodeInner>,
    mut events: tokio::sync::broadcast::Receiver<MemberEvent>,
) {
    loop {
        let event = match events.recv().await {
            Ok(e) => e,
            Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                tracing::warn!(missed = n, "membership events lagged");
                continue;
            }
            Err(_) => return,
        };
        let Some(node) = node.upgrade() else { return };
        if node.is_closing() {
            return;
        }
        match event {
            MemberEvent::Up(m) => {
                if node.supersede(&m.node) {
                    node.peer(&m.node, Some(m.link_addr));
                }
            }
            MemberEvent::Down(id) => node.gossip_down(&id),
            MemberEvent::Left(id) => node.forget_by_id(&id, "it left the cluster"),
        }
    }
}

async fn accept_loop(node: std::sync::Weak<NodeInner>, mut listener: Listener) {
    while let Some((link, addr)) = listener.next().await {
        let Some(n) = node.upgrade() else { return };
        n.io.spawn(accept_one(n.clone(), link, addr));
    }
}

/// Reads the dialer's `Attach` and keeps or refuses the link (see `peer.rs`).
async fn accept_one(node: Arc<NodeInner>, mut link: transport::Link, addr: SocketAddr) {
    let first = tokio::time::timeout(node.link.handshake_timeout, link.reader.next()).await;
    let (listen, session, known, quiet_ms) = match first {
        Ok(Ok(Some(frame))) => match wire::decode::<Traffic>(&frame) {
            Ok(Traffic::Attach {
                listen,
                session,
                known,
                quiet_ms,
            }) => (listen, session, known, quiet_ms),
            Ok(other) => {
                tracing::warn!(%addr, peer = %link.peer, frame = ?other, "expected attach; closing");
                return;
            }
            Err(e) => {
                tracing::warn!(%addr, peer = %link.peer, error = %e, "malformed attach; closing");
                return;
            }
        },
        // A probe (see `Node::connect`) or a peer that gave up: nothing to keep.
        Ok(Ok(None)) => return,
        Ok(Err(e)) => {
            tracing::warn!(%addr, peer = %link.peer, error = %e, "link failed before attach");
            return;
        }
        Err(_) => {
            tracing::warn!(%addr, peer = %link.peer, "no attach in time; closing");
            return;
        }
    };
    if listen.ip().is_unspecified() || listen.port() == 0 {
        tracing::warn!(%addr, peer = %link.peer, %listen, "attach with an address that cannot be dialed; closing");
        return;
    }
    if !node.supersede(&link.peer) {
        tracing::warn!(%addr, peer = %link.peer, "a newer incarnation of this node is known; closing");
        return;
    }
    let peer = node.peer_for_link(&link.peer.clone(), listen, session);
    let answer = if known.is_some_and(|k| k != peer.session) {
        // The dialer still holds a session this node has lost: it must lose it too.
        Traffic::Reset
    } else if peer.claim(
        &node.me,
        listen,
        session,
        Duration::from_millis(quiet_ms.into()),
    ) {
        Traffic::Attached {
            listen: node.listen,
            session: peer.session,
            quiet_ms: node.settings.quiet_ms(),
        }
    } else {
        Traffic::Duplicate
    };
    let keep = matches!(answer, Traffic::Attached { .. });
    let sent = match wire::encode(&answer) {
        Ok(bytes) => link.writer.send(&bytes).await.is_ok(),
        Err(_) => false,
    };
    if keep {
        if sent {
            peer.hand_over(link);
        } else {
            peer.hand_over_failed();
        }
    }
}

/// A node: one member of a cluster of odeon systems (see the crate docs for an
/// example). Dropping it without [`Node::leave`] cuts every link at once, which peers
/// see as a crash.
///
/// # Addresses
/// A node binds one port ([`NodeBuilder::listen`]) for its links (TCP) and gossip
/// (UDP), and tells the others one address to reach it at: the advertised address
/// ([`NodeBuilder::advertise`], Akka's canonical address), which defaults to the bound
/// one. A node bound to `0.0.0.0` or `::` must be given one. Gossip publishes it, links
/// announce it, and [`Node::listen_addr`] returns it; gossip itself goes to its IP and
/// the bound port.
///
/// # What a peer can reach
/// - Refs on the wire carry a node's identity, never an address. A node dials only
///   addresses it was given (seeds, [`Node::connect`]), gossiped by membership, or
///   announced by a peer for itself when it linked. A ref to a node it does not know,
///   or to an incarnation superseded by a newer one, is dead: sends fail with
///   `Unreachable` and watchers get `NodeLost`.
/// - A local actor is reachable from other nodes only once a ref to it has been sent
///   out (in a message, a reply, a registration or a remote spawn), and then under a
///   random 64-bit token drawn from the OS, not its sequential id: frames addressed to
///   any other number reach nothing (tells are dropped, asks fail with `Stopped`,
///   stops and links have no effect, watches report the actor stopped).
/// - Names registered with [`Node::register`] are public to every member.
#[derive(Debug)]
pub struct Node {
    pub(crate) inner: Arc<NodeInner>,
    bound: SocketAddr,
    accepting: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// Shared with the watches that withdraw a registered name when its actor stops
    /// (`registry.rs`).
    pub(super) membership: Arc<Mutex<Option<Membership>>>,
    watching: tokio::task::JoinHandle<()>,
    left: AtomicBool,
    metrics: Metrics,
    /// The `GET /metrics` endpoint, if asked for; dropping it stops it.
    http: Option<crate::observe::MetricsServer>,
}

impl std::fmt::Debug for NodeInner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}@{}", self.me, self.listen)
    }
}

impl Node {
    /// A builder for a node called `name`.
    pub fn builder(name: impl Into<String>) -> NodeBuilder {
        NodeBuilder {
            name: name.into(),
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            advertise: None,
            secret: None,
            seeds: Vec::new(),
            #[cfg(feature = "tls")]
            tls: None,
            gossip_interval: defaults::GOSSIP_INTERVAL,
            settings: Settings {
                min_backoff: defaults::MIN_BACKOFF,
                max_backoff: defaults::MAX_BACKOFF,
                lost_after: defaults::LOST_AFTER,
                request_timeout: defaults::REQUEST_TIMEOUT,
                outbox_bound: defaults::OUTBOX_BOUND,
                heartbeat_interval: defaults::HEARTBEAT_INTERVAL,
                inline_turns: false,
                read_spin: defaults::READ_SPIN,
            },
            max_frame: defaults::MAX_FRAME,
            handshake_timeout: defaults::HANDSHAKE_TIMEOUT,
            max_pending_handshakes: defaults::MAX_PENDING_HANDSHAKES,
            spawnables: HashMap::new(),
            mobiles: HashMap::new(),
            misconfigured: Vec::new(),
            metrics_http: None,
        }
    }

    /// This node's identity.
    pub fn id(&self) -> &NodeId {
        &self.inner.me
    }

    /// This node's counters of refused handshakes and rejected gossip datagrams
    /// (which the log reports only at a limited rate).
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The address other nodes reach this node at, to give them as a seed: the
    /// advertised address ([`NodeBuilder::advertise`]), or the bound one if none was
    /// given.
    pub fn listen_addr(&self) -> SocketAddr {
        self.inner.listen
    }

    /// Where [`NodeBuilder::metrics_http`] serves `GET /metrics`, if it was asked for
    /// (with the port the OS chose for port 0).
    pub fn metrics_http_addr(&self) -> Option<SocketAddr> {
        self.http.as_ref().map(|h| h.addr())
    }

    /// The address the node is bound to (with the port the OS chose for port 0).
    pub fn bound_addr(&self) -> SocketAddr {
        self.bound
    }

    /// The peers this node has links to or is linking to, not lost.
    pub fn peers(&self) -> Vec<NodeId> {
        let mut v: Vec<_> = self
            .inner
            .live_peers()
            .iter()
            .map(|p| p.id.clone())
            .collect();
        v.sort();
        v
    }

    /// Links to the node listening on `addr` and returns its identity.
    ///
    /// # Errors
    /// [`NodeError::Link`] if it cannot be reached or refuses this node.
    pub async fn connect(&self, addr: SocketAddr) -> Result<NodeId, NodeError> {
        let link_err = |reason: String| NodeError::Link { addr, reason };
        let (me, config) = (self.inner.me.clone(), self.inner.link.clone());
        // A probe learns who listens there; the peer's driver then opens the link.
        let probe = self
            .inner
            .io
            .spawn(async move { transport::connect(addr, &me, &config).await })
            .await
            .map_err(|e| link_err(e.to_string()))?
            .map_err(|e| link_err(e.to_string()))?;
        let id = probe.peer.clone();
        drop(probe);
        if id == self.inner.me {
            return Err(link_err("that is this node".into()));
        }
        if !self.inner.supersede(&id) {
            return Err(link_err(format!(
                "{id} is an older incarnation of a known node"
            )));
        }
        self.inner.peer(&id, Some(addr));
        Ok(id)
    }

    /// Spawns an actor of type `A` on the linked node named `node`, which must have
    /// declared `A` spawnable ([`NodeBuilder::spawnable`]).
    ///
    /// # Errors
    /// [`SpawnError`]: no such node, the node refused, or it did not answer.
    pub async fn spawn_on<A: Spawnable>(
        &self,
        node: &str,
        args: A::Args,
    ) -> Result<ActorRef<A>, SpawnError> {
        let interface = Interface::of(A::interface())
            .ok_or_else(|| SpawnError::Refused(format!("{} has no interface", A::TYPE_NAME)))?;
        let peer = self
            .inner
            .live_peers()
            .into_iter()
            .find(|p| p.id.name == node)
            .ok_or_else(|| SpawnError::NoSuchNode(node.to_string()))?;
        let args = encode_with(&args, &*self.inner.codec()).map_err(SpawnError::Refused)?;
        let bytes = self
            .inner
            .request(peer, |request| Traffic::Spawn {
                request,
                actor_type: A::TYPE_NAME.to_string(),
                args,
            })
            .await
            .map_err(|e| match e {
                odeon::AskError::Rejected(why) => SpawnError::Refused(why),
                other => SpawnError::Unreachable(other.to_string()),
            })?;
        let wire: WireRef = wire::decode(&bytes).map_err(|e| SpawnError::Refused(e.to_string()))?;
        self.inner
            .resolve(interface, &wire)
            .downcast::<ActorRef<A>>()
            .map(|r| *r)
            .map_err(|_| SpawnError::Refused("interface mismatch".into()))
    }

    /// Leaves the cluster: peers are told (their watchers of this node's actors see
    /// them stop), queued frames are written, then every link closes.
    pub async fn leave(self) {
        self.left.store(true, Ordering::Release);
        self.inner.closing.store(true, Ordering::Release);
        if let Some(a) = self.accepting.lock().take() {
            a.abort();
        }
        let drivers: Vec<_> = self
            .inner
            .live_peers()
            .iter()
            .filter_map(|p| p.close_after_leaving())
            .collect();
        for d in drivers {
            let _ = tokio::time::timeout(Duration::from_secs(2), d).await;
        }
        self.watching.abort();
        let membership = self.membership.lock().take();
        if let Some(m) = membership {
            m.leave().await;
        }
        tracing::info!(node = %self.inner.me, "node left");
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        if self.left.load(Ordering::Acquire) {
            return;
        }
        self.inner.closing.store(true, Ordering::Release);
        if let Some(a) = self.accepting.lock().take() {
            a.abort();
        }
        self.watching.abort();
        // Dropping the membership stops gossip: peers see this node go down.
        drop(self.membership.lock().take());
        for p in self.inner.live_peers() {
            p.abort();
        }
    }
}

#[cfg(test)]
impl Node {
    /// For the link tests, which reach a verdict without waiting for a detector.
    pub(crate) fn inner(&self) -> &Arc<NodeInner> {
        &self.inner
    }
}

impl NodeInner {
    /// Sends a node request and waits for its reply, up to the request timeout.
    pub(crate) fn request<F: FnOnce(u64) -> Traffic<'static>>(
        self: &Arc<Self>,
        peer: Arc<super::peer::Peer>,
        make: F,
    ) -> impl std::future::Future<Output = Result<Vec<u8>, odeon::AskError>> + use<F> {
        let request = self.next_request();
        let (tx, rx) = tokio::sync::oneshot::channel();
        peer.state
            .lock()
            .pending
            .insert(request, super::peer::Pending::Raw(tx));
        let sent = peer.send(&make(request));
        let timeout = self.settings.request_timeout;
        async move {
            sent?;
            match tokio::time::timeout(timeout, rx).await {
                Ok(Ok(res)) => res,
                Ok(Err(_)) => Err(odeon::AskError::Unreachable),
                Err(_) => {
                    peer.state.lock().pending.remove(&request);
                    Err(odeon::AskError::Timeout(timeout))
                }
            }
        }
    }
}
