//! Moving an actor, as user code sees it (design §1.2): [`MigrateExt::migrate_to`] on
//! a ref, [`MigrateFromHandler::migrate_to`] on a handler's context, and their outcome.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use odeon::{ActorRef, Context, MobileActor};
use tokio::sync::oneshot;

use crate::wire::{NodeId, WireMigrateRefusal};

/// The outcome of a move.
pub type MigrateResult = Result<Moved, MigrateError>;

/// A committed move.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Moved {
    /// The node the actor left.
    pub from: NodeId,
    /// The node it runs on now.
    pub to: NodeId,
    /// Moves committed so far, this one included.
    pub epoch: u32,
    /// Encoded state and queued messages shipped, in bytes.
    pub bytes: usize,
    /// Messages shipped with the state (the mailbox at freeze, plus those that arrived
    /// from other nodes until the commit).
    pub queued: usize,
    /// From freeze to commit, measured at the source.
    pub took: Duration,
}

/// Why a move did not happen.
///
/// ```
/// use odeon_remote::{MigrateError, MigrateFailure, MigrateRefusal};
/// let e: MigrateError = MigrateRefusal::HasChildren.into();
/// assert_eq!(e.to_string(), "migration refused: the actor has children");
/// let e: MigrateError = MigrateFailure::TargetLost.into();
/// assert!(matches!(e, MigrateError::Failed(MigrateFailure::TargetLost)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, thiserror::Error)]
#[non_exhaustive]
pub enum MigrateError {
    /// Nothing moved; the actor runs where it was, with nothing lost.
    #[error("migration refused: {0}")]
    Refused(#[from] MigrateRefusal),
    /// The move was tried and did not commit; the actor runs at the source with
    /// nothing lost, or (`SourceLost`) the caller cannot know where it is.
    #[error("migration failed: {0}")]
    Failed(#[from] MigrateFailure),
}

/// Why a move was refused before anything moved.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, thiserror::Error)]
#[non_exhaustive]
pub enum MigrateRefusal {
    /// The target does not know the actor type (it did not register it with
    /// [`NodeBuilder::mobile`](crate::NodeBuilder::mobile)).
    #[error("{node} does not know the actor type {actor_type:?}")]
    UnknownType {
        /// The target.
        node: NodeId,
        /// The actor type's wire name.
        actor_type: String,
    },
    /// A node the move needed cannot be reached; the variant names **that node**.
    /// Usually the target (unknown to this node, or declared lost); it is another
    /// node when the target's own route to the actor ran through a node that was lost
    /// while the target prepared (for example the actor's birth node). Either way the
    /// actor was not moved and runs where it was, with nothing lost.
    #[error("{0} cannot be reached")]
    Unreachable(NodeId),
    /// The actor type is not mobile on the target.
    #[error("the actor type is not mobile on {0}")]
    NotMobile(NodeId),
    /// The target's own route to the actor is being repaired; try again.
    #[error("{0} is busy repairing its route to the actor; try again")]
    Busy(NodeId),
    /// The mailbox holds a message type outside the remote interface.
    #[error("a queued {message} cannot leave this node")]
    LocalOnlyMail {
        /// The message type.
        message: String,
    },
    /// The actor has children.
    #[error("the actor has children")]
    HasChildren,
    /// The actor is a supervised child.
    #[error("a supervised child does not move yet")]
    Supervised,
    /// The actor is already on that node.
    #[error("already on {0}")]
    AlreadyThere(NodeId),
    /// The target already uses the actor's export token for another actor.
    #[error("token clash on {0}")]
    TokenClash(NodeId),
    /// The ref is to an actor on another node and cannot carry a move request: it is
    /// not a mobile actor's ref (a ref to a mobile actor, local or remote, sends the
    /// request to wherever the actor runs).
    #[error("the actor does not run on this node")]
    NotHere,
    /// A later `cx.migrate_to` in the same message replaced this request.
    #[error("replaced by a later migrate_to in the same message")]
    Replaced,
    /// No node runs on the ref's system.
    #[error("no node runs on this actor's system")]
    NoNode,
}

/// Why a move that was tried did not commit.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, thiserror::Error)]
#[non_exhaustive]
pub enum MigrateFailure {
    /// The target was lost before it was ready.
    #[error("the target was lost before it was ready")]
    TargetLost,
    /// No answer from the target in time.
    #[error("no answer from the target within {0:?}")]
    Timeout(Duration),
    /// The state did not encode.
    #[error("the state did not encode: {0}")]
    Encode(String),
    /// The target could not decode the state.
    #[error("the target could not decode the state: {0}")]
    Decode(String),
    /// The actor stopped before it could move.
    #[error("the actor stopped before it could move")]
    Stopped,
    /// The node that had the actor was lost while the caller waited: outcome unknown.
    #[error("the source was lost; the outcome is unknown")]
    SourceLost,
    /// The offer could not be put on the link (for example its mailbox is larger than
    /// the link's `max_frame`: a large state goes in chunks, the mailbox does not); the
    /// actor resumed at once with nothing lost.
    #[error("the offer was not sent: {0}")]
    NotSent(String),
}

impl MigrateError {
    /// The API's view of a target's refusal.
    pub(crate) fn from_wire(node: &NodeId, why: WireMigrateRefusal) -> Self {
        let node = node.clone();
        match why {
            WireMigrateRefusal::UnknownType { actor_type } => {
                MigrateRefusal::UnknownType { node, actor_type }.into()
            }
            WireMigrateRefusal::Unreachable(n) => MigrateRefusal::Unreachable(n).into(),
            WireMigrateRefusal::NotMobile => MigrateRefusal::NotMobile(node).into(),
            WireMigrateRefusal::Busy => MigrateRefusal::Busy(node).into(),
            WireMigrateRefusal::LocalOnlyMail { message } => {
                MigrateRefusal::LocalOnlyMail { message }.into()
            }
            WireMigrateRefusal::HasChildren => MigrateRefusal::HasChildren.into(),
            WireMigrateRefusal::Supervised => MigrateRefusal::Supervised.into(),
            WireMigrateRefusal::AlreadyThere => MigrateRefusal::AlreadyThere(node).into(),
            WireMigrateRefusal::TokenClash => MigrateRefusal::TokenClash(node).into(),
            WireMigrateRefusal::Decode(e) => MigrateFailure::Decode(e).into(),
        }
    }
}

/// A move under way; resolves to its outcome. Returned by [`MigrateExt::migrate_to`].
#[must_use = "a migration does nothing unless awaited"]
#[derive(Debug)]
pub struct Migration {
    state: MigrationState,
}

#[derive(Debug)]
enum MigrationState {
    Done(Option<MigrateResult>),
    Waiting(oneshot::Receiver<MigrateResult>),
}

impl Migration {
    pub(crate) fn done(result: MigrateResult) -> Self {
        Self {
            state: MigrationState::Done(Some(result)),
        }
    }

    pub(crate) fn waiting(rx: oneshot::Receiver<MigrateResult>) -> Self {
        Self {
            state: MigrationState::Waiting(rx),
        }
    }
}

impl Future for Migration {
    type Output = MigrateResult;

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<MigrateResult> {
        match &mut self.state {
            MigrationState::Done(r) => match r.take() {
                Some(r) => Poll::Ready(r),
                None => Poll::Pending,
            },
            // The sender is dropped unanswered only when the node went away.
            MigrationState::Waiting(rx) => Pin::new(rx)
                .poll(cx)
                .map(|r| r.unwrap_or(Err(MigrateFailure::SourceLost.into()))),
        }
    }
}

/// Moving an actor through a ref: `actor_ref.migrate_to(&node).await`.
///
/// ```no_run
/// # use odeon::{Actor, Context, Handler, Message, System};
/// # use serde::{Deserialize, Serialize};
/// # #[derive(Serialize, Deserialize)] struct Counter(u64);
/// # impl Actor for Counter {}
/// # #[derive(Serialize, Deserialize)] struct Add(u64);
/// # impl Message for Add { type Reply = u64; }
/// # impl Handler<Add> for Counter {
/// #     fn handle(&mut self, m: Add, _: &mut Context<Self>) -> u64 { self.0 += m.0; self.0 }
/// # }
/// odeon_remote::mobile_actor!(Counter = "doc.Counter" { Add = "doc.Add" });
/// use odeon_remote::MigrateExt;
/// # fn run(system: &System, other: odeon_remote::wire::NodeId) {
/// let counter = system.spawn(Counter(0));
/// let moved = system.block_on(counter.migrate_to(&other)).unwrap();
/// assert_eq!(moved.to, other);
/// // The ref still works: it goes wherever the actor went.
/// # }
/// ```
pub trait MigrateExt {
    /// Asks the actor to move to `to` between two messages (after every message sent
    /// to it before this call); resolves when the move committed, or why it did not.
    /// Any ref to the actor will do: a remote ref, or a stale local ref on a node it
    /// left, sends the request along the actor's route to wherever it runs, and the
    /// outcome comes back from there.
    fn migrate_to(&self, to: &NodeId) -> Migration;
}

impl<A: MobileActor> MigrateExt for ActorRef<A> {
    fn migrate_to(&self, to: &NodeId) -> Migration {
        super::source::migrate_ref(self, to)
    }
}

/// Moving an actor from inside one of its handlers: `cx.migrate_to(&node)`.
///
/// ```
/// use odeon::{Actor, Context, Handler, Message};
/// use odeon_remote::MigrateFromHandler;
/// use odeon_remote::wire::NodeId;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize)]
/// struct Rover;
/// impl Actor for Rover {}
/// #[derive(Serialize, Deserialize)]
/// struct GoTo(NodeId);
/// impl Message for GoTo { type Reply = (); }
/// impl Handler<GoTo> for Rover {
///     fn handle(&mut self, m: GoTo, cx: &mut Context<Self>) {
///         cx.migrate_to(&m.0); // after this message
///     }
/// }
/// odeon_remote::mobile_actor!(Rover = "doc.Rover" { GoTo = "doc.GoTo" });
/// ```
pub trait MigrateFromHandler {
    /// Moves this actor to `to` after the current message (weak mobility: an async
    /// handler that is awaiting completes first; Rust futures cannot be serialized).
    /// A second call in the same message replaces the first. The outcome arrives as
    /// `Actor::migrated` on the new node, or `Actor::migration_failed` here (with a
    /// [`MigrateError`]).
    fn migrate_to(&mut self, to: &NodeId);
}

impl<A: MobileActor> MigrateFromHandler for Context<A> {
    fn migrate_to(&mut self, to: &NodeId) {
        super::source::migrate_from_handler(self, to);
    }
}
