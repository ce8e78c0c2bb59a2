//! `bestow`: handles to an object an actor owns, whose every use runs on the owner's
//! turn.
//!
//! The handles share a [`Slot`] (the owner, the revoked flag); the object itself lives
//! in an allocation of its own and is only ever touched on its owner's turn: a use
//! travels to the owner as a runtime signal (one node, like any message) and runs
//! there, between two of the owner's own messages; the owner itself reaches it through
//! [`Bestowed::with`], which takes the owner's [`Context`] as proof that the caller is
//! on that turn. Turns of one actor never overlap, so the object is never shared, only
//! its handle is.
//!
//! # Why a use carries a pointer, not a count
//! A use used to carry a clone of the handle's `Arc`: incremented on the sender's core,
//! decremented on the owner's, so the count's cache line (which also held the object
//! the use writes and the revoked flag every sender reads) crossed between the two
//! cores twice per use. In `perf annotate` of Encore's ping that `lock dec` was half of
//! the owner's time in the job and the `lock inc` half of the sender's loop, and wall
//! time was 1.5× a plain `tell` for 1.13× its instructions. Now a use carries a
//! pointer to the object, and the object (on its own cache line, `CachePadded`) is
//! kept alive by the protocol of `Drop for Slot`: the senders count their pushes on
//! the slot's line, which only they write, the owner's turn counts finished uses on the
//! object's line, which only it writes, and the last handle frees the object at once
//! if the two agree, or else through a release job queued behind the uses in flight.

use std::cell::UnsafeCell;
use std::future::Future;
use std::pin::Pin;
use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context as TaskContext, Poll};

use crossbeam_utils::CachePadded;
use tokio::sync::oneshot;

use super::BestowError;
use crate::cell::Cell;
use crate::mailbox::job::Job;
use crate::remote::ObjectEndpoint;
use crate::{Actor, ActorId, Context, Message};

/// An object type that handles message `M` when used through a [`Bestowed`] handle.
///
/// Like [`Handler`](crate::Handler), without a context: the object is not an actor; it
/// runs inside its owner's turn.
pub trait Serve<M: Message>: Send + 'static {
    /// Handles `msg` and returns the reply.
    fn serve(&mut self, msg: M) -> M::Reply;
}

/// The owner, with its actor type erased.
trait Owner: Send + Sync {
    /// Runs `job` on the owner's turn, in mailbox order; gives it back if the owner
    /// has stopped.
    fn run(&self, job: Job) -> Result<(), Job>;
    fn is_stopped(&self) -> bool;
}

/// Holds the owner's memory, not a strong reference: a bestowed handle does not keep
/// its owner alive.
struct OwnerCell<O: Actor>(Arc<Cell<O>>);

impl<O: Actor> Owner for OwnerCell<O> {
    fn run(&self, job: Job) -> Result<(), Job> {
        if self.0.is_stopped() {
            return Err(job);
        }
        // A job is dropped undelivered if the owner stops first; its reply channel
        // then tells the caller.
        self.0.push_node(job.into_node::<O>());
        Ok(())
    }

    fn is_stopped(&self) -> bool {
        self.0.is_stopped()
    }
}

/// What every handle reads on every use; the owner's turn never writes it (but for a
/// revoke), so its cache line stays with the senders.
pub(super) struct Slot<T: Send + 'static> {
    owner: Box<dyn Owner>,
    owner_id: ActorId,
    revoked: AtomicBool,
    /// Uses pushed to the owner, counted by the senders (see `Drop for Slot`).
    sent: AtomicUsize,
    /// Owned: freed by `Slot`'s drop, or later by a release job (see there).
    object: NonNull<CachePadded<Object<T>>>,
}

/// What only the owner's turn touches, on a cache line of its own: the use writes it
/// while the next sender reads its [`Slot`].
struct Object<T> {
    /// `None` once revoked.
    value: UnsafeCell<Option<T>>,
    /// Uses finished: written only on the owner's turn, after the use's last access to
    /// `value` (`Release`), read by the last handle's drop (`Acquire`).
    done: AtomicUsize,
}

/// A pointer to a slot's object, carried by a use's job instead of a count of the
/// slot (a count moved between the sender's and the owner's cores on every use).
struct ObjectRef<T>(NonNull<CachePadded<Object<T>>>);

// SAFETY: only a pointer; the object is used on the owner's turn only (see `object`),
// `T: Send` lets that turn be on any worker.
unsafe impl<T: Send> Send for ObjectRef<T> {}

