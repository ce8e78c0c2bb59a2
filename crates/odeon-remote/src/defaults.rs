//! Every tunable of the network layer, with its unit.

use std::time::Duration;

/// Deadline of a link's whole opening handshake (TLS and SPAKE2; a peer that takes
/// longer is dropped).
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

/// Handshakes (TLS and SPAKE2) a listener runs at once; a connection accepted beyond
/// that is closed at once, so that strangers can hold neither file descriptors nor
/// tasks for long. Unit: connections.
pub const MAX_PENDING_HANDSHAKES: usize = 128;

/// Warnings about what strangers can cause at will (refused handshakes, rejected
/// gossip datagrams, accept errors) are logged at most once per this interval, with
/// the count of those suppressed; counters have the exact numbers. Unit: time.
pub const WARN_INTERVAL: Duration = Duration::from_secs(10);

/// First pause after the listener's `accept` fails (e.g. out of file descriptors);
/// doubles per failure in a row up to [`MAX_ACCEPT_BACKOFF`].
pub const MIN_ACCEPT_BACKOFF: Duration = Duration::from_millis(10);

/// The longest pause after a failed `accept`.
pub const MAX_ACCEPT_BACKOFF: Duration = Duration::from_secs(1);

/// The largest frame an authenticated peer may send. Unit: bytes.
pub const MAX_FRAME: usize = 8 * 1024 * 1024;

/// Authenticated links a listener buffers before its owner takes them. Unit: links.
pub const PENDING_LINKS: usize = 64;

/// First delay before redialing a peer whose link failed (doubles per failure).
pub const MIN_BACKOFF: Duration = Duration::from_millis(50);

/// The longest delay between two redials of a peer.
pub const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// How long a peer may stay unreachable (no link, or a link that carries nothing, not
/// even a heartbeat) before it is lost with all its actors.
pub const LOST_AFTER: Duration = Duration::from_secs(5);

/// How long a link may stay idle before it sends a heartbeat frame, so that the other
/// end can tell a quiet link from a dead one (a link silent for [`LOST_AFTER`] is
/// dead, whatever gossip says). Capped at a quarter of the node's `lost_after`.
/// Unit: time.
pub const HEARTBEAT_INTERVAL: Duration = Duration::from_secs(1);

/// Messages (tells and asks) queued toward one peer node before a `tell` fails with
/// `TellError::Full` and `ActorRef::send` waits. Runtime signals (replies, watch
/// notices, stops) are never counted nor refused. The memory this bounds is this
/// many encoded messages per peer, plus the batch its link's driver is writing (what
/// was queued when it took it). Unit: messages.
pub const OUTBOX_BOUND: usize = 16 * 1024;

/// The deadline of node requests (lookups, remote spawns).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a link's reader polls its socket before waiting for readiness, after a read
/// that completed an ask or while one is outstanding (`NodeBuilder::read_spin`). Zero:
/// it never polls. Off by default: on the project's 2-vCPU VM a polling reader takes a
/// core the other threads of a round trip may need (issue 19,
/// `docs/bench/remote-latency-2026-11-28b.md`). Unit: time.
pub const READ_SPIN: Duration = Duration::ZERO;

/// How often a node starts a gossip exchange with a few peers (membership). Also the
/// failure detector's prior for the interval between a peer's heartbeats, which
/// arrive about once per round. Unit: time.
pub const GOSSIP_INTERVAL: Duration = Duration::from_millis(500);

/// Suspicion level above which a silent peer is declared down. Chitchat's phi is the
/// time since the peer's last heartbeat divided by the mean interval between its
/// heartbeats, so 8 means "eight typical intervals of silence" (about 4 s at the
/// default [`GOSSIP_INTERVAL`]). Unit: multiples of the mean heartbeat interval.
pub const PHI_THRESHOLD: f64 = 8.0;

/// Heartbeat intervals the failure detector averages over. Unit: samples.
pub const PHI_SAMPLING_WINDOW: usize = 1_000;

/// How long the state of a node declared down is kept (and the node occasionally
/// probed, in case it was a false suspicion) before it is forgotten. Unit: time.
pub const DEAD_NODE_GRACE_PERIOD: Duration = Duration::from_secs(10 * 60);

/// How long a deleted key's tombstone is gossiped before it is garbage collected;
/// peers that missed it for longer are resynchronised in full. Unit: time.
pub const TOMBSTONE_GRACE_PERIOD: Duration = Duration::from_secs(15 * 60);

/// How long a leaving node keeps gossiping its "leaving" mark before it stops, so
/// that peers see it leave rather than fail. Unit: time.
pub const LEAVE_GRACE: Duration = Duration::from_secs(3);

/// Membership events buffered per subscriber before the slowest one lags. Unit: events.
pub const MEMBER_EVENTS: usize = 1_024;

/// The longest key of a node's replicated key-values. Unit: bytes.
pub const MAX_KEY: usize = 256;

/// The longest value of a node's replicated key-values. Unit: bytes.
pub const MAX_VALUE: usize = 4 * 1024;
