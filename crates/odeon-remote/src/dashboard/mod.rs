//! The live view of one node: the model behind the dashboard that
//! [`NodeBuilder::metrics_http`](crate::NodeBuilder::metrics_http) serves at `/`, at
//! `GET /api/snapshot` (one [`Snapshot`] as JSON) and `GET /api/events` (a
//! server-sent event with a whole [`Snapshot`] every second), and that
//! `odeon-node top` draws in a terminal. See `docs/observe.md`.
//!
//! Nothing here runs unless the HTTP endpoint was asked for: the node then samples
//! once a second (membership, its links, and the per-actor counts of
//! `odeon::observe` when this crate's `observe` feature is on and the system was
//! built with `observe(true)`), and keeps the last [`SAMPLES`] samples and
//! [`EVENTS`] events.
//!
//! The types are plain data with serde on both sides, so a client can read them back:
//!
//! ```
//! use odeon_remote::dashboard::{Health, Snapshot};
//!
//! let json = r#"{"node":"a#1","name":"a","at_ms":0,"interval_ms":1000,
//!   "members":[{"node":"b#2","name":"b","addr":"127.0.0.1:7000","health":"lost","me":false}],
//!   "actors":null,"samples":[],"events":[],"counters":{"handshakes_refused":2}}"#;
//! let s: Snapshot = serde_json::from_str(json).unwrap();
//! assert_eq!(s.members[0].health, Health::Lost);
//! assert_eq!(s.counters["handshakes_refused"], 2);
//! ```

pub(crate) mod collector;

use serde::{Deserialize, Serialize};

/// How many one-second samples a snapshot keeps (two minutes).
pub const SAMPLES: usize = 120;
/// How many events (restarts, node changes) a snapshot keeps, newest last.
pub const EVENTS: usize = 50;
/// How many actors [`ActorsView::busiest`] lists.
pub const BUSIEST: usize = 10;
/// How many mailboxes [`ActorsView::deepest_mailboxes`] lists.
pub const DEEPEST: usize = 10;
/// How many actors [`ActorsView::supervision`] lists at most (the rest are counted,
/// not listed), so that a node with 100k actors still sends a snapshot of a few
/// tens of KB.
pub const TREE_NODES: usize = 200;

/// One node's view of itself and its cluster.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// This node (`name#incarnation`, as [`NodeId`](crate::NodeId) displays).
    pub node: String,
    /// This node's name.
    pub name: String,
    /// When the snapshot was taken, milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// Milliseconds between samples.
    pub interval_ms: u64,
    /// Every node this one knows of, itself first, then by node id.
    pub members: Vec<MemberView>,
    /// The actors of this node's system; `None` without the `observe` feature or
    /// when the node's system was not built with `observe(true)`.
    pub actors: Option<ActorsView>,
    /// The last samples, oldest first (at most [`SAMPLES`]).
    pub samples: Vec<Sample>,
    /// The last events, oldest first (at most [`EVENTS`]).
    pub events: Vec<Event>,
    /// The node's own counters ([`Metrics`](crate::Metrics)) by name, as on
    /// `/metrics` without the `odeon_remote_` prefix and with the outcome appended:
    /// `handshakes_accepted`, `handshakes_refused`, `handshakes_shed`,
    /// `accept_errors`, `gossip_accepted`, `gossip_rejected`, `gossip_malformed`,
    /// `gossip_oversized`, `migrations_moved`, `migrations_refused`,
    /// `migrations_failed`, `forwarded_frames`.
    #[serde(default)]
    pub counters: std::collections::BTreeMap<String, u64>,
}

/// A node as this node sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberView {
    /// Its identity (`name#incarnation`).
    pub node: String,
    /// Its name.
    pub name: String,
    /// Its link address, as gossip published it.
    pub addr: String,
    /// Its health.
    pub health: Health,
    /// Whether this is the node serving the snapshot.
    pub me: bool,
}

/// A member's health, from gossip's failure detector and the link to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Health {
    /// Gossip hears from it and its link (if any) is not lost.
    Alive,
    /// Gossip stopped hearing from it, but its link is still up: it may come back
    /// (a link silent for `lost_after` loses it).
    Suspected,
    /// Gone: gossip stopped hearing from it and its link is lost (or it had none).
    Lost,
    /// It left the cluster gracefully.
    Left,
}