impl<T> ObjectRef<T> {
    /// # Safety
    /// The object is alive for `'a`.
    unsafe fn get<'a>(&self) -> &'a Object<T> {
        // SAFETY: caller contract; shared access only (the value is behind its
        // `UnsafeCell`).
        unsafe { self.0.as_ref() }
    }

    /// # Safety
    /// On the owner's turn, the object alive (the job runs before its release job,
    /// see [`Drop for Slot`]) and no other live borrow of its value.
    #[allow(clippy::mut_from_ref)]
    unsafe fn value<'a>(&self) -> Option<&'a mut T> {
        // SAFETY: caller contract.
        unsafe { self.cell() }.as_mut()
    }

    /// The value's cell itself (for a revoke, which takes it).
    ///
    /// # Safety
    /// As for [`value`](Self::value).
    #[allow(clippy::mut_from_ref)]
    unsafe fn cell<'a>(&self) -> &'a mut Option<T> {
        // SAFETY: caller contract.
        unsafe { &mut *self.get().value.get() }
    }

    /// Counts the use as finished; the job touches the object no more after this.
    ///
    /// # Safety
    /// On the owner's turn, the object alive, after the use's last access to `value`.
    unsafe fn finished(&self) {
        // SAFETY: caller contract (alive). Only the owner's turns write `done`, one at
        // a time, so a load and a store make the increment.
        let done = unsafe { &self.get().done };
        done.store(done.load(Ordering::Relaxed) + 1, Ordering::Release);
    }
}

/// Owns the object's allocation: dropping it drops the value and frees it.
struct ObjectBox<T>(ObjectRef<T>);

impl<T> Drop for ObjectBox<T> {
    fn drop(&mut self) {
        // SAFETY: made by `Box::into_raw` in `bestow`, freed only here, once (only the
        // slot's drop makes an `ObjectBox`), after every use that may run (the
        // protocol of `Drop for Slot`).
        drop(unsafe { Box::from_raw((self.0).0.as_ptr()) });
    }
}

// SAFETY: the slot's own fields are `Sync`; the object behind `object` is only
// accessed on the owner's turn (by a job the owner runs, or by `with`/`revoke`, which
// require the owner's context), and an actor's turns never overlap; `T: Send` lets it
// be used from whichever worker runs the turn and dropped on any thread.
unsafe impl<T: Send + 'static> Sync for Slot<T> {}
// SAFETY: as for `Sync`: the slot owns the object, which is `Send`.
unsafe impl<T: Send + 'static> Send for Slot<T> {}

impl<T: Send + 'static> Slot<T> {
    fn object(&self) -> ObjectRef<T> {
        ObjectRef(self.object)
    }
}

/// The last handle is gone. The object must outlive every use already pushed, but
/// uses carry no count of the slot. The senders count the uses they push (`sent`),
/// the owner's turn counts those it finished (`done`): equal, nothing is in flight and
/// the object goes now. Otherwise a release job, pushed after all of them (each push
/// happened before its handle's drop, and so before this one), frees it on the
/// owner's turn after them: the mailbox is FIFO and jobs are never held back or
/// reordered. If the owner has stopped, its remaining uses are dropped unrun, so the
/// object goes now too.
impl<T: Send + 'static> Drop for Slot<T> {
    fn drop(&mut self) {
        let sent = *self.sent.get_mut();
        let object = ObjectBox(self.object());
        // SAFETY: alive: only this drop frees it (through `object`).
        let done = unsafe { &object.0.get().done };
        if done.load(Ordering::Acquire) == sent {
            return;
        }
        let job = Job::new(move || drop(object));
        if let Err(job) = self.owner.run(job) {
            drop(job);
        }
    }
}

