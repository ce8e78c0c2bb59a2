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
mod handler;
mod id;
mod reason;

pub use handler::{AsyncHandler, Handler, Handles, Message, marker};
pub use id::ActorId;
pub use reason::{StopReason, Terminated};

use crate::Context;

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

    /// Runs when the actor is about to stop, while it can still use its context
    /// (children and timers are stopped right after this hook). Only for an actor that
    /// has started.
    fn stopping(&mut self, cx: &mut Context<Self>) {
        let _ = cx;
    }

    /// Runs last, with the reason the actor stopped. The state is dropped afterwards.
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
