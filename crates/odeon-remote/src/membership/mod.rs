//! Cluster membership and failure detection: who is in the cluster, where to reach
//! them, and a small replicated key-value state per node.
//!
//! **Internal, not a stable API.** Public only for the fuzz targets and the benchmarks,
//! and hidden from the documentation; it may change in any release.
//!
//! Built on [chitchat](https://docs.rs/chitchat) (Scuttlebutt gossip with a
//! phi-accrual failure detector), as DESIGN.md §3 asks, with its UDP transport
//! replaced by an authenticated one (`auth.rs`, `socket.rs`): every datagram carries an
//! HMAC-SHA256 tag under a key stretched from the cluster secret with Argon2id, and
//! whatever fails the check is dropped and counted ([`GossipStats`], with a
//! rate-limited warning) before chitchat sees it. A captured datagram lets its holder
//! test guesses of the secret offline at one Argon2id evaluation per guess: use a
//! random secret ([`Secret::generate`](crate::Secret::generate)).
//!
//! # Why chitchat 0.11
//! Chitchat 0.12 and 0.13 keep the `Transport`/`Socket` traits but made the codec of
//! the messages a socket carries (`ChitchatEnvelope::serialize`/`deserialize`, and
//! `Digest`'s) crate-private, so a transport outside chitchat can no longer turn a
//! message into bytes to authenticate. 0.11 is the last release whose
//! `ChitchatMessage` implements the public `Serializable`/`Deserializable` traits.
//!
//! # Semantics
//! - A member is a live node other than this one, identified by [`NodeId`]; a node
//!   restarted under the same name has a new incarnation and is a new member.
//! - [`MemberEvent::Down`] is the failure detector's verdict (a false suspicion can be
//!   followed by `Up` for the same node). [`MemberEvent::Left`] is a graceful
//!   [`Membership::leave`]: chitchat has no leave message, so the leaving node gossips
//!   a "leaving" mark for [`MembershipConfig::leave_grace`] before it stops; a peer
//!   that did not hear the mark in time reports `Down` instead.
//!
//! ```
//! use odeon_remote::membership::{MemberEvent, Membership, MembershipConfig};
//! use odeon_remote::transport::Secret;
//! use odeon_remote::wire::NodeId;
//! use std::time::Duration;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let secret = Secret::new("correct horse battery staple").unwrap();
//! let config = |name: &str, seeds| MembershipConfig {
//!     gossip_interval: Duration::from_millis(50),
//!     seeds,
//!     ..MembershipConfig::new(
//!         NodeId { name: name.into(), incarnation: 1 },
//!         "127.0.0.1:0".parse().unwrap(),   // UDP, any free port
//!         "127.0.0.1:7001".parse().unwrap(), // where this node's links listen
//!         secret.clone(),
//!     )
//! };
//! let a = Membership::start(config("a", vec![])).await.unwrap();
//! let mut events = a.subscribe();
//! let b = Membership::start(config("b", vec![a.gossip_addr()])).await.unwrap();
//! b.set("greeting", "hello").unwrap();
//! match events.recv().await.unwrap() {
//!     MemberEvent::Up(member) => assert_eq!(member.node.name, "b"),
//!     other => panic!("{other:?}"),
//! }
//! while a.entries("greet").is_empty() {
//!     tokio::time::sleep(Duration::from_millis(20)).await;
//! }
//! b.leave().await;
//! # });
//! ```

pub(crate) mod auth;
mod codec;
mod config;
mod events;
pub(crate) mod inflate;
mod socket;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chitchat::{ChitchatConfig, ChitchatHandle, ChitchatId, FailureDetectorConfig, NodeState};
use tokio::net::UdpSocket;
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tokio::task::JoinHandle;

pub use auth::GossipStats;
pub use config::MembershipConfig;

use crate::defaults;
use crate::wire::{NodeId, WireError};

/// A live node of the cluster.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Member {
    /// Its identity.
    pub node: NodeId,
    /// Its TCP listen address.
    pub link_addr: SocketAddr,
}

/// A change in membership, as seen by one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MemberEvent {
    /// A node joined (or came back after a false suspicion).
    Up(Member),
    /// The failure detector stopped hearing from a member.
    Down(NodeId),
    /// A member left gracefully.
    Left(NodeId),
}