/// A handle to an object owned by an actor: `Send + Sync + Clone`, usable by any
/// actor or thread, while the object never leaves its owner.
///
/// [`tell`](Bestowed::tell) and [`ask`](Bestowed::ask) run the object's
/// [`Serve`] impl on the owner's turn, one use at a time, between the owner's own
/// messages (macro-step and isolation hold). Each use costs one node and one push,
/// as a plain `tell` does: the node holds the use (message, handle, reply channel)
/// inline. The owner reaches the object directly
/// with [`with`](Bestowed::with) and can [`revoke`](Bestowed::revoke) it. Once the
/// owner has stopped, uses fail with [`BestowError::OwnerStopped`]; once it is
/// revoked, with [`BestowError::Revoked`].
///
/// **Across nodes.** When `T`'s messages are in a remote interface
/// (`odeon_remote::remote_object!`) and the owner's system runs an `odeon-remote`
/// node, `Bestowed<T>` is `Serialize + Deserialize` and travels inside remote
/// messages. A use at another node is a remote message to the owner's node that
/// runs inside the owner's turn there, exactly as a local use does; owner stopped
/// or object revoked give the same errors, and a lost node gives
/// [`BestowError::Unreachable`]. [`with`](Bestowed::with) and
/// [`revoke`](Bestowed::revoke) stay with the owner, and
/// [`atomic`](Bestowed::atomic) (a closure) fails with [`BestowError::Remote`] on a
/// handle from another node. Sent back to the owner's node, a handle is local again.
///
/// The object lives as long as a handle to it does (or until revoked), not as long as
/// the owner's state: a supervisor's restart of the owner keeps it lent out. When the
/// last handle goes, the object is dropped at once if every use sent through the
/// handles has run (or the owner has stopped); otherwise the uses still queued run
/// first and the object is dropped on the owner's turn right after them. A panic
/// in [`Serve::serve`] fails the owner, as a panic in its own handler would.
///
/// ```
/// use odeon::{Actor, Bestowed, Context, Handler, Message, Serve, System};
///
/// // The owner keeps a list private and lends out a cursor over it.
/// struct Cursor { items: Vec<u32>, at: usize }
/// struct Next;
/// impl Message for Next { type Reply = Option<u32>; }
/// impl Serve<Next> for Cursor {
///     fn serve(&mut self, _: Next) -> Option<u32> {
///         let item = self.items.get(self.at).copied();
///         self.at += 1;
///         item
///     }
/// }
///
/// struct Library;
/// impl Actor for Library {}
/// struct Lend;
/// impl Message for Lend { type Reply = Bestowed<Cursor>; }
/// impl Handler<Lend> for Library {
///     fn handle(&mut self, _: Lend, cx: &mut Context<Self>) -> Bestowed<Cursor> {
///         cx.bestow(Cursor { items: vec![1, 2], at: 0 })
///     }
/// }
///
/// let system = System::new();
/// let library = system.spawn(Library);
/// let cursor = system.block_on(library.ask(Lend)).unwrap();
/// assert_eq!(system.block_on(cursor.ask(Next)), Ok(Some(1)));
/// assert_eq!(system.block_on(cursor.ask(Next)), Ok(Some(2)));
/// assert_eq!(system.block_on(cursor.ask(Next)), Ok(None));
/// library.stop();
/// while library.is_alive() { std::thread::yield_now(); }
/// assert_eq!(cursor.tell(Next), Err(odeon::BestowError::OwnerStopped));
/// system.shutdown();
/// ```
pub struct Bestowed<T: Send + 'static> {
    pub(super) handle: Handle<T>,
}

/// Where the object is: here, or with its owner on another node.
pub(super) enum Handle<T: Send + 'static> {
    Local(Arc<Slot<T>>),
    /// Only deserialization makes one.
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    Remote(Arc<dyn ObjectEndpoint>),
}

impl<T: Send + 'static> Clone for Bestowed<T> {
    fn clone(&self) -> Self {
        Self {
            handle: match &self.handle {
                Handle::Local(slot) => Handle::Local(slot.clone()),
                Handle::Remote(ep) => Handle::Remote(ep.clone()),
            },
        }
    }
}

impl<T: Send + 'static> std::fmt::Debug for Bestowed<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bestowed")
            .field("owner", &self.owner())
            .field("local", &matches!(self.handle, Handle::Local(_)))
            .field("type", &std::any::type_name::<T>())
            .finish()
    }
}

