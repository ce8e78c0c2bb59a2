//! References to actors.
//!
//! - [`ActorRef<A>`]: typed, `Clone + Send + Sync`; keeps the actor alive.
//! - [`WeakActorRef<A>`]: does not keep it alive; upgrade to send.
//! - [`Recipient<M>`]: type-erased to one message type; keeps the actor alive.
//!
//! Every strong reference counts in the cell's `refs`. When the last one goes, a GC
//! signal is queued behind all pending mail; if no strong reference has appeared by the
//! time the actor drains its mailbox, it stops with [`StopReason::Unreferenced`].
//!
//! # One count per strong reference, not two
//! Strong local refs share a single count of the cell's `Arc`, held while `refs > 0`:
//! the ref that moves `refs` from 0 to 1 takes it, the one that moves it from 1 to 0
//! gives it back. So cloning or dropping a ref is one atomic RMW (on `refs`) instead of
//! two (`refs` and the `Arc`), which is two per message in request–reply protocols
//! that carry `cx.myself()`. Every ref therefore holds its `Arc` in a `ManuallyDrop`
//! and never drops it itself. A 0 → 1 move only happens where the cell is kept alive
//! otherwise: the actor's own turn (`myself`), or a weak ref, which holds an `Arc`
//! count of its own.

pub(crate) mod ask;
pub(crate) mod deadline;
mod error;
mod mobile;
mod outside;
mod recipient;
pub mod remote;
#[cfg(feature = "serde")]
pub(crate) mod serde;
pub(crate) mod wait;

use std::fmt;
use std::mem::ManuallyDrop;
use std::sync::Arc;
use std::sync::atomic::Ordering;

pub use ask::{Ask, AskError};
pub use error::{DrainError, TellError};
pub use recipient::Recipient;
pub use wait::WaitStopped;

use crate::cell::{AnyCell, Cell};
use crate::{Actor, ActorId, Handles, Message, StopReason};
use remote::RemoteTarget;

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
    target: Target<A>,
}

/// Where the actor is. The local arm is the direct pointer; the remote arm is only
/// taken by refs that came from another node (see [`remote`]). The local `Arc` is never
/// dropped implicitly: a strong ref shares the collective count (module docs), a weak
/// ref drops its own count in its `Drop`.
enum Target<A: Actor> {
    Local(ManuallyDrop<Arc<Cell<A>>>),
    Remote(RemoteTarget<A>),
}

impl<A: Actor> ActorRef<A> {
    /// Wraps a freshly spawned cell: its `refs` is 1 and `cell` is the `Arc` count that
    /// becomes the strong refs' collective count.
    pub(crate) fn from_cell(cell: Arc<Cell<A>>) -> Self {
        debug_assert_eq!(cell.refs.load(Ordering::Relaxed), 1);
        Self {
            target: Target::Local(ManuallyDrop::new(cell)),
        }
    }

    /// Takes a new strong reference to `cell`, which the caller keeps alive meanwhile
    /// (it holds an `Arc` count, or it is the actor's own turn).
    pub(crate) fn new_ref(cell: &Arc<Cell<A>>) -> Self {
        if cell.refs.fetch_add(1, Ordering::Relaxed) == 0 {
            // The first strong ref since `refs` was zero takes the collective count.
            // SAFETY: `cell` is a live `Arc` (caller contract).
            unsafe { Arc::increment_strong_count(Arc::as_ptr(cell)) };
        }
        Self::sharing(cell)
    }

    /// A ref that shares the collective count, which `refs > 0` guarantees is held.
    fn sharing(cell: &Arc<Cell<A>>) -> Self {
        // SAFETY: the pointer comes from a live `Arc` (so `from_raw` gets back the same
        // allocation with its provenance), and the collective count keeps it alive for
        // as long as this ref counts in `refs`. The `Arc` made here is never dropped
        // (`ManuallyDrop`), so it does not give back a count it did not take; only the
        // ref that takes `refs` to zero gives back the collective count, in `Drop`.
        let shared = unsafe { Arc::from_raw(Arc::as_ptr(cell)) };
        Self {
            target: Target::Local(ManuallyDrop::new(shared)),
        }
    }

    pub(crate) fn remote(target: RemoteTarget<A>) -> Self {
        Self {
            target: Target::Remote(target),
        }
    }

    #[inline]
    pub(crate) fn local(&self) -> Option<&Arc<Cell<A>>> {
        match &self.target {
            Target::Local(cell) => Some(cell),
            Target::Remote(_) => None,
        }
    }

    pub(crate) fn remote_target(&self) -> Option<&RemoteTarget<A>> {
        match &self.target {
            Target::Local(_) => None,
            Target::Remote(r) => Some(r),
        }
    }

