//! # odeon-remote: odeon across machines
//!
//! A [`Node`] puts an odeon `System` in a cluster: refs to its actors work from other
//! nodes with the same `ActorRef<A>` type, `tell`, `ask`, `watch` and `stop`.
//!
//! ```
//! use odeon::{Actor, Context, Handler, Message, System};
//! use odeon_remote::{Node, Secret};
//! use serde::{Deserialize, Serialize};
//!
//! struct Greeter;
//! impl Actor for Greeter {}
//! #[derive(Serialize, Deserialize)]
//! struct Hello(String);
//! impl Message for Hello { type Reply = String; }
//! impl Handler<Hello> for Greeter {
//!     fn handle(&mut self, m: Hello, _: &mut Context<Self>) -> String { format!("hello, {}", m.0) }
//! }
//! odeon_remote::remote_actor!(Greeter = "doc.Greeter" { Hello = "doc.Hello" });
//!
//! let secret = || Secret::new("a secret of 16+ bytes").unwrap();
//! let (sys_a, sys_b) = (System::new(), System::new());
//! let a = sys_a.block_on(Node::builder("a").secret(secret()).start(&sys_a.handle())).unwrap();
//! let b = sys_b
//!     .block_on(Node::builder("b").secret(secret()).seed(a.listen_addr()).start(&sys_b.handle()))
//!     .unwrap();
//! a.register("greeter", &sys_a.spawn(Greeter)).unwrap();
//! let greeter = sys_b.block_on(b.lookup::<Greeter>("greeter")).unwrap();   // on node a
//! assert!(!greeter.is_local());
//! assert_eq!(sys_b.block_on(greeter.ask(Hello("b".into()))).unwrap(), "hello, b");
//! ```
//!
//! # Delivery semantics
//!
//! Across nodes odeon promises what Erlang and Akka promise, and no more: **at most
//! once**, and **in order per sender–receiver pair**. Failures are reported, never
//! hidden, but a failure report does not say how far a message got.
//!
//! ## At most once
//! Nothing is retried or acknowledged below the actor layer, so nothing is ever
//! delivered twice; a message can be lost when the link it travels on fails or its
//! node is lost. `tell` returning `Ok(())` means the message was queued toward the
//! actor's node (or, on an idle link, already written to it), not that it arrived or
//! was handled. Exactly-once *effects* need the
//! application's own protocol: an ask, a retry, and a handler that recognises a
//! repeated request (by an id it carries).
//!
//! ## Per-pair FIFO
//! Messages sent one after another from one sender (an actor, or one thread) to one
//! remote actor are handled in the order they were sent, when they are delivered.
//! There may be gaps (a lost message, a tell refused with `Full`), never reordering.
//! Messages from different senders to one actor have no order among themselves. (One
//! link carries everything between two nodes, the outbox is a FIFO, and the receiving
//! node handles a link's frames in arrival order.)
//!
//! ## What the errors mean
//! - `TellError::Unreachable` / `AskError::Unreachable` *returned by the call*: the
//!   node had already left or been lost; nothing was sent.
//! - `AskError::Unreachable` *completing an ask later*: the node was declared lost
//!   before a reply arrived. The request **may or may not have been handled**: it may
//!   have been lost on the way, or handled with its reply lost, and if the other node
//!   had not reached the same verdict it may even be handled after the failure was
//!   reported (bytes already in the network arrive before the link closes). Treat it
//!   as "outcome unknown", like `AskError::Timeout` (whose late reply is discarded).
//! - `TellError::Full` / `AskError::Full`: the bounded outbox toward that node is full
//!   (see Backpressure); the message was not sent and comes back in the error.
//!
//! ## When a node is lost, and when it comes back
//! A peer node is declared lost when no link to it is back within `lost_after`
//! ([`NodeBuilder::lost_after`]; a handshake under way then may take up to another
//! `lost_after`), when its link carries nothing (not even a heartbeat,
//! [`NodeBuilder::heartbeat_interval`]) for `lost_after` whatever gossip says, when
//! the gossip failure detector declares it down while no link to it is up, or when it leaves (then it is logged
//! as a leave, not a failure). At that moment, once, on this node:
//! - pending asks to it fail with `AskError::Unreachable`;
//! - watchers of its actors get `Terminated` with `StopReason::NodeLost`, and local
//!   actors linked to its actors stop with `StopReason::LinkFailed`;
//! - refs to its actors become dead: `is_alive()` is false, sends fail with
//!   `Unreachable`, and waiting `send().await`s wake up and fail;
//! - its link is closed (socket and driver) and **every frame still queued on it is
//!   dropped**: it is never delivered later, even if the node comes back. A best-effort
//!   last frame tells the other node, so that it reaches the same verdict.
//!
//! If the same node comes back (a partition heals, a false suspicion), links to it
//! start afresh: an empty outbox, no pending asks, no watches. Both ends agree on
//! that: each link names the state ("session") each end keeps about the other, and a
//! node that did not see the loss itself (its own `lost_after` had not run out) learns
//! of it when the next link opens and loses the peer too, with the same effects, before
//! anything else crosses. Refs obtained before the loss stay dead; get new ones (with
//! [`Node::lookup`], or in a message). A node
//! restarted under the same name is a new *incarnation* (its [`NodeId`] differs):
//! refs to the old incarnation never reach the new one.
//!
//! ## Backpressure
//! Each peer node has an outbox of at most `outbox_bound` messages
//! ([`NodeBuilder::outbox_bound`], default [`defaults::OUTBOX_BOUND`]) waiting to be
//! written. When it is full, `tell` fails with `TellError::Full` and gives the
//! message back, `ask` fails with `AskError::Full`, and `ActorRef::send(..).await`
//! waits for room, as with a local bounded mailbox. Runtime signals (replies, stops,
//! watch and link notices, heartbeats) are never refused or dropped by the bound.
//!
//! ## Heartbeats
//! A link idle for `heartbeat_interval` (default [`defaults::HEARTBEAT_INTERVAL`],
//! at most a quarter of `lost_after`, and at most a quarter of the *peer's*
//! `lost_after`, which it announces when the link opens) sends a small heartbeat frame,
//! so that a silent link (a stalled peer, a partition that keeps sockets open) is told
//! from a quiet one within `lost_after`, independently of gossip. A long frame that is
//! still arriving counts as traffic.
//!
//! ## Atomic batches and reservations across nodes
//! `actor_ref.atomic(..)` / `batch().send()` and `actor_ref.reserve()` work on remote
//! refs (issue 16; `odeon::sharing` has the full contract). A batch travels as one
//! frame and enters the actor's mailbox at its node as one run: no other sender's
//! message is handled between its messages, and it is handled whole or not at all.
//! A reservation costs one round trip to open; each message through it then costs
//! a remote tell, the lease is kept at the actor's node, and when this node loses
//! the holder's node, the holder's reservations of its actors end (as a release).
//! Refs to mobile actors refuse both with the typed `Remote` errors. An object type
//! declared with [`remote_object!`] makes `odeon::Bestowed<T>` serializable: a handle
//! sent to another node works there, each use running inside the owner's turn at the
//! owner's node. The frames (`Batch`, `Reserve`, `SessionTell`, `SessionAsk`,
//! `Release`, `ObjectTell`, `ObjectAsk`) are appended to
//! protocol version 4 and sent only when an application uses these: every node of a
//! cluster must run a build that has them before one does.
//!
//! # Layers (DESIGN.md §3)
//! - [`Node`] (`node/`): the builder, one link per peer node with reconnect and
//!   backoff, remote refs, the registry, remote spawn, remote watch, node loss;
//! - [`interface`]: [`remote_actor!`] declares which messages an actor accepts from
//!   other nodes, under stable wire names, and checks at compile time that they
//!   serialize;
//! - `wire`: bounded length-prefixed frames, the postcard codec and the versioned
//!   schema of what crosses a link;
//! - `transport`: TCP links that open only after both sides proved they know the
//!   cluster secret with a password-authenticated key exchange (SPAKE2 and key
//!   confirmation: nothing on the wire lets anyone test guesses offline), and a
//!   listener that refuses bad input (wrong secret, garbage, oversized or truncated
//!   frames, silence) with a counter and a rate-limited warning while it keeps serving
//!   everyone else, at most a bounded number of handshakes at a time (its docs have
//!   the security model: what can be done with and without the secret);
//! - `membership`: who is in the cluster and where their links listen, with
//!   failure detection and a small replicated key-value state per node (chitchat's
//!   gossip, every datagram authenticated with the cluster secret).
//!
//! - `observe`: [`NodeBuilder::metrics_http`] serves `GET /metrics` (Prometheus text
//!   format) with the node's [`Metrics`] and whatever the `metrics` facade recorded;
//!   the crate's `observe` feature adds odeon's own `odeon_*` metrics and
//!   `odeon.handle` spans (then `SystemBuilder::observe(true)`; `docs/observe.md`).
//!   The same address serves a live dashboard at `/` and its data at
//!   `/api/snapshot` and `/api/events` ([`dashboard`]).
//!
//! `wire`, `transport` and `membership` are public only for the fuzz targets and the
//! benchmarks, and hidden from the documentation: they are internals, not a stable
//! API, and may change in any release. What applications need from them is at the
//! crate root: [`Secret`], [`TlsConfig`], [`NodeId`].
//!
//! ## Mutual TLS (optional)
//!
//! [`NodeBuilder::tls`] puts mutual TLS 1.3 (rustls) between TCP and the SPAKE2
//! handshake, which then runs inside the TLS stream.
//! The two do different jobs: TLS gives the link's traffic confidentiality and
//! integrity (the SPAKE2 handshake alone authenticates the opening but leaves every later
//! frame readable and alterable on the wire), and it ties both ends to certificates from
//! the cluster's CA; the SPAKE2 handshake still proves membership of the cluster, so a
//! node needs both a certificate and the secret. A peer that fails TLS (no certificate,
//! one from another CA, plaintext, garbage) is refused, logged and counted like any
//! other. Certificate requirements: [`TlsConfig`]. Without TLS, links are plain
//! TCP exactly as before.
//!
//! TLS is the crate's `tls` cargo feature, on by default. A build that does not want
//! rustls (and ring's C and assembly) turns it off:
//!
//! ```toml
//! odeon-remote = { version = "0.1", default-features = false }
//! ```
//!
//! Then `NodeBuilder::tls`, `TlsConfig` and `TlsConfigError` do not exist: code that
//! configures TLS is a compile error (`no method named tls`), never a node that
//! silently runs in plaintext. Such a node speaks plain TCP and refuses a TLS peer
//! (`HandshakeError::PeerUsesTls` on its side). Compression (zstd) is not
//! optional: chitchat, the membership layer, depends on it.

pub mod dashboard;
pub mod defaults;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod inline;
pub mod interface;
// Internal, hidden from the docs: public for fuzz/ and the benchmarks only.
#[doc(hidden)]
pub mod membership;
pub mod metrics;
// Not wired to links yet: see its docs.
mod migration;
mod node;
mod observe;
mod throttle;
// Internal, hidden from the docs: public for fuzz/ and the benchmarks only.
#[doc(hidden)]
pub mod transport;
// Internal, hidden from the docs: public for fuzz/ and the benchmarks only.
#[doc(hidden)]
pub mod wire;

pub use metrics::{DurationHistogram, Metrics, MigrationStats};
pub use migration::api::{
    MigrateError, MigrateExt, MigrateFailure, MigrateFromHandler, MigrateRefusal, MigrateResult,
    Migration, Moved,
};
pub use migration::steps::TARGET as MIGRATION_STEPS_TARGET;
pub use node::{Node, NodeBuilder, NodeError, RegistryError, SpawnError, Spawnable};
pub use transport::Secret;
#[cfg(feature = "tls")]
pub use transport::{TlsConfig, TlsConfigError};
pub use wire::NodeId;