/// Why membership could not start or a key-value was refused.
#[derive(Debug, thiserror::Error)]
pub enum MembershipError {
    /// The node's identity is invalid.
    #[error("invalid node id: {0}")]
    Node(#[from] WireError),
    /// A configuration value is out of range.
    #[error("invalid membership configuration: {0}")]
    Config(String),
    /// The gossip socket could not be bound.
    #[error("cannot bind the gossip socket: {0}")]
    Bind(#[from] std::io::Error),
    /// Chitchat failed to start.
    #[error("gossip failed to start: {0}")]
    Gossip(String),
    /// A key is empty or too long.
    #[error("key of {len} bytes (1..={max} allowed)")]
    InvalidKey {
        /// Its length.
        len: usize,
        /// The limit, [`defaults::MAX_KEY`].
        max: usize,
    },
    /// A value is too long.
    #[error("value of {len} bytes (at most {max} allowed)")]
    InvalidValue {
        /// Its length.
        len: usize,
        /// The limit, [`defaults::MAX_VALUE`].
        max: usize,
    },
}

/// Writes to this node's chitchat state, applied in order by one task.
enum Command {
    Set(String, String),
    Delete(String),
    Leave(oneshot::Sender<()>),
}

/// This node's membership: gossip runs in the background from
/// [`Membership::start`] until [`Membership::leave`] or drop (drop is a crash, as
/// far as the others can tell: they will report this node `Down`).
#[derive(Debug)]
pub struct Membership {
    me: NodeId,
    gossip_addr: SocketAddr,
    advertised: SocketAddr,
    events: broadcast::Sender<MemberEvent>,
    tracker: Arc<Mutex<events::Tracker>>,
    live: watch::Receiver<BTreeMap<ChitchatId, NodeState>>,
    /// This node's own user key-values, so that `entries` sees a `set` at once.
    local: Mutex<BTreeMap<String, String>>,
    commands: mpsc::UnboundedSender<Command>,
    stats: Arc<GossipStats>,
    writer: JoinHandle<()>,
    watcher: JoinHandle<()>,
}

impl Membership {
    /// Binds the gossip socket and starts gossiping with the seeds, on the current
    /// tokio runtime.
    ///
    /// # Errors
    /// An invalid configuration, or the socket's bind error.
    pub async fn start(config: MembershipConfig) -> Result<Self, MembershipError> {
        config.validate()?;
        let socket = UdpSocket::bind(config.gossip_addr).await?;
        let gossip_addr = socket.local_addr()?;
        let advertised = config.advertised(gossip_addr);
        let stats = Arc::new(GossipStats::default());
        // Argon2id takes tens of milliseconds of CPU: not on a runtime worker.
        let secret = config.secret.clone();
        let key = tokio::task::spawn_blocking(move || auth::GossipKey::new(&secret))
            .await
            .map_err(|e| MembershipError::Gossip(format!("deriving the gossip key: {e}")))?;
        let transport = socket::AuthTransport::new(socket, key, stats.clone());
        let chitchat_id = codec::chitchat_id(&config.node, advertised);
        let chitchat_config = ChitchatConfig {
            chitchat_id: chitchat_id.clone(),
            cluster_id: config.cluster_id.clone(),
            gossip_interval: config.gossip_interval,
            listen_addr: gossip_addr,
            seed_nodes: config
                .seeds
                .iter()
                .filter(|seed| **seed != gossip_addr && **seed != advertised)
                .map(ToString::to_string)
                .collect(),
            failure_detector_config: FailureDetectorConfig {
                phi_threshold: config.phi_threshold,
                sampling_window_size: defaults::PHI_SAMPLING_WINDOW,
                // Longer silences are not samples of the heartbeat interval (they are
                // what the detector is for) and would make it lenient for good.
                max_interval: config.gossip_interval.saturating_mul(20),
                // Heartbeats arrive about once per round: the right prior until
                // samples come in (chitchat's default, 5 s, would make the first
                // detections slow at short intervals).
                initial_interval: config.gossip_interval,
                dead_node_grace_period: config.dead_node_grace_period,
            },
            marked_for_deletion_grace_period: config.tombstone_grace_period,
            catchup_callback: None,
            extra_liveness_predicate: None,
        };
        let link = (codec::LINK_KEY.to_owned(), config.link_addr.to_string());
        let handle = chitchat::spawn_chitchat(chitchat_config, vec![link], &transport)
            .await
            .map_err(|e| MembershipError::Gossip(format!("{e:#}")))?;
        let live = handle.chitchat().lock().await.live_nodes_watcher();
        let (events, _) = broadcast::channel(defaults::MEMBER_EVENTS);
        let tracker = Arc::new(Mutex::new(events::Tracker::new(chitchat_id)));
        let watcher = tokio::spawn(events::run(live.clone(), tracker.clone(), events.clone()));
        let (commands, rx) = mpsc::unbounded_channel();
        let writer = tokio::spawn(write_loop(handle, rx, config.leave_grace));
        tracing::info!(node = %config.node, %gossip_addr, %advertised, "membership started");
        Ok(Self {
            me: config.node,
            gossip_addr,
            advertised,
            events,
            tracker,
            live,
            local: Mutex::new(BTreeMap::new()),
            commands,
            stats,
            writer,
            watcher,
        })
    }

    /// The UDP address gossip is bound to (with the port the OS chose for port 0).
    pub fn gossip_addr(&self) -> SocketAddr {
        self.gossip_addr
    }

    /// The UDP address peers gossip to ([`MembershipConfig::gossip_advertise`], or
    /// [`Membership::gossip_addr`] when none was given).
    pub fn advertised_addr(&self) -> SocketAddr {
        self.advertised
    }

    /// This node's identity.
    pub fn node(&self) -> &NodeId {
        &self.me
    }

    /// Membership changes from now on. A receiver that falls more than
    /// [`defaults::MEMBER_EVENTS`] behind gets `Lagged` and should resynchronise from
    /// [`Membership::members`].
    pub fn subscribe(&self) -> broadcast::Receiver<MemberEvent> {
        self.events.subscribe()
    }

    /// The live members other than this node, ordered by node id.
    pub fn members(&self) -> Vec<Member> {
        self.tracker
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .members()
    }

    /// Sets one of this node's replicated key-values.
    ///
    /// # Errors
    /// [`MembershipError::InvalidKey`] or [`MembershipError::InvalidValue`] when
    /// outside the limits of `crate::defaults` (gossip datagrams are bounded).
    pub fn set(&self, key: &str, value: &str) -> Result<(), MembershipError> {
        codec::check_entry(key, value)?;
        self.lock_local().insert(key.to_owned(), value.to_owned());
        // The writer lives as long as `self`; a send error cannot happen.
        let _ = self
            .commands
            .send(Command::Set(user_key(key), value.to_owned()));
        Ok(())
    }

    /// Deletes one of this node's replicated key-values (a no-op for an absent key).
    pub fn delete(&self, key: &str) {
        if self.lock_local().remove(key).is_some() {
            let _ = self.commands.send(Command::Delete(user_key(key)));
        }
    }

    /// The key-values whose key starts with `prefix`, of this node and of every live
    /// member, ordered by node then key.
    pub fn entries(&self, prefix: &str) -> Vec<(NodeId, String, String)> {
        let mut entries: Vec<(NodeId, String, String)> = self
            .lock_local()
            .range(prefix.to_owned()..)
            .take_while(|(key, _)| key.starts_with(prefix))
            .map(|(key, value)| (self.me.clone(), key.clone(), value.clone()))
            .collect();
        let members: BTreeMap<NodeId, Member> = self
            .members()
            .into_iter()
            .map(|m| (m.node.clone(), m))
            .collect();
        let snapshot = self.live.borrow();
        for (id, state) in snapshot.iter() {
            // Only members: a node seen leaving, pending or malformed has no entries.
            let node = NodeId {
                name: id.node_id.to_string(),
                incarnation: id.generation_id,
            };
            if node == self.me || !members.contains_key(&node) {
                continue;
            }
            for (key, value) in codec::user_entries(state, prefix) {
                entries.push((node.clone(), key.to_owned(), value.to_owned()));
            }
        }
        entries.sort();
        entries
    }

    /// What the gossip socket accepted and dropped so far.
    pub fn stats(&self) -> &Arc<GossipStats> {
        &self.stats
    }

    /// Leaves gracefully: gossips a leaving mark for
    /// [`MembershipConfig::leave_grace`] (so that peers report
    /// [`MemberEvent::Left`] rather than `Down`), then stops gossip.
    pub async fn leave(self) {
        let (done, wait) = oneshot::channel();
        if self.commands.send(Command::Leave(done)).is_ok() {
            let _ = wait.await;
        }
        tracing::info!(node = %self.me, "left the cluster");
    }

    fn lock_local(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, String>> {
        self.local.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Membership {
    fn drop(&mut self) {
        // Dropping the writer's `ChitchatHandle` closes chitchat's command channel,
        // which ends its server task and closes the socket.
        self.writer.abort();
        self.watcher.abort();
    }
}

fn user_key(key: &str) -> String {
    format!("{}{key}", codec::USER_PREFIX)
}

/// Applies writes to this node's chitchat state in the order they were made (the
/// state is behind chitchat's async mutex, and `set`/`delete` are not async).
async fn write_loop(
    handle: ChitchatHandle,
    mut commands: mpsc::UnboundedReceiver<Command>,
    leave_grace: Duration,
) {
    while let Some(command) = commands.recv().await {
        let chitchat = handle.chitchat();
        let mut chitchat = chitchat.lock().await;
        let state = chitchat.self_node_state();
        match command {
            Command::Set(key, value) => state.set(key, value),
            Command::Delete(key) => state.delete(&key),
            Command::Leave(done) => {
                state.set(codec::LEAVING_KEY, codec::LEAVING_VALUE);
                drop(chitchat);
                tokio::time::sleep(leave_grace).await;
                if let Err(e) = handle.shutdown().await {
                    tracing::warn!(error = %e, "gossip stopped with an error");
                }
                let _ = done.send(());
                return;
            }
        }
    }
}