    /// The cell of a ref the runtime made itself (supervisors, `myself`), which is
    /// always local.
    pub(crate) fn cell(&self) -> &Arc<Cell<A>> {
        match &self.target {
            Target::Local(cell) => cell,
            Target::Remote(_) => unreachable!("the runtime's own refs are local"),
        }
    }

    pub(crate) fn cell_any(&self) -> Option<Arc<dyn AnyCell>> {
        self.local().map(|c| c.clone() as Arc<dyn AnyCell>)
    }

    /// The actor's id (for a remote actor, its id on its birth node).
    ///
    /// The id does not change when a mobile actor moves: on the node it moved to, it
    /// is still the id it was born with.
    pub fn id(&self) -> ActorId {
        match &self.target {
            Target::Local(cell) => cell.public_id(),
            Target::Remote(r) => r.endpoint.id(),
        }
    }

    /// A hint, for a sender about to tell many actors that may be cold: starts
    /// loading into the cache the part of this actor a send touches, without waiting.
    /// Called a few refs ahead in a loop of tells (e.g. `refs[i + 8].prefetch()` before
    /// `refs[i].tell(..)`), it lets the cache misses of the sends overlap instead of
    /// following one another. It changes nothing observable: no message, no ordering.
    /// A no-op for a ref to another node and on processors other than x86_64.
    ///
    /// ```
    /// use odeon::{Actor, Context, Handler, Message, System};
    /// struct Counter(u64);
    /// impl Actor for Counter {}
    /// struct Add(u64);
    /// impl Message for Add { type Reply = (); }
    /// impl Handler<Add> for Counter {
    ///     fn handle(&mut self, m: Add, _: &mut Context<Self>) { self.0 += m.0; }
    /// }
    /// let system = System::new();
    /// let cells: Vec<_> = (0..100).map(|_| system.spawn(Counter(0))).collect();
    /// for (i, c) in cells.iter().enumerate() {
    ///     if let Some(ahead) = cells.get(i + 8) {
    ///         ahead.prefetch();
    ///     }
    ///     c.tell(Add(1)).unwrap();
    /// }
    /// system.shutdown();
    /// ```
    #[inline]
    pub fn prefetch(&self) {
        if let Target::Local(cell) = &self.target {
            cell.prefetch();
        }
    }

    /// The name given with [`SpawnOptions::name`](crate::SpawnOptions::name), if any.
    /// (`None` for a ref to an actor on another node: names do not travel.)
    ///
    /// ```
    /// use odeon::{Actor, SpawnOptions, System};
    /// struct Worker;
    /// impl Actor for Worker {}
    ///
    /// let system = System::new();
    /// let named = system.spawn_with(Worker, SpawnOptions::new().name("worker-1"));
    /// assert_eq!(named.name(), Some("worker-1"));
    /// assert!(format!("{named:?}").contains("\"worker-1\""));
    /// assert_eq!(system.spawn(Worker).name(), None);
    /// ```
    pub fn name(&self) -> Option<&str> {
        match &self.target {
            Target::Local(cell) => cell.name(),
            Target::Remote(_) => None,
        }
    }

    /// Whether the actor has not stopped yet (for a remote actor: is not known to
    /// have stopped, and its node is not known to be lost).
    pub fn is_alive(&self) -> bool {
        match &self.target {
            Target::Local(cell) => !cell.is_stopped(),
            Target::Remote(r) => r.endpoint.is_alive(),
        }
    }

    /// Sends `msg` without waiting. Fails, giving the message back, if the actor has
    /// stopped or its bounded mailbox is full (or, for a remote actor, if its node
    /// cannot be reached, the bounded queue toward its node is full
    /// ([`TellError::Full`]), or `M` is not in its remote interface).
    #[inline]
    pub fn tell<M, K>(&self, msg: M) -> Result<(), TellError<M>>
    where
        M: Message,
        A: Handles<M, K>,
    {
        match &self.target {
            Target::Local(cell) => cell.send(msg, None),
            Target::Remote(r) => r.tell(msg),
        }
    }

    /// Sends `msg`, waiting for room if the mailbox is bounded and full (backpressure).
    /// With an unbounded mailbox this is `tell`. For a remote actor it waits while the
    /// queue toward the actor's node is full.
    pub async fn send<M, K>(&self, msg: M) -> Result<(), TellError<M>>
    where
        M: Message,
        A: Handles<M, K>,
    {
        let cell = match &self.target {
            Target::Local(cell) => cell,
            Target::Remote(r) => return r.send(msg).await,
        };
        let Some(bound) = cell.semaphore() else {
            return cell.send(msg, None);
        };
        match bound.acquire().await {
            Ok(permit) => {
                permit.forget();
                cell.send_with_permit(msg, None)
            }
            Err(_) => Err(TellError::Stopped(msg)),
        }
    }