impl<T: Send + 'static> Bestowed<T> {
    /// The owner's id.
    pub fn owner(&self) -> ActorId {
        match &self.handle {
            Handle::Local(slot) => slot.owner_id,
            Handle::Remote(ep) => ep.owner(),
        }
    }

    /// Whether uses may still succeed: not revoked, and the owner has not stopped.
    /// For a handle to an object on another node: whether that node is not known to
    /// be lost (a revoke or the owner's stop there shows at the next use).
    pub fn is_usable(&self) -> bool {
        match &self.handle {
            Handle::Local(slot) => {
                !slot.revoked.load(Ordering::Acquire) && !slot.owner.is_stopped()
            }
            Handle::Remote(ep) => ep.is_usable(),
        }
    }

    /// Whether the owner revoked the object (as far as this node knows: for a handle
    /// to an object on another node, a revoke there shows at the next use).
    pub fn is_revoked(&self) -> bool {
        match &self.handle {
            Handle::Local(slot) => slot.revoked.load(Ordering::Acquire),
            Handle::Remote(_) => false,
        }
    }

    /// Whether the object lives on this node (else uses travel to its owner's node).
    pub fn is_local(&self) -> bool {
        matches!(self.handle, Handle::Local(_))
    }

    fn check(&self) -> Result<&Arc<Slot<T>>, BestowError> {
        match &self.handle {
            Handle::Local(slot) if slot.revoked.load(Ordering::Acquire) => {
                Err(BestowError::Revoked)
            }
            Handle::Local(slot) => Ok(slot),
            Handle::Remote(_) => Err(BestowError::Remote),
        }
    }

    /// Pushes a use to the owner, counted for the last handle's drop.
    fn push(slot: &Slot<T>, job: Job) -> Result<(), Job> {
        // Relaxed: the last handle's drop reads it after every other handle's drop,
        // which the `Arc`'s count orders after their pushes.
        slot.sent.fetch_add(1, Ordering::Relaxed);
        slot.owner.run(job)
    }

    /// Sends `msg` to the object, to be handled on the owner's turn. Fails if the
    /// object was revoked or the owner has stopped; a use still queued when that
    /// happens is dropped.
    pub fn tell<M: Message>(&self, msg: M) -> Result<(), BestowError>
    where
        T: Serve<M>,
    {
        if let Handle::Remote(ep) = &self.handle {
            return super::bestow_remote::tell(&**ep, msg);
        }
        let slot = self.check()?;
        let object = slot.object();
        let job = Job::new(move || {
            // SAFETY: jobs run on the owner's turn (`Owner::run`), with no other
            // borrow of the object, which outlives them (`Drop for Slot`).
            if let Some(value) = unsafe { object.value() } {
                drop(value.serve(msg));
            }
            // SAFETY: as above; the use is done with the object.
            unsafe { object.finished() };
        });
        Self::push(slot, job).map_err(|_| BestowError::OwnerStopped)
    }

    /// Sends `msg` to the object and returns the future of its reply.
    pub fn ask<M: Message>(&self, msg: M) -> BestowedAsk<M::Reply>
    where
        T: Serve<M>,
    {
        if let Handle::Remote(ep) = &self.handle {
            return super::bestow_remote::ask(&**ep, msg);
        }
        let owner = match self.check() {
            Ok(owner) => owner,
            Err(e) => return BestowedAsk::failed(e),
        };
        let (tx, rx) = oneshot::channel();
        let object = owner.object();
        let job = Job::new(move || {
            // SAFETY: as in `tell`.
            let out = match unsafe { object.value() } {
                Some(value) => Ok(value.serve(msg)),
                None => Err(BestowError::Revoked),
            };
            // SAFETY: as in `tell`.
            unsafe { object.finished() };
            let _ = tx.send(out);
        });
        match Self::push(owner, job) {
            Ok(()) => BestowedAsk {
                rx: Some(rx),
                early: None,
            },
            Err(_) => BestowedAsk::failed(BestowError::OwnerStopped),
        }
    }

    /// Runs `f` on the object on the owner's turn, as one use: several operations
    /// with nothing in between (Encore's atomic block on a bestowed object, with no
    /// blocked caller: the result comes back as a future).
    ///
    /// ```
    /// use odeon::{Actor, Context, Handler, Message, System};
    ///
    /// struct Owner;
    /// impl Actor for Owner {}
    /// struct Lend;
    /// impl Message for Lend { type Reply = odeon::Bestowed<Vec<u32>>; }
    /// impl Handler<Lend> for Owner {
    ///     fn handle(&mut self, _: Lend, cx: &mut Context<Self>) -> odeon::Bestowed<Vec<u32>> {
    ///         cx.bestow(vec![3, 1, 2])
    ///     }
    /// }
    ///
    /// let system = System::new();
    /// let owner = system.spawn(Owner);
    /// let list = system.block_on(owner.ask(Lend)).unwrap();
    /// let sorted = list.atomic(|v| { v.sort(); v.clone() });
    /// assert_eq!(system.block_on(sorted), Ok(vec![1, 2, 3]));
    /// system.shutdown();
    /// ```
    pub fn atomic<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut T) -> R + Send + 'static,
    ) -> BestowedAsk<R> {
        let owner = match self.check() {
            Ok(owner) => owner,
            Err(e) => return BestowedAsk::failed(e),
        };
        let (tx, rx) = oneshot::channel();
        let object = owner.object();
        let job = Job::new(move || {
            // SAFETY: as in `tell`.
            let out = match unsafe { object.value() } {
                Some(value) => Ok(f(value)),
                None => Err(BestowError::Revoked),
            };
            // SAFETY: as in `tell`.
            unsafe { object.finished() };
            let _ = tx.send(out);
        });
        match Self::push(owner, job) {
            Ok(()) => BestowedAsk {
                rx: Some(rx),
                early: None,
            },
            Err(_) => BestowedAsk::failed(BestowError::OwnerStopped),
        }
    }

    /// Runs `f` on the object from its owner's own handler. Fails with
    /// [`BestowError::NotOwner`] if `cx` is not the owner's context, and with
    /// [`BestowError::Revoked`] after a revoke.
    pub fn with<O: Actor, R>(
        &self,
        cx: &mut Context<O>,
        f: impl FnOnce(&mut T) -> R,
    ) -> Result<R, BestowError> {
        let Handle::Local(slot) = &self.handle else {
            return Err(BestowError::NotOwner);
        };
        if cx.id() != slot.owner_id {
            return Err(BestowError::NotOwner);
        }
        // SAFETY: `cx` is the owner's context, which only exists on the owner's turn,
        // and it stays mutably borrowed while `f` runs, so `f` cannot reach the object
        // through another handle; this handle keeps the object alive.
        match unsafe { slot.object().value() } {
            Some(object) => Ok(f(object)),
            None => Err(BestowError::Revoked),
        }
    }

    /// Takes the object back: every handle fails with [`BestowError::Revoked`] from
    /// now on, uses already queued included. Only the owner may revoke (`cx` is its
    /// context); returns the object.
    pub fn revoke<O: Actor>(&self, cx: &mut Context<O>) -> Result<T, BestowError> {
        let Handle::Local(slot) = &self.handle else {
            return Err(BestowError::NotOwner);
        };
        if cx.id() != slot.owner_id {
            return Err(BestowError::NotOwner);
        }
        slot.revoked.store(true, Ordering::Release);
        // SAFETY: as in `with`: on the owner's turn, nothing else borrows the object.
        unsafe { slot.object().cell() }
            .take()
            .ok_or(BestowError::Revoked)
    }
}

