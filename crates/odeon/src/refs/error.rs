//! Send errors.

use std::fmt;

/// Why a `tell` failed. Carries the message back, so nothing is lost.
///
/// ```
/// use odeon::{Actor, Context, Handler, Message, SpawnOptions, System, TellError};
///
/// struct Slow;
/// impl Actor for Slow {}
/// #[derive(Debug, PartialEq)]
/// struct Job(u32);
/// impl Message for Job { type Reply = (); }
/// impl Handler<Job> for Slow {
///     fn handle(&mut self, _: Job, _: &mut Context<Self>) {}
/// }
///
/// let system = System::new();
/// let slow = system.spawn_with(Slow, SpawnOptions::new().bounded(1));
/// // Until the mailbox has room again, a tell fails and hands the job back.
/// let mut rejected = None;
/// for n in 0..1000 {
///     if let Err(TellError::Full(job)) = slow.tell(Job(n)) {
///         rejected = Some(job);
///         break;
///     }
/// }
/// slow.stop();
/// system.run_until_quiescent();
/// assert!(matches!(slow.tell(Job(7)), Err(TellError::Stopped(Job(7)))));
/// # drop(rejected);
/// ```
#[derive(PartialEq, Eq)]
pub enum TellError<M> {
    /// The actor has stopped.
    Stopped(M),
    /// The actor's bounded mailbox is full.
    Full(M),
    /// The actor's node cannot be reached (it left, was lost, or no link is up).
    Unreachable(M),
    /// `M` is not in the remote actor's declared interface.
    NotRemote(M),
}

impl<M> TellError<M> {
    /// The message that was not sent.
    pub fn into_inner(self) -> M {
        match self {
            TellError::Stopped(m)
            | TellError::Full(m)
            | TellError::Unreachable(m)
            | TellError::NotRemote(m) => m,
        }
    }
}

impl<M> fmt::Debug for TellError<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TellError::Stopped(_) => f.write_str("Stopped(..)"),
            TellError::Full(_) => f.write_str("Full(..)"),
            TellError::Unreachable(_) => f.write_str("Unreachable(..)"),
            TellError::NotRemote(_) => f.write_str("NotRemote(..)"),
        }
    }
}

impl<M> fmt::Display for TellError<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TellError::Stopped(_) => f.write_str("the actor has stopped"),
            TellError::Full(_) => f.write_str("the actor's mailbox is full"),
            TellError::Unreachable(_) => f.write_str("the actor's node is unreachable"),
            TellError::NotRemote(_) => {
                f.write_str("the message type is not part of the actor's remote interface")
            }
        }
    }
}

impl<M> std::error::Error for TellError<M> {}

/// Why [`ActorRef::stop_gracefully`](crate::ActorRef::stop_gracefully) could not start a
/// drain.
///
/// ```
/// use odeon::{Actor, DrainError, System};
/// struct Idle;
/// impl Actor for Idle {}
///
/// let system = System::new();
/// let idle = system.spawn(Idle);
/// idle.stop();
/// system.block_on(idle.wait_stopped());
/// assert_eq!(idle.stop_gracefully(), Err(DrainError::Stopped));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DrainError {
    /// The actor had already stopped (or the system was shut down).
    #[error("the actor has stopped")]
    Stopped,
    /// The actor is not on this node (a ref from another node, or an actor that moved
    /// away): the wire carries only stop requests, so use `stop` or a stop message.
    #[error("the actor is on another node; only a local actor can be drained")]
    NotLocal,
}