    /// Sends `msg` and returns a future of the reply. The future fails with an
    /// [`AskError`] if the actor stops or panics first, or after the system's ask
    /// timeout (change it per call with [`Ask::timeout`]).
    ///
    /// Like [`ActorRef::tell`], it never waits for room: on a full bounded mailbox the
    /// message is not sent and the future fails at once with [`AskError::Full`]. To
    /// wait for room instead (as [`ActorRef::send`] does for a tell), use
    /// [`ActorRef::ask_wait`].
    pub fn ask<M, K>(&self, msg: M) -> Ask<M::Reply>
    where
        M: Message,
        A: Handles<M, K>,
    {
        let cell = match &self.target {
            Target::Local(cell) => cell,
            Target::Remote(r) => return r.ask(msg),
        };
        let (reply, ask) = ask::pair(cell.shared());
        match cell.send(msg, Some(reply)) {
            Ok(()) => ask,
            Err(e) => Ask::failed(e.into(), cell.shared()),
        }
    }

    /// Asks the actor to stop after the message it is handling; queued messages are
    /// dropped and their pending asks fail. An async handler that is awaiting runs to
    /// completion first (its reply is sent); use [`ActorRef::kill`] to cancel it. The
    /// actor's children are stopped the same way, after its `stopping` hook.
    ///
    /// Returns at once; watch the actor (or poll [`ActorRef::is_alive`]) to learn when
    /// it has stopped. Its reason is [`StopReason::Normal`]. To handle the queued
    /// messages first, use [`ActorRef::stop_gracefully`].
    pub fn stop(&self) {
        match &self.target {
            Target::Local(cell) => cell.request_stop(StopReason::Normal),
            Target::Remote(r) => r.endpoint.stop(),
        }
    }

    /// Stops the actor without waiting for an awaiting async handler: its future is
    /// dropped at its current `.await` (no reply is sent; the ask fails with
    /// [`AskError::Stopped`]), then the hooks run as for [`ActorRef::stop`], and the
    /// actor's children are killed too. A synchronous handler cannot be interrupted: an
    /// actor busy in one stops right after it returns. The reason is
    /// [`StopReason::Killed`], unless a stop was requested before (its reason is kept).
    ///
    /// For an actor on another node this is [`ActorRef::stop`]: the wire carries only
    /// stop requests.
    pub fn kill(&self) {
        match &self.target {
            Target::Local(cell) => cell.kill(StopReason::Killed),
            Target::Remote(r) => r.endpoint.stop(),
        }
    }

    /// A future that resolves, with the reason, once the actor has stopped: at once if
    /// it already has. It can be awaited on any executor or thread, or with
    /// [`System::block_on`](crate::System::block_on); any number of them may wait on
    /// the same actor. It does not keep the actor alive (it holds no strong
    /// reference), so an actor nobody else references is still collected, and the
    /// wait ends with [`StopReason::Unreferenced`].
    ///
    /// Costs nothing until called: a waiter is registered (as a watcher is) when the
    /// future is created and removed if it is dropped first.
    ///
    /// For an actor on another node, the wait ends when its node reports the stop or
    /// is lost ([`StopReason::NodeLost`]).
    ///
    /// ```
    /// use odeon::{Actor, Context, Handler, Message, StopReason, System};
    ///
    /// struct Job;
    /// impl Actor for Job {}
    /// struct Crash;
    /// impl Message for Crash { type Reply = (); }
    /// impl Handler<Crash> for Job {
    ///     fn handle(&mut self, _: Crash, _: &mut Context<Self>) { panic!("boom") }
    /// }
    ///
    /// let system = System::new();
    /// let job = system.spawn(Job);
    /// let done = job.wait_stopped();
    /// job.tell(Crash).unwrap();
    /// assert_eq!(system.block_on(done), StopReason::Panicked("boom".into()));
    /// // Already stopped: resolves at once.
    /// assert!(system.block_on(job.wait_stopped()).is_failure());
    /// ```
    pub fn wait_stopped(&self) -> WaitStopped {
        match &self.target {
            Target::Local(cell) => WaitStopped::local(Arc::clone(cell)),
            Target::Remote(r) => WaitStopped::remote(r.endpoint.clone()),
        }
    }

