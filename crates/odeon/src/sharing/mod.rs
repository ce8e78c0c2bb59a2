//! Safe sharing: atomic batches, atomic reservations and `bestow` (Encore's constructs,
//! completed; see `docs` of each type).
//!
//! | I want to… | use |
//! |---|---|
//! | send several messages that the actor handles back to back | [`ActorRef::atomic`], [`ActorRef::batch`] → [`Batch`] |
//! | ask, look at the reply and send again, with no other sender in between | [`ActorRef::reserve`] → [`Reservation`] |
//! | lend out an object my actor owns, every use running on my turn | [`Context::bestow`] → [`Bestowed`] |
//!
//! # How each one works, and what it costs
//!
//! None of them adds work to the plain `tell`/turn path: an actor that never uses them
//! runs exactly the code it ran before.
//!
//! 1. **Batch** (`batch.rs`). The messages become ordinary message nodes on the
//!    sender's side, linked to each other in order, and enter the mailbox as one run
//!    with the same single atomic `swap` a `tell` does (`mailbox/chain.rs`). No other
//!    sender's node can land between them; the turn pops and delivers them one by
//!    one, each counted against the turn's budget and possibly suspended (async
//!    handler) on its own. A batch of `n` messages costs `n` nodes and one push: a
//!    batch of one costs what a `tell` costs.
//! 2. **Reservation** (`reserve.rs`, `session.rs`). `reserve` sends a *turn node* in
//!    mailbox order (so reservations queue FIFO with the rest of the mail). When the
//!    actor reaches it, the node starts a *session*: a future that the turn keeps as
//!    its pending async handler. Macro-step already guarantees that the actor handles
//!    nothing from its mailbox while such a future is pending; the session delivers
//!    only the nodes the holder queues through the reservation. It completes when the
//!    holder releases it (after the queued nodes), when the lease expires, or on stop.
//!    After `budget` messages it gives the worker up (`Cell::yield_turn`: the turn ends
//!    and the actor goes to the back of a run queue, still reserved). One queue at a
//!    time is read, by one consumer, so Encore's double-scheduling race cannot occur:
//!    the holder's pushes wake the session's waker, which goes through the cell's one
//!    `wake` state machine. Per message: one node and a short lock on the session's
//!    queue (no mailbox `swap`); the lease timer is looked at once per poll.
//! 3. **Bestow** (`bestow.rs`). The handles share a slot (owner, revoked flag); the
//!    object sits on a cache line of its own and is touched only on the owner's turn:
//!    each use is one node holding the message, a pointer to the object and (for an
//!    ask) the reply channel inline (`mailbox/job.rs`), pushed to the owner's mailbox
//!    and run there as a runtime signal; no boxed closure, no registry, no tracing,
//!    and no reference count moved per use (the last handle frees the object, behind
//!    any uses still queued). The owner reaches the object with [`Bestowed::with`],
//!    which takes its `Context` as proof.
//!
//! Encore's ping (empty messages from one sender, `odeon-sharing-bench ping`), in
//! instructions per message under callgrind: plain `tell` about 355, one batch per
//! ping about 367 (1.03×), the whole stream in one reservation about 335, a bestowed
//! handle about 405 (1.14×). (Before batches and bestowed handles learned to go to
//! other nodes they were about 342 and 360–390: the local paths now check which kind
//! of target they have.) A bestowed use once cost 1.4–1.5× a plain `tell` in CPU and
//! wall time while each use cloned the handle's `Arc`, whose count then crossed
//! between the sender's and the owner's cores twice per use; a use now carries a
//! pointer instead (see `bestow.rs` and `crates/odeon-bench/sharing/README.md` for the
//! figures). Encore measured 5.3× for bestow and 4.8× for its atomic mailbox.
//!
//! # Across nodes (with `odeon-remote`)
//!
//! Batches and reservations work on refs to actors on other nodes, with the same
//! guarantees as locally; each has a cost and a failure behaviour of its own.
//!
//! - **Batch to a remote ref** ([`ActorRef::atomic`], [`Batch::send`]). The whole
//!   batch travels as **one frame** (one outbox place) and the actor's node decodes
//!   every message before pushing any, then pushes them as one run (the local
//!   batch path): no other sender's message, local or from any node, is handled
//!   between them. It is all or nothing *at the receiving node*: a frame arrives
//!   whole or not at all (a lost link drops whole frames), a message that does not
//!   decode fails the whole batch before anything is pushed, and the push is one
//!   atomic operation. Asks inside it get their replies as remote asks do.
//!   Failures: refused whole, nothing sent, with [`BatchError::NotRemote`] (a
//!   message not in the actor's remote interface), [`BatchError::Unreachable`]
//!   (node gone), [`BatchError::Stopped`] (actor known stopped),
//!   [`BatchError::Full`] (outbox full); after sending, a stopped actor fails the
//!   batch's asks with [`AskError::Stopped`](crate::AskError::Stopped) and a lost
//!   node with `Unreachable` (outcome unknown, as for any remote ask, but the batch
//!   was handled whole or not at all). Cost: one frame for `n` messages instead of
//!   `n` frames.
//! - **Reservation of a remote ref** ([`ActorRef::reserve`]). (Batches and
//!   reservations are of actors; a bestowed object is reached through its owner,
//!   below.) Opening it costs one
//!   round trip: the request travels to the actor's node, which reserves the actor
//!   there (in mailbox order, FIFO with the rest of its mail) and answers once
//!   granted. Each message through the [`Reservation`] then costs what a remote
//!   `tell` (or `ask`) costs, and travels tagged with the session; the actor's node
//!   hands it to its local reservation, in order. Dropping or releasing the
//!   reservation sends a release, which arrives after the messages sent before it.
//!   The **lease is kept at the actor's node**, counted from its grant there: a slow
//!   or stalled holder cannot extend it. **Losing the holder's node** (its link is
//!   declared lost) ends the reservation at the actor's node, as a release: what
//!   arrived is handled, then the other mail flows. The holder's
//!   [`Reservation::ended`] is its own view: `Released`, `LeaseExpired` by its own
//!   count (which starts later than the owner's), or [`Ended::NodeLost`]; an end
//!   decided at the actor's node alone (the actor stopped or moved) shows as asks
//!   failing with `Stopped`, and tells through it are then dropped (at most once,
//!   like remote tells). Reserving a stopped actor fails with
//!   [`ReserveError::Stopped`], one on a lost node with
//!   [`ReserveError::Unreachable`].
//! - **Mobile actors.** A reserved actor that is asked to move (a handler calls
//!   `migrate_to`, or a move request arrives) **ends the reservation**
//!   ([`Ended::ActorStopped`]) and then moves. A ref that reaches a mobile actor
//!   through the mobility layer (from another node, or a local ref after the actor
//!   moved away) cannot keep a batch whole or a session pinned to one node on the
//!   way, so it refuses batches and reservations whole with [`BatchError::Remote`]
//!   and [`ReserveError::Remote`] (the batch's asks fail with `Unreachable`).
//! - **Bestowed handles on other nodes.** When the object type's messages are in a
//!   remote interface (`odeon_remote::remote_object!`), [`Bestowed`] is
//!   `Serialize + Deserialize` and travels inside remote messages (the owner's node
//!   keeps the handle under a random token, as it does for an exported actor). A use
//!   at another node is one remote message (a tell, or an ask with its reply) to the
//!   owner's node, where it runs as a local use: inside the owner's turn, one at a
//!   time with the owner's own messages. Revoked → [`BestowError::Revoked`], owner
//!   stopped → [`BestowError::OwnerStopped`], as locally; owner's node lost →
//!   [`BestowError::Unreachable`]; a message outside the object's remote interface
//!   → [`BestowError::NotRemote`]. Limits: [`Bestowed::atomic`] runs a closure and
//!   fails with [`BestowError::Remote`] on such a handle (send one message that does
//!   the whole operation instead), `with`/`revoke` stay with the owner, and a handle
//!   whose type has no `remote_object!` declaration is not serializable (a remote
//!   message carrying it does not compile). Sent back to the owner's node, a
//!   handle is local again. A revoked handle that was sent to another node stays in
//!   the owner's node's table (its object already dropped) until that node stops.
//! - A reservation taken on the actor's own node holds back mail from other nodes
//!   too, which waits in order.

