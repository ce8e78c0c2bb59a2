//! What crosses an open link: the node-to-node protocol after the handshake.
//!
//! Every frame is one [`Traffic`] value. Actors are addressed by their export token on
//! the node that hosts them (a random number: see [`WireRef::token`]); message and actor types by their stable wire names (see
//! [`remote_actor!`](crate::remote_actor)), never by Rust type names, so two builds
//! agree as long as the names do.

use std::borrow::Cow;
use std::net::SocketAddr;

use serde::{Deserialize, Serialize};

use super::NodeId;

/// One frame of node-to-node traffic.
///
/// The bytes of a message (its wire name and payload, and a reply's) are borrowed
/// where they can be: a sender encodes a frame from its `&'static` wire name and the
/// payload it just encoded, and a reader decodes a frame in place, without a copy or
/// an allocation per message. A decoded frame lives as long as the
/// bytes it was read from; [`Outcome::into_owned`] detaches a reply.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Traffic<'a> {
    /// First frame from the dialer of a new link: where it listens, and which
    /// sessions it holds (see `node/peer.rs`: a session is one life of a node's state
    /// about a peer; a node that lost its peer starts a new one).
    Attach {
        /// The dialer's listen address (for links back and for refs it hands out).
        listen: SocketAddr,
        /// The dialer's session with the listener.
        session: u64,
        /// The listener's session the dialer last linked with, if any.
        known: Option<u64>,
        /// The longest the listener may stay silent on this link (it sends a
        /// heartbeat if it has nothing else): a fraction of the dialer's `lost_after`.
        /// Unit: milliseconds.
        quiet_ms: u32,
    },
    /// The listener keeps this link as the one link of the pair.
    Attached {
        /// The listener's listen address.
        listen: SocketAddr,
        /// The listener's session with the dialer.
        session: u64,
        /// The longest the dialer may stay silent on this link (see `Attach`). Unit:
        /// milliseconds.
        quiet_ms: u32,
    },
    /// The listener lost the dialer since their last link (the session the dialer
    /// knows is gone): the dialer loses the listener too, then links afresh.
    Reset,
    /// The listener already has the pair's link (or its own dial wins the race):
    /// the dialer closes this one and uses the other.
    Duplicate,
    /// A one-way message.
    Tell {
        /// The target's export token on this node ([`WireRef::token`]).
        to: u64,
        /// The message's wire name.
        #[serde(borrow)]
        message: Cow<'a, str>,
        /// The message, postcard-encoded.
        #[serde(borrow)]
        payload: Cow<'a, [u8]>,
    },
    /// A request; answered by exactly one [`Traffic::Reply`] with the same `request`.
    Ask {
        /// The target's export token on this node ([`WireRef::token`]).
        to: u64,
        /// Chosen by the asking node, unique among its pending requests to this node.
        request: u64,
        /// The message's wire name.
        #[serde(borrow)]
        message: Cow<'a, str>,
        /// The message, postcard-encoded.
        #[serde(borrow)]
        payload: Cow<'a, [u8]>,
    },
    /// The answer to an [`Traffic::Ask`], [`Traffic::Spawn`] or [`Traffic::Lookup`].
    Reply {
        /// The request answered.
        request: u64,
        /// The encoded reply, or why there is none.
        #[serde(borrow)]
        outcome: Outcome<'a>,
    },
    /// Stop the actor.
    Stop {
        /// The target's export token on this node ([`WireRef::token`]).
        to: u64,
    },
    /// Tell the sender when the actor stops (a [`Traffic::Terminated`] with `key`).
    Watch {
        /// The watched actor's id on this node.
        to: u64,
        /// The watcher's key, echoed back.
        key: u64,
    },
    /// Cancel a [`Traffic::Watch`].
    Unwatch {
        /// The watched actor's id on this node.
        to: u64,
        /// The key given to `Watch`.
        key: u64,
    },
    /// A watched actor stopped.
    Terminated {
        /// The actor's id on the sender.
        id: u64,
        /// The watch's key.
        key: u64,
        /// Why it stopped.
        reason: WireStopReason,
    },
    /// Link the actor `to` here with the actor `from` on the sender: `to` stops when
    /// `from` fails ([`Traffic::LinkFailed`]) or the sender is lost.
    Link {
        /// The actor's id on this node.
        to: u64,
        /// The linked actor's id on the sender.
        from: u64,
    },
    /// Cancel a [`Traffic::Link`].
    Unlink {
        /// The actor's id on this node.
        to: u64,
        /// The linked actor's id on the sender.
        from: u64,
    },
    /// The sender's actor `from`, linked with `to`, failed: stop `to`.
    LinkFailed {
        /// The actor's id on this node.
        to: u64,
        /// The failed actor's id on the sender.
        from: u64,
    },
    /// Spawn an actor of a type registered as spawnable on this node; the reply is a
    /// [`WireRef`] to it.
    Spawn {
        /// The request id (see `Ask`).
        request: u64,
        /// The actor type's wire name.
        actor_type: String,
        /// The constructor's arguments, postcard-encoded.
        args: Vec<u8>,
    },
    /// Find an actor registered under `name` on this node; the reply is a [`WireRef`].
    Lookup {
        /// The request id (see `Ask`).
        request: u64,
        /// The registered name.
        name: String,
    },
    /// The sender is leaving the cluster on purpose.
    Leaving,
    /// Sent on an idle link so that the other end can tell a quiet link from a dead
    /// one: a link that carries nothing for `lost_after` is declared dead.
    Heartbeat,
    /// The sender has declared the receiver lost (failed its asks, told its watchers)
    /// and is closing the link: the receiver loses the sender too, so that both ends
    /// agree and the next link between them starts empty.
    Lost,

    // ---- Version 3: mobility (docs/design/mobility.md §5; the steps are those of
    // `crate::migration`). Appended, so the variants above keep their encodings. A
    // mobile actor is addressed by the export token it keeps on every node (§2.2).
    /// A message to a mobile actor, sent by its origin node straight to the next node
    /// of its route (the origin is this link's peer; one hop made).
    MTell {
        /// The actor's export token.
        to: u64,
        /// The origin's sequence number for this actor (step 9).
        seq: u64,
        /// The message's wire name.
        message: String,
        /// The message, postcard-encoded.
        payload: Vec<u8>,
    },
    /// A request to a mobile actor, sent by its origin (see `MTell`); the reply goes
    /// to the origin as a [`Traffic::Reply`] for `request`, from wherever the actor is.
    MAsk {
        /// The actor's export token.
        to: u64,
        /// The origin's sequence number for this actor (step 9).
        seq: u64,
        /// The request id on the origin node.
        request: u64,
        /// The message's wire name.
        message: String,
        /// The message, postcard-encoded.
        payload: Vec<u8>,
    },
    /// A message to a mobile actor passed on by a forwarder (its origin is not the
    /// link's peer).
    Relay {
        /// The actor's export token.
        to: u64,
        /// The message with its origin, sequence number and reply route.
        msg: QueuedMessage,
    },
    /// A runtime notice (`Terminated`) for a mobile actor that watched someone, sent on
    /// by the node holding the actor's old cell.
    Notice {
        /// The actor's export token.
        to: u64,
        /// The node that sends it (the stub's node).
        origin: NodeId,
        /// The origin's sequence number for this actor (step 9).
        seq: u64,
        /// The watched actor's id.
        id: u64,
        /// Why the watched actor stopped.
        reason: WireStopReason,
    },
    /// Hand-over step 2: the frozen actor's snapshot, from the source to the target.
    MigrateOffer {
        /// The move's id, unique per source node (like request ids).
        migration: u64,
        /// The actor's identity (birth node, id), token and type.
        actor: WireRef,
        /// Moves committed before this one.
        epoch: u32,
        /// The postcard-encoded state (empty if chunked).
        #[serde(with = "super::bytes")]
        state: Vec<u8>,
        /// The mailbox at freeze, in order.
        mailbox: Vec<QueuedMessage>,
        /// Per origin node, the largest sequence number taken (step 9).
        high_water: Vec<(NodeId, u64)>,
        /// Remote watches of the actor: (watcher node, key).
        watchers: Vec<(NodeId, u64)>,
        /// Remote links: (node, its actor's id).
        links: Vec<(NodeId, u64)>,
        /// Names registered for the actor.
        names: Vec<String>,
        /// How many [`Traffic::MigrateChunk`] frames follow (0: `state` is whole).
        chunks: u32,
    },
    /// Part of a state too large for one frame (`max_frame`).
    MigrateChunk {
        /// The move.
        migration: u64,
        /// Which chunk, from 0.
        index: u32,
        /// The chunk's bytes.
        #[serde(with = "super::bytes")]
        bytes: Vec<u8>,
    },
    /// Hand-over step 3: the target holds the copy and its own route is drained.
    MigrateReady {
        /// The move.
        migration: u64,
    },
    /// Hand-over step 3: the target does not take the actor.
    MigrateRefused {
        /// The move.
        migration: u64,
        /// Why.
        why: WireMigrateRefusal,
    },
    /// Hand-over step 4: the source committed; the target activates (step 5).
    MigrateCommit {
        /// The move.
        migration: u64,
        /// The actor's epoch from now on.
        epoch: u32,
        /// What the source held since freeze, in order.
        held: Vec<QueuedMessage>,
        /// The high-water marks at commit.
        high_water: Vec<(NodeId, u64)>,
    },
    /// The source gave up (timeout): the target drops its copy.
    MigrateAbort {
        /// The move.
        migration: u64,
    },
    /// Step 7: "the actor is not here; flush through me and switch".
    Hint {
        /// The actor's export token.
        to: u64,
        /// Where the sender's route leads (informational).
        at: NodeId,
        /// The sender's epoch.
        epoch: u32,
    },
    /// Steps 8 and 11: travels along routes like a message; the owner acknowledges it.
    Flush {
        /// The actor's export token.
        to: u64,
        /// The node switching or relocating.
        origin: NodeId,
        /// Which switch or relocation of the origin.
        nonce: u64,
        /// `None` for a switch; for a relocation, the node the origin sent the probe
        /// to (a [`Traffic::Gone`] names it).
        via: Option<NodeId>,
    },
    /// The owner got the flush `nonce` of the receiver: route to the sender.
    FlushAck {
        /// The actor's export token.
        to: u64,
        /// The flush's nonce.
        nonce: u64,
        /// The owner's epoch.
        epoch: u32,
        /// The move the owner is frozen for, if it is frozen.
        frozen_for: Option<u64>,
    },
    /// A relocation flush reached a node with no route: no copy that way.
    Gone {
        /// The actor's export token.
        to: u64,
        /// The flush's nonce.
        nonce: u64,
        /// The flush's `via`.
        via: NodeId,
    },
    /// Step 10: the sender no longer routes through the receiver (one pin released).
    Unpin {
        /// The actor's export token.
        to: u64,
    },
    /// Step 11: the sender declared a node lost; a flush sent through it may be lost.
    Reflush {
        /// The actor's export token.
        to: u64,
        /// Hops left for passing it on to holders.
        ttl: u8,
    },
    /// Step 11: the sender's route died; flush along your route on its behalf.
    Locate {
        /// The actor's export token.
        to: u64,
        /// The relocation's nonce.
        nonce: u64,
        /// Sent again after a `Reflush` (the receiver pinned the sender already).
        again: bool,
    },
    /// Step 5 → 6: the new host tells the birth node.
    Located {
        /// The actor's export token.
        to: u64,
        /// The new epoch.
        epoch: u32,
    },
    /// §3.3: where an ask is now ("sent to `at`", or received there if `confirmed`).
    AskAt {
        /// The request id on the receiver (the ask's origin).
        request: u64,
        /// The node it went to.
        at: NodeId,
        /// Its hops then (most hops wins).
        hops: u8,
        /// Reported by `at` on receipt.
        confirmed: bool,
    },
    /// §3.5: where a watch of a mobile actor is now (as `AskAt`).
    WatchAt {
        /// The watched actor's id.
        actor: u64,
        /// The watch's key.
        key: u64,
        /// The node it went to.
        at: NodeId,
        /// Its hops then.
        hops: u8,
        /// Reported by `at` on receipt.
        confirmed: bool,
    },
    /// §3.6 (v2): a moved supervised child failed at its host.
    ChildFailed {
        /// The actor's export token.
        to: u64,
        /// Why.
        reason: WireStopReason,
    },
    /// §3.6 (v2): the supervisor restarted the child; replace its state.
    Restart {
        /// The actor's export token.
        to: u64,
        /// The fresh postcard-encoded state.
        state: Vec<u8>,
    },
    /// A [`Traffic::Tell`] with the sender's trace context: sent instead of `Tell` only
    /// by a node built with the `observe` feature and switched on, while a trace
    /// context is current (`docs/observe.md`). Appended last: every earlier variant
    /// keeps its encoding.
    TracedTell {
        /// As in `Tell`.
        to: u64,
        /// As in `Tell`.
        #[serde(borrow)]
        message: Cow<'a, str>,
        /// As in `Tell`.
        #[serde(borrow)]
        payload: Cow<'a, [u8]>,
        /// The sender's span: the receiver's `odeon.handle` span is its child.
        trace: WireTrace,
    },
    /// A [`Traffic::Ask`] with the sender's trace context (as `TracedTell`).
    TracedAsk {
        /// As in `Ask`.
        to: u64,
        /// As in `Ask`.
        request: u64,
        /// As in `Ask`.
        #[serde(borrow)]
        message: Cow<'a, str>,
        /// As in `Ask`.
        #[serde(borrow)]
        payload: Cow<'a, [u8]>,
        /// The sender's span.
        trace: WireTrace,
    },
    /// A [`Traffic::Reply`] with the trace context of the span that replied.
    TracedReply {
        /// As in `Reply`.
        request: u64,
        /// As in `Reply`.
        #[serde(borrow)]
        outcome: Outcome<'a>,
        /// The replying span (the handler's `odeon.handle`).
        trace: WireTrace,
    },
    /// Sharing across nodes (issue 16; appended last, see `wire/sharing.rs`): an
    /// atomic batch, handled back to back by the actor `to`, all or nothing.
    Batch {
        /// The target's export token on this node ([`WireRef::token`]).
        to: u64,
        /// The messages, in order.
        #[serde(borrow)]
        items: Vec<BatchItem<'a>>,
    },
    /// Opens a reservation of the actor `to`, answered by a [`Traffic::Reply`] to
    /// `request` (an empty `Ok` once granted). `request` also names the session.
    Reserve {
        /// The target's export token on this node ([`WireRef::token`]).
        to: u64,
        /// The request id, and the session's name in later frames.
        request: u64,
        /// The lease, counted at this node from the grant. Unit: milliseconds.
        lease_ms: u64,
    },
    /// A one-way message inside reservation `session`.
    SessionTell {
        /// The session (its `Reserve`'s request id).
        session: u64,
        /// The message's wire name.
        #[serde(borrow)]
        message: Cow<'a, str>,
        /// The message, postcard-encoded.
        #[serde(borrow)]
        payload: Cow<'a, [u8]>,
    },
    /// A request inside reservation `session`, answered by a [`Traffic::Reply`].
    SessionAsk {
        /// The session (its `Reserve`'s request id).
        session: u64,
        /// Chosen by the asking node (as in `Ask`).
        request: u64,
        /// The message's wire name.
        #[serde(borrow)]
        message: Cow<'a, str>,
        /// The message, postcard-encoded.
        #[serde(borrow)]
        payload: Cow<'a, [u8]>,
    },
    /// Ends reservation `session` once what was sent through it is handled (or
    /// gives it up before the grant).
    Release {
        /// The session (its `Reserve`'s request id).
        session: u64,
    },
    /// A one-way use of a bestowed object exported here ([`ObjectRef::token`]).
    ObjectTell {
        /// The object's export token on this node.
        object: u64,
        /// The message's wire name (`remote_object!`).
        #[serde(borrow)]
        message: Cow<'a, str>,
        /// The message, postcard-encoded.
        #[serde(borrow)]
        payload: Cow<'a, [u8]>,
    },
    /// A use that wants a reply: a [`Traffic::Reply`] whose bytes are a postcard
    /// `Result<Reply, u8>` (the code of the owner's node's `BestowError`).
    ObjectAsk {
        /// The object's export token on this node.
        object: u64,
        /// Chosen by the asking node (as in `Ask`).
        request: u64,
        /// The message's wire name.
        #[serde(borrow)]
        message: Cow<'a, str>,
        /// The message, postcard-encoded.
        #[serde(borrow)]
        payload: Cow<'a, [u8]>,
    },
}