impl<A: Actor> Context<A> {
    /// Lends `object` out: the returned handle may be cloned and sent to any actor,
    /// and each use runs on this actor's turn. See [`Bestowed`].
    pub fn bestow<T: Send + 'static>(&mut self, object: T) -> Bestowed<T> {
        let object = Box::new(CachePadded::new(Object {
            value: UnsafeCell::new(Some(object)),
            done: AtomicUsize::new(0),
        }));
        Bestowed {
            handle: Handle::Local(Arc::new(Slot {
                owner: Box::new(OwnerCell(self.cell_arc())),
                owner_id: self.id(),
                revoked: AtomicBool::new(false),
                sent: AtomicUsize::new(0),
                object: NonNull::from(Box::leak(object)),
            })),
        }
    }
}

/// The future of a reply from a bestowed object ([`Bestowed::ask`]).
#[must_use = "an ask does nothing useful unless its reply is awaited"]
#[derive(Debug)]
pub struct BestowedAsk<R> {
    rx: Option<oneshot::Receiver<Result<R, BestowError>>>,
    early: Option<BestowError>,
}

impl<R> BestowedAsk<R> {
    pub(super) fn waiting(rx: oneshot::Receiver<Result<R, BestowError>>) -> Self {
        Self {
            rx: Some(rx),
            early: None,
        }
    }

    pub(super) fn failed(e: BestowError) -> Self {
        Self {
            rx: None,
            early: Some(e),
        }
    }
}

impl<R> Future for BestowedAsk<R> {
    type Output = Result<R, BestowError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        if let Some(e) = this.early.take() {
            return Poll::Ready(Err(e));
        }
        let Some(rx) = this.rx.as_mut() else {
            return Poll::Ready(Err(BestowError::OwnerStopped));
        };
        match Pin::new(rx).poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(res) => {
                this.rx = None;
                // A dropped job: the owner stopped before running it (or the object
                // panicked, which fails the owner).
                Poll::Ready(res.unwrap_or(Err(BestowError::OwnerStopped)))
            }
        }
    }
}
