//! Why an actor stopped.

use std::fmt;

use crate::{ActorId, Message};

/// Why an actor stopped. Given to [`Actor::stopped`](crate::Actor::stopped), to watchers
/// in [`Terminated`], and to supervisors.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopReason {
    /// The actor asked to stop, or was asked to by [`ActorRef::stop`](crate::ActorRef::stop).
    Normal,
    /// No strong reference was left and its mailbox was empty (local actor GC).
    Unreferenced,
    /// A handler or hook panicked; the panic message.
    Panicked(String),
    /// A handler failed with [`Context::fail`](crate::Context::fail); the error it gave.
    /// Supervised like a panic.
    Failed(String),
    /// A linked actor failed.
    LinkFailed(ActorId),
    /// A supervisor exceeded its restart limit and gave up: the supervisor's own
    /// reason. A failure, so a parent supervisor restarts it (escalation).
    RestartLimit,
    /// The old instance is being replaced by a supervisor restart (only ever seen by
    /// the old instance's hooks).
    Restarting,
    /// Its parent or supervisor stopped.
    ParentStopped,
    /// The system shut down.
    Shutdown,
    /// Killed by [`ActorRef::kill`](crate::ActorRef::kill): the handler it was awaiting,
    /// if any, was cancelled. Not a failure, like [`StopReason::Normal`].
    Killed,
    /// Its node left the cluster or stopped answering (seen from another node).
    NodeLost,
    /// [`Actor::on_start`](crate::Actor::on_start) returned an error (its message):
    /// the actor stopped before handling any message.
    StartFailed(String),
}

impl StopReason {
    /// Whether this counts as a failure: links propagate failures, not normal stops.
    pub fn is_failure(&self) -> bool {
        matches!(
            self,
            StopReason::Panicked(_)
                | StopReason::Failed(_)
                | StopReason::LinkFailed(_)
                | StopReason::RestartLimit
                | StopReason::NodeLost
                | StopReason::StartFailed(_)
        )
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StopReason::Normal => f.write_str("stopped normally"),
            StopReason::Unreferenced => f.write_str("no references left"),
            StopReason::Panicked(m) => write!(f, "panicked: {m}"),
            StopReason::Failed(m) => write!(f, "failed: {m}"),
            StopReason::LinkFailed(id) => write!(f, "linked {id} failed"),
            StopReason::RestartLimit => f.write_str("supervisor restart limit reached"),
            StopReason::Restarting => f.write_str("restarting"),
            StopReason::ParentStopped => f.write_str("parent stopped"),
            StopReason::Shutdown => f.write_str("system shut down"),
            StopReason::Killed => f.write_str("killed"),
            StopReason::NodeLost => f.write_str("its node was lost"),
            StopReason::StartFailed(m) => write!(f, "failed to start: {m}"),
        }
    }
}

/// Delivered to a watcher when a watched actor stops
/// (see [`Context::watch`](crate::Context::watch)).
///
/// ```
/// use std::sync::mpsc;
/// use odeon::{Actor, ActorRef, Context, Handler, Message, StopReason, System, Terminated};
///
/// struct Fragile;
/// impl Actor for Fragile {}
/// struct Poke;
/// impl Message for Poke { type Reply = (); }
/// impl Handler<Poke> for Fragile {
///     fn handle(&mut self, _: Poke, _: &mut Context<Self>) { panic!("poked"); }
/// }
///
/// struct Watcher { target: ActorRef<Fragile>, seen: mpsc::Sender<StopReason> }
/// impl Actor for Watcher {
///     fn started(&mut self, cx: &mut Context<Self>) { cx.watch(&self.target); }
/// }
/// impl Handler<Terminated> for Watcher {
///     fn handle(&mut self, t: Terminated, _: &mut Context<Self>) {
///         let _ = self.seen.send(t.reason);
///     }
/// }
///
/// let system = System::new();
/// let fragile = system.spawn(Fragile);
/// let (tx, seen) = mpsc::channel();
/// let _watcher = system.spawn(Watcher { target: fragile.clone(), seen: tx });
/// system.run_until_quiescent();        // the watch is in place
/// fragile.tell(Poke).unwrap();
/// let reason = seen.recv().unwrap();
/// assert_eq!(reason, StopReason::Panicked("poked".into()));
/// assert!(reason.is_failure());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Terminated {
    /// The actor that stopped.
    pub id: ActorId,
    /// Why it stopped.
    pub reason: StopReason,
}

impl Message for Terminated {
    type Reply = ();
}