/// The actors of the node's system (each node of a process shows its own).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActorsView {
    /// Actors spawned minus stopped since the system was built.
    pub alive: i64,
    /// Messages handled since the system was built.
    pub handled: u64,
    /// Restarts since the system was built.
    pub restarts: u64,
    /// The busiest actors over the last interval, busiest first (at most
    /// [`BUSIEST`]; named actors one by one, unnamed ones together per type).
    pub busiest: Vec<ActorLoad>,
    /// The actors with the most user messages waiting, deepest first (at most
    /// [`DEEPEST`]; ties by id; empty mailboxes left out), from the counts behind
    /// `odeon_mailbox_depth`.
    #[serde(default)]
    pub deepest_mailboxes: Vec<MailboxView>,
    /// The node's supervision tree, bounded to [`TREE_NODES`] listed actors.
    #[serde(default)]
    pub supervision: Option<SupervisionView>,
}

/// One actor's mailbox in [`ActorsView::deepest_mailboxes`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MailboxView {
    /// The actor's type name.
    pub actor: String,
    /// Its name (`SpawnOptions::name`), if it has one.
    pub name: Option<String>,
    /// Its id in its system (`ActorId::as_u64`).
    pub id: u64,
    /// User messages sent to it and not yet taken for handling.
    pub depth: u64,
}

/// A node's supervision tree: every actor with no supervisor is a root (top-level
/// supervisors first), each supervisor with the children it supervises. Listed
/// breadth first up to [`TREE_NODES`] actors; what did not fit is counted in
/// `collapsed` (here and on each node).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SupervisionView {
    /// The top-level actors listed.
    pub roots: Vec<SupervisionNode>,
    /// Top-level actors (and everything under them) not listed.
    pub collapsed: usize,
    /// Actors alive in the system, listed or not.
    pub actors: usize,
    /// The bound: at most this many actors are listed.
    pub bound: usize,
}

/// One actor of a [`SupervisionView`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SupervisionNode {
    /// Its id in its system (`ActorId::as_u64`).
    pub id: u64,
    /// Its type name.
    pub actor: String,
    /// Its name, if it has one.
    pub name: Option<String>,
    /// What it is doing.
    pub status: ActorState,
    /// Times its supervisor restarted it.
    pub restarts: u64,
    /// The children listed (supervisors first, then by id).
    pub children: Vec<SupervisionNode>,
    /// Actors under it not listed: unlisted children and everything under them.
    pub collapsed: usize,
}

/// What an actor of the supervision tree is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActorState {
    /// Alive and taking messages.
    Running,
    /// Failed; waiting for its supervisor to restart it.
    Restarting,
    /// A stop was requested; it stops after its current message.
    Stopping,
}

/// One actor (or the unnamed actors of one type) and its load.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActorLoad {
    /// The actor's type name.
    pub actor: String,
    /// Its name (`SpawnOptions::name`); `None` for the unnamed actors of the type.
    pub name: Option<String>,
    /// Messages handled in the last interval.
    pub recent: u64,
    /// Messages handled since the endpoint started.
    pub handled: u64,
}

/// One sample of the counters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// When, milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// Messages handled per second since the previous sample.
    pub rate: f64,
    /// Messages handled in total so far.
    pub handled: u64,
    /// Actors alive.
    pub alive: i64,
    /// Members alive (this node included).
    pub members_alive: usize,
}

/// Something that happened, as the node saw it at a sample.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// When, milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// What.
    pub kind: EventKind,
    /// Whom: a node id or an actor type.
    pub subject: String,
    /// A few words more.
    pub detail: String,
}

/// The kinds of [`Event`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// A node joined (or came back after a false suspicion).
    NodeUp,
    /// Gossip stopped hearing from a node.
    NodeSuspected,
    /// A node was lost.
    NodeLost,
    /// A node left gracefully.
    NodeLeft,
    /// Actors of a type were restarted by their supervisor.
    Restart,
}
