//! References to actors.
//!
//! - [`ActorRef<A>`]: typed, `Clone + Send + Sync`; keeps the actor alive.
//! - [`WeakActorRef<A>`]: does not keep it alive; upgrade to send.
//! - [`Recipient<M>`]: type-erased to one message type; keeps the actor alive.
//!
//! Every strong reference counts in the cell's `refs`. When the last one goes, a GC
//! signal is queued behind all pending mail; if no strong reference has appeared by the
//! time the actor drains its mailbox, it stops with [`StopReason::Unreferenced`].

pub(crate) mod ask;
mod error;
mod recipient;

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::Ordering;

pub use ask::{Ask, AskError};
pub use error::TellError;
pub use recipient::Recipient;

use crate::cell::{AnyCell, Cell};
use crate::{Actor, ActorId, Handles, Message, StopReason};

/// A typed reference to an actor. Sending through it never blocks.
///
/// ```
/// use odeon::{Actor, Context, Handler, Message, System, TellError};
///
/// struct Sink(u32);
/// impl Actor for Sink {}
/// struct Item;
/// impl Message for Item { type Reply = (); }
/// impl Handler<Item> for Sink {
///     fn handle(&mut self, _: Item, cx: &mut Context<Self>) { self.0 += 1; cx.stop(); }
/// }
///
/// let system = System::new();
/// let sink = system.spawn(Sink(0));
/// sink.tell(Item).unwrap();
/// system.run_until_quiescent();
/// // The actor stopped: the message comes back inside the error.
/// assert!(matches!(sink.tell(Item), Err(TellError::Stopped(Item))));
/// ```
pub struct ActorRef<A: Actor> {
    cell: Arc<Cell<A>>,
}

impl<A: Actor> ActorRef<A> {
    /// Wraps a cell whose `refs` already counts this reference.
    pub(crate) fn from_cell(cell: Arc<Cell<A>>) -> Self {
        Self { cell }
    }

    /// Takes a new strong reference to `cell`.
    pub(crate) fn new_ref(cell: Arc<Cell<A>>) -> Self {
        cell.refs.fetch_add(1, Ordering::Relaxed);
        Self { cell }
    }

    pub(crate) fn cell(&self) -> &Arc<Cell<A>> {
        &self.cell
    }

    pub(crate) fn cell_any(&self) -> Arc<dyn AnyCell> {
        self.cell.clone()
    }

    /// The actor's id.
    pub fn id(&self) -> ActorId {
        self.cell.id()
    }

    /// Whether the actor has not stopped yet.
    pub fn is_alive(&self) -> bool {
        !self.cell.is_stopped()
    }

    /// Sends `msg` without waiting. Fails, giving the message back, if the actor has
    /// stopped or its bounded mailbox is full.
    pub fn tell<M, K>(&self, msg: M) -> Result<(), TellError<M>>
    where
        M: Message,
        A: Handles<M, K>,
    {
        self.cell.send(msg, None)
    }

    /// Sends `msg`, waiting for room if the mailbox is bounded and full (backpressure).
    /// With an unbounded mailbox this is `tell`.
    pub async fn send<M, K>(&self, msg: M) -> Result<(), TellError<M>>
    where
        M: Message,
        A: Handles<M, K>,
    {
        let Some(bound) = self.cell.semaphore() else {
            return self.cell.send(msg, None);
        };
        match bound.acquire().await {
            Ok(permit) => {
                permit.forget();
                self.cell.send_with_permit(msg)
            }
            Err(_) => Err(TellError::Stopped(msg)),
        }
    }

    /// Sends `msg` and returns a future of the reply. The future fails with an
    /// [`AskError`] if the actor stops or panics first, or after the system's ask
    /// timeout (change it per call with [`Ask::timeout`]).
    pub fn ask<M, K>(&self, msg: M) -> Ask<M::Reply>
    where
        M: Message,
        A: Handles<M, K>,
    {
        let (reply, ask) = ask::pair(self.cell.shared());
        match self.cell.send(msg, Some(reply)) {
            Ok(()) => ask,
            Err(e) => Ask::failed(e.into(), self.cell.shared()),
        }
    }

    /// Asks the actor to stop after the message it is handling; queued messages are
    /// dropped and their pending asks fail.
    pub fn stop(&self) {
        self.cell.request_stop(StopReason::Normal);
    }

    /// A reference that does not keep the actor alive.
    pub fn downgrade(&self) -> WeakActorRef<A> {
        WeakActorRef {
            cell: self.cell.clone(),
        }
    }

    /// A reference erased to the one message type `M`.
    pub fn recipient<M, K>(&self) -> Recipient<M>
    where
        M: Message,
        A: Handles<M, K>,
        K: 'static,
    {
        Recipient::new::<A, K>(self.clone())
    }
}

impl<A: Actor> Clone for ActorRef<A> {
    fn clone(&self) -> Self {
        Self::new_ref(self.cell.clone())
    }
}

impl<A: Actor> Drop for ActorRef<A> {
    fn drop(&mut self) {
        // Release pairs with the Acquire load in the GC check (`cell/turn.rs`), so the
        // actor sees every send made through this reference before it collects itself.
        if self.cell.refs.fetch_sub(1, Ordering::Release) == 1 {
            self.cell.signal(|cell| {
                // SAFETY: signals run on the actor's turn.
                unsafe { cell.life() }.gc_check = true;
            });
        }
    }
}

impl<A: Actor> PartialEq for ActorRef<A> {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.cell, &other.cell)
    }
}

impl<A: Actor> Eq for ActorRef<A> {}

impl<A: Actor> std::hash::Hash for ActorRef<A> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.id().hash(state);
    }
}

impl<A: Actor> fmt::Debug for ActorRef<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ActorRef<{}>({})", std::any::type_name::<A>(), self.id())
    }
}

/// A reference that does not keep the actor alive (local actor GC ignores it).
///
/// ```
/// use odeon::{Actor, System};
/// struct A;
/// impl Actor for A {}
///
/// let system = System::new();
/// let strong = system.spawn(A);
/// let weak = strong.downgrade();
/// assert!(weak.upgrade().is_some());
/// drop(strong);
/// system.run_until_quiescent();
/// assert!(weak.upgrade().is_none(), "collected once the last strong ref went");
/// ```
pub struct WeakActorRef<A: Actor> {
    cell: Arc<Cell<A>>,
}

impl<A: Actor> WeakActorRef<A> {
    /// A strong reference, if the actor has not stopped.
    pub fn upgrade(&self) -> Option<ActorRef<A>> {
        if self.cell.is_stopped() {
            return None;
        }
        Some(ActorRef::new_ref(self.cell.clone()))
    }

    /// The actor's id.
    pub fn id(&self) -> ActorId {
        self.cell.id()
    }
}

impl<A: Actor> Clone for WeakActorRef<A> {
    fn clone(&self) -> Self {
        Self {
            cell: self.cell.clone(),
        }
    }
}

impl<A: Actor> fmt::Debug for WeakActorRef<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "WeakActorRef<{}>({})",
            std::any::type_name::<A>(),
            self.id()
        )
    }
}
