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
//! 1. **Batch** (`batch.rs`). The messages become ordinary nodes on the sender's side
//!    and travel as one runtime signal. When the signal is handled it moves them, in
//!    order, into the turn's *held* queue (the queue stash and supervision already
//!    use), which the turn drains before it pops the mailbox again. So no other
//!    sender's message can come between them, and each is still delivered, counted
//!    against the turn's budget and possibly suspended (async handler) on its own.
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
//!    `wake` state machine.
//! 3. **Bestow** (`bestow.rs`). The object sits in a slot shared by its handles but is
//!    touched only on the owner's turn: each use is a closure run as a runtime signal
//!    (one node, one boxed closure; no tracing, no registry), and the owner reaches it
//!    with [`Bestowed::with`], which takes its `Context` as proof.
//!
//! Out of scope for now: actors on other nodes (a batch or a reservation of a remote
//! actor fails with a `Remote` error; a `Bestowed` cannot be serialized), and
//! reservations of mobile actors that move while reserved.

mod batch;
mod bestow;
mod reserve;
mod session;

pub use batch::Batch;
pub use bestow::{Bestowed, BestowedAsk, Serve};
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
    /// The actor is on another node; batches are local only for now.
    #[error("atomic batches to remote actors are not supported")]
    Remote,
}

/// Why a reservation could not be obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReserveError {
    /// The actor had stopped, or stopped before granting it.
    #[error("the actor stopped before the reservation was granted")]
    Stopped,
    /// The actor is on another node; reservations are local only for now.
    #[error("reservations of remote actors are not supported")]
    Remote,
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
    /// `with` or `revoke` was called with a context that is not the owner's.
    #[error("only the owner may do this, from its own handler")]
    NotOwner,
}