pub use super::mobility::{QueuedMessage, WireMigrateRefusal};
pub use super::sharing::{BatchItem, ObjectRef};

/// A W3C trace context on the wire: the fields of a `traceparent` header (version
/// `00`) as raw bytes, big-endian, 25 bytes in all.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct WireTrace {
    /// The trace id.
    pub trace_id: [u8; 16],
    /// The sending (parent) span's id.
    pub span_id: [u8; 8],
    /// The trace flags (bit 0: sampled).
    pub flags: u8,
}

impl Outcome<'_> {
    /// The same outcome, owning its bytes (to keep it past the frame it came in).
    pub fn into_owned(self) -> Outcome<'static> {
        match self {
            Outcome::Ok(bytes) => Outcome::Ok(Cow::Owned(bytes.into_owned())),
            Outcome::Failed(f) => Outcome::Failed(f),
        }
    }
}

/// The result carried by a [`Traffic::Reply`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Outcome<'a> {
    /// The postcard-encoded reply.
    Ok(#[serde(borrow)] Cow<'a, [u8]>),
    /// Why there is no reply.
    Failed(WireFailure),
}

/// Why a remote request failed, as the serving node saw it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum WireFailure {
    /// The actor stopped (or was never there).
    Stopped,
    /// Its handler panicked.
    Panicked,
    /// Its bounded mailbox was full.
    Full,
    /// The serving node refused the request (unknown type or name, bad payload).
    Rejected(String),
}