mod batch;
mod bestow;
mod bestow_remote;
mod reserve;
mod session;

pub use batch::{Batch, DetachedBatch};
pub use bestow::{Bestowed, BestowedAsk, Serve};
#[doc(hidden)]
pub use bestow_remote::{
    error_code as bestow_error_code, error_from_code as bestow_error_from_code,
};
pub use reserve::{Reservation, Reserve};

#[allow(unused_imports)] // the intra-doc links above
use crate::{ActorRef, Context};

/// Why an atomic batch was not sent. Its messages are dropped; their asks fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BatchError {
    /// The actor has stopped.
    #[error("the actor has stopped")]
    Stopped,
    /// The actor's bounded mailbox has fewer free slots than the batch has messages.
    #[error("the actor's mailbox has no room for the whole batch")]
    Full,
    /// The actor is a mobile actor that moved to another node (or the ref goes
    /// through a transport without batches): the batch cannot be kept whole on the
    /// way. Batches to ordinary remote refs are supported.
    #[error("atomic batches to this actor are not supported (it moved to another node)")]
    Remote,
    /// The actor's node is gone (left or lost): nothing was sent.
    #[error("the actor's node cannot be reached")]
    Unreachable,
    /// A message of the batch to a remote actor is not in its remote interface (or
    /// did not encode, or the batch is larger than a frame): nothing was sent.
    #[error("a message of the batch cannot be sent to the remote actor")]
    NotRemote,
}

