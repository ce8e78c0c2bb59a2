//! What an actor is: the [`Actor`] trait with its lifecycle hooks, typed [`Message`]s,
//! and the two kinds of handlers.
//!
//! - [`Handler<M>`] is synchronous: it runs to completion on a worker. This is the fast
//!   path and what most handlers should be.
//! - [`AsyncHandler<M>`] returns a future that may await another actor's reply, a timer
//!   or tokio I/O. While it is pending the actor handles no other message (macro-step
//!   semantics), but no worker thread is held: the actor is parked and its worker runs
//!   other actors until the future is woken.
//!
//! A message type is handled by an actor either synchronously or asynchronously, never
//! both. [`Handles<M, K>`] unifies the two so that [`ActorRef::tell`](crate::ActorRef::tell)
//! accepts either; the marker `K` is always inferred.

pub(crate) mod context;
mod deferred;
mod handler;
mod id;
mod reason;

pub use deferred::{DeferredHandler, ReplySender};
pub use handler::{AsyncHandler, Handler, Handles, Message, marker};
pub use id::ActorId;
pub use reason::{StopReason, Terminated};

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use crate::Context;

/// Why [`Actor::on_start`] failed: any error (`?` converts it), or a message
/// (`Err("no database".into())`). The actor stops with
/// [`StopReason::StartFailed`] carrying its `Display` text.
pub type StartError = Box<dyn std::error::Error + Send + Sync>;

/// What the default [`Actor::on_start`] returns: ready at once, and of size zero, so
/// the runtime neither allocates nor parks for an actor that does not override it.
#[derive(Debug)]
pub(crate) struct NoStart;

impl Future for NoStart {
    type Output = Result<(), StartError>;
    fn poll(self: Pin<&mut Self>, _: &mut std::task::Context<'_>) -> Poll<Self::Output> {
        Poll::Ready(Ok(()))
    }
}

/// How the runtime's log lines show an actor: its id, its type and its name (if any),
/// each as a field of its own.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Label<'a> {
    pub(crate) id: ActorId,
    pub(crate) type_name: &'static str,
    pub(crate) name: Option<&'a str>,
}