    /// A reference that does not keep the actor alive. (Refs to remote actors never
    /// keep them alive; a weak one behaves like a strong one.)
    pub fn downgrade(&self) -> WeakActorRef<A> {
        WeakActorRef {
            target: match &self.target {
                Target::Local(cell) => Target::Local(ManuallyDrop::new(Arc::clone(cell))),
                Target::Remote(r) => Target::Remote(r.clone()),
            },
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
        match &self.target {
            Target::Local(cell) => {
                // `self` counts in `refs`, so it is at least 1 and the collective
                // count is held: one RMW, no `Arc` count.
                cell.refs.fetch_add(1, Ordering::Relaxed);
                Self::sharing(cell)
            }
            Target::Remote(r) => Self::remote(r.clone()),
        }
    }
}

impl<A: Actor> Drop for ActorRef<A> {
    fn drop(&mut self) {
        let Target::Local(cell) = &mut self.target else {
            return;
        };
        // Release pairs with the Acquire load in the GC check (`cell/turn.rs`), so the
        // actor sees every send made through this reference before it collects itself.
        if cell.refs.fetch_sub(1, Ordering::Release) == 1 {
            // A stopped actor has nothing to collect; the signal would only be
            // allocated to be discarded.
            if !cell.is_stopped() {
                cell.signal(|cell| {
                    // SAFETY: signals run on the actor's turn.
                    unsafe { cell.life() }.gc_check = true;
                });
            }
            // This ref took `refs` to zero: it gives back the collective count.
            // SAFETY: the field is not used again (this is `drop`).
            unsafe { ManuallyDrop::drop(cell) };
        }
    }
}

impl<A: Actor> PartialEq for ActorRef<A> {
    fn eq(&self, other: &Self) -> bool {
        match (&self.target, &other.target) {
            // One cell per actor per node, except after a round trip: a stub the actor
            // left here and the cell it came back to. Only different pointers pay for
            // the identity check (design §2.3).
            (Target::Local(a), Target::Local(b)) => {
                Arc::ptr_eq(a, b)
                    || a.birth_identity()
                        .is_some_and(|x| b.birth_identity() == Some(x))
            }
            (Target::Remote(a), Target::Remote(b)) => a.endpoint.address() == b.endpoint.address(),
            // Only an actor that moved here can equal a remote ref: compare its birth
            // identity with the endpoint's (design §2.3). Cold: the kinds differ.
            (Target::Local(cell), Target::Remote(r)) | (Target::Remote(r), Target::Local(cell)) => {
                cell.mobile().is_some_and(|m| {
                    let (node, incarnation, id) = r.endpoint.address();
                    *m.birth.node == *node
                        && m.birth.incarnation == incarnation
                        && m.birth.id.as_u64() == id
                })
            }
        }
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
        match &self.target {
            Target::Local(cell) => {
                write!(f, "ActorRef<{}>({}", std::any::type_name::<A>(), self.id())?;
                if let Some(name) = cell.name() {
                    write!(f, " {name:?}")?;
                }
                f.write_str(")")
            }
            Target::Remote(r) => {
                let (node, incarnation, id) = r.endpoint.address();
                write!(
                    f,
                    "ActorRef<{}>(actor#{id}@{node}#{incarnation:x})",
                    std::any::type_name::<A>()
                )
            }
        }
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
    target: Target<A>,
}

impl<A: Actor> WeakActorRef<A> {
    /// A strong reference, if the actor has not stopped.
    pub fn upgrade(&self) -> Option<ActorRef<A>> {
        match &self.target {
            Target::Local(cell) if cell.is_stopped() => None,
            // This weak ref's own `Arc` count keeps the cell alive meanwhile.
            Target::Local(cell) => Some(ActorRef::new_ref(cell)),
            Target::Remote(r) if !r.endpoint.is_alive() => None,
            Target::Remote(r) => Some(ActorRef::remote(r.clone())),
        }
    }

    /// The actor's id (its birth id, as [`ActorRef::id`]).
    pub fn id(&self) -> ActorId {
        match &self.target {
            Target::Local(cell) => cell.public_id(),
            Target::Remote(r) => r.endpoint.id(),
        }
    }

    /// As [`ActorRef::is_alive`], without taking a strong reference.
    pub(crate) fn is_alive(&self) -> bool {
        match &self.target {
            Target::Local(cell) => !cell.is_stopped(),
            Target::Remote(r) => r.endpoint.is_alive(),
        }
    }
}

impl<A: Actor> Clone for WeakActorRef<A> {
    fn clone(&self) -> Self {
        Self {
            target: match &self.target {
                Target::Local(cell) => Target::Local(ManuallyDrop::new(Arc::clone(cell))),
                Target::Remote(r) => Target::Remote(r.clone()),
            },
        }
    }
}

impl<A: Actor> Drop for WeakActorRef<A> {
    fn drop(&mut self) {
        if let Target::Local(cell) = &mut self.target {
            // A weak ref owns its `Arc` count (made by `Arc::clone` above or in
            // `downgrade`).
            // SAFETY: the field is not used again (this is `drop`).
            unsafe { ManuallyDrop::drop(cell) };
        }
    }
}

impl<A: Actor> fmt::Debug for WeakActorRef<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "WeakActorRef<{}>({}",
            std::any::type_name::<A>(),
            self.id()
        )?;
        if let Target::Local(cell) = &self.target {
            if let Some(name) = cell.name() {
                write!(f, " {name:?}")?;
            }
        }
        f.write_str(")")
    }
}