/// Why a reservation could not be obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReserveError {
    /// The actor had stopped, or stopped before granting it.
    #[error("the actor stopped before the reservation was granted")]
    Stopped,
    /// The actor is a mobile actor that moved to another node (or the ref goes
    /// through a transport without reservations). Ordinary remote refs can be
    /// reserved.
    #[error("this actor cannot be reserved (it moved to another node)")]
    Remote,
    /// The actor's node could not be reached, or was lost before the grant.
    #[error("the actor's node cannot be reached")]
    Unreachable,
}

/// How a [`Reservation`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ended {
    /// The holder released it (or dropped it) and its messages were handled.
    Released,
    /// Its lease expired; what was still queued through it was dropped.
    LeaseExpired,
    /// The actor stopped, was asked to stop, failed, or a handler asked it to move.
    ActorStopped,
    /// The reservation of a remote actor: the link between the holder's node and
    /// the actor's node was lost (at the actor's node this ends it as a release).
    NodeLost,
}

/// Why a use of a [`Bestowed`] object failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BestowError {
    /// The owner has stopped (or stopped before handling the use): the object is gone.
    #[error("the owner of the bestowed object has stopped")]
    OwnerStopped,
    /// The owner revoked the object.
    #[error("the bestowed object was revoked by its owner")]
    Revoked,
    /// `with` or `revoke` was called with a context that is not the owner's (always
    /// so for a handle to an object on another node).
    #[error("only the owner may do this, from its own handler")]
    NotOwner,
    /// The owner's node cannot be reached (it left or was lost): a handle to an
    /// object on another node. After an ask was sent, the use may or may not have
    /// run (outcome unknown, as for a remote ask).
    #[error("the node of the bestowed object's owner cannot be reached")]
    Unreachable,
    /// A handle to an object on another node: the message is not in the object's
    /// remote interface (`remote_object!`), or did not encode.
    #[error("this message cannot be sent to the bestowed object on another node")]
    NotRemote,
    /// A handle to an object on another node: [`Bestowed::atomic`] runs a closure,
    /// which cannot travel.
    #[error("atomic blocks on a bestowed object need the owner's node")]
    Remote,
}