/// Why a watched actor stopped, as far as a remote watcher needs to know.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum WireStopReason {
    /// Asked to stop (version 3 also sent it for a kill, a collection and a parent's
    /// stop).
    Normal,
    /// A failure, as its `Display` text (version 3's only failure; a version-4 node
    /// sends it only for a failure it has no variant for).
    Failed(String),
    /// The system shut down.
    Shutdown,
    /// Version 4: the reason itself, so that a remote watcher sees what a local one
    /// would. A panic: its message.
    Panicked(String),
    /// `Context::fail`: the error's text.
    FailedWith(String),
    /// A linked actor failed: its id on this actor's node.
    LinkFailed(u64),
    /// A supervisor gave up.
    RestartLimit,
    /// `on_start` failed: its message.
    StartFailed(String),
    /// Its own view of another node's loss (a linked remote actor's node).
    NodeLost,
    /// Killed.
    Killed,
    /// Collected: no reference was left.
    Unreferenced,
    /// Its parent or supervisor stopped.
    ParentStopped,
}

/// An actor ref on the wire: enough to reach the actor from any node of the cluster.
///
/// It carries no address: a node reaches the actor's node through the address
/// membership (or its own link to that node) gives, so a ref inside a message cannot
/// make a node dial anywhere. A ref to a node the receiver does not know resolves to a
/// dead ref.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct WireRef {
    /// The node hosting the actor.
    pub node: NodeId,
    /// The actor's id on that node: its identity (`ActorRef::id`), not an address.
    pub id: u64,
    /// The random token under which the node exported the actor, drawn from the OS
    /// when the actor is first exported. Frames address the actor by it, so a peer
    /// can reach only the actors it was given a ref to (or looked up by name).
    pub token: u64,
    /// The actor type's wire name.
    pub actor_type: String,
}