/// An actor: private state that reacts to messages one at a time.
///
/// All hooks have empty defaults. They run on the actor's own turn, so they have the
/// same exclusive access to `self` as handlers.
///
/// ```
/// use odeon::{Actor, Context, StopReason};
///
/// struct Greeter { greeted: u32 }
///
/// impl Actor for Greeter {
///     fn started(&mut self, _cx: &mut Context<Self>) {
///         println!("ready");
///     }
///     fn stopped(&mut self, reason: &StopReason) {
///         println!("greeted {} times, stopped: {reason}", self.greeted);
///     }
/// }
/// ```
pub trait Actor: Send + Sized + 'static {
    /// Runs before the first message, on the actor's first turn. An actor spawned
    /// while the system shuts down never starts: it only gets `stopped` (see
    /// [`SystemHandle::spawn`](crate::SystemHandle::spawn)).
    fn started(&mut self, cx: &mut Context<Self>) {
        let _ = cx;
    }

    /// Runs after [`Actor::started`], before any message, and may await (open a
    /// connection, ask another actor, load state). Messages sent meanwhile wait in the
    /// mailbox, in order; no worker thread is held while it awaits. If it returns an
    /// error the actor stops with [`StopReason::StartFailed`] without handling any
    /// message: its pending asks fail with
    /// [`AskError::Stopped`](crate::AskError::Stopped), and watchers and
    /// [`ActorRef::wait_stopped`](crate::ActorRef::wait_stopped) see the reason.
    ///
    /// Like an async handler it runs to completion unless the actor is killed
    /// ([`ActorRef::kill`](crate::ActorRef::kill), shutdown), which drops it at its
    /// current `.await`. After a supervisor's restart it runs again, on the fresh
    /// state, after `started` and before the held messages.
    ///
    /// The default does nothing, at no cost: no allocation, no extra turn.
    ///
    /// ```
    /// use odeon::{Actor, Context, Handler, Message, StartError, StopReason, System};
    ///
    /// struct Cache { entries: Vec<u32>, source_ok: bool }
    /// impl Actor for Cache {
    ///     async fn on_start(&mut self, _cx: &mut Context<Self>) -> Result<(), StartError> {
    ///         if !self.source_ok {
    ///             return Err("the source is unreachable".into());
    ///         }
    ///         self.entries = vec![1, 2, 3]; // loaded before any message is handled
    ///         Ok(())
    ///     }
    /// }
    /// struct Len;
    /// impl Message for Len { type Reply = usize; }
    /// impl Handler<Len> for Cache {
    ///     fn handle(&mut self, _: Len, _: &mut Context<Self>) -> usize { self.entries.len() }
    /// }
    ///
    /// let system = System::new();
    /// let cache = system.spawn(Cache { entries: vec![], source_ok: true });
    /// assert_eq!(system.block_on(cache.ask(Len)), Ok(3));
    ///
    /// let broken = system.spawn(Cache { entries: vec![], source_ok: false });
    /// assert_eq!(
    ///     system.block_on(broken.wait_stopped()),
    ///     StopReason::StartFailed("the source is unreachable".into()),
    /// );
    /// ```
    fn on_start(
        &mut self,
        cx: &mut Context<Self>,
    ) -> impl Future<Output = Result<(), StartError>> + Send {
        let _ = cx;
        NoStart
    }

    /// Runs when the actor is about to stop, while it can still use its context
    /// (children and timers are stopped right after this hook). Only for an actor that
    /// has started.
    fn stopping(&mut self, cx: &mut Context<Self>) {
        let _ = cx;
    }

    /// Runs last, with the reason the actor stopped. The state is dropped afterwards.
    ///
    /// This is also where an actor sees its own failure (kameo's `on_panic`, ractor's
    /// `handle_supervisor_evt` for oneself): after a panic in a handler or a hook,
    /// `stopping` and then `stopped` still run, on the state as the panic left it, with
    /// [`StopReason::Panicked`] and the panic's message (a failure by
    /// [`Context::fail`] gives [`StopReason::Failed`]). They cannot keep the actor
    /// running: odeon offers no "continue after a panic" hook, because the panic may
    /// have unwound out of the middle of a handler (invariants half-updated) or out of
    /// an async handler's future, which cannot be polled again. Recovery is a
    /// supervisor's restart, with fresh state behind the same `ActorRef`. Under
    /// `panic = "abort"` nothing runs at all.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use odeon::{Actor, Context, Handler, Message, StopReason, System};
    ///
    /// struct Fragile { last_words: Arc<Mutex<Option<String>>> }
    /// impl Actor for Fragile {
    ///     fn stopped(&mut self, reason: &StopReason) {
    ///         if let StopReason::Panicked(msg) = reason {
    ///             *self.last_words.lock().unwrap() = Some(msg.clone()); // flush, report...
    ///         }
    ///     }
    /// }
    /// struct Break;
    /// impl Message for Break { type Reply = (); }
    /// impl Handler<Break> for Fragile {
    ///     fn handle(&mut self, _: Break, _: &mut Context<Self>) { panic!("bad input") }
    /// }
    ///
    /// let system = System::new();
    /// let last_words = Arc::new(Mutex::new(None));
    /// let f = system.spawn(Fragile { last_words: last_words.clone() });
    /// f.tell(Break).unwrap();
    /// assert!(system.block_on(f.wait_stopped()).is_failure());
    /// assert_eq!(last_words.lock().unwrap().as_deref(), Some("bad input"));
    /// ```
    fn stopped(&mut self, reason: &StopReason) {
        let _ = reason;
    }

    /// Runs on the node a mobile actor moved to, on its first turn there, before any
    /// message: re-open what did not travel with the state (timers, subscriptions,
    /// local handles). Never called for an actor that does not move.
    ///
    /// ```
    /// use std::time::Duration;
    /// use odeon::{Actor, Context, Handler, Message, TimerHandle};
    ///
    /// #[derive(Clone)]
    /// struct Tick;
    /// impl Message for Tick { type Reply = (); }
    /// struct Counter { ticks: u64, ticker: Option<TimerHandle> }
    /// impl Actor for Counter {
    ///     fn migrated(&mut self, cx: &mut Context<Self>) {
    ///         // A timer does not travel: arm a new one on the new node.
    ///         self.ticker = Some(cx.send_interval(Duration::from_secs(1), Tick));
    ///     }
    /// }
    /// impl Handler<Tick> for Counter {
    ///     fn handle(&mut self, _: Tick, _: &mut Context<Self>) { self.ticks += 1; }
    /// }
    /// ```
    fn migrated(&mut self, cx: &mut Context<Self>) {
        let _ = cx;
    }

    /// A move of this actor did not happen: it keeps running here with nothing lost
    /// (the messages queued meanwhile are handled next, in order). Runs on the next
    /// turn, before any message.
    ///
    /// `error` is the transport's own error, erased so that the core does not depend
    /// on it: with `odeon-remote` it is a `MigrateError`, which a hook can recover
    /// with `error.downcast_ref::<odeon_remote::MigrateError>()`.
    ///
    /// ```
    /// use odeon::{Actor, Context};
    ///
    /// struct Counter { failed_moves: u32 }
    /// impl Actor for Counter {
    ///     fn migration_failed(
    ///         &mut self,
    ///         _cx: &mut Context<Self>,
    ///         error: &(dyn std::error::Error + 'static),
    ///     ) {
    ///         self.failed_moves += 1;
    ///         eprintln!("still here: {error}");
    ///     }
    /// }
    /// ```
    fn migration_failed(
        &mut self,
        cx: &mut Context<Self>,
        error: &(dyn std::error::Error + 'static),
    ) {
        let _ = (cx, error);
    }
}
