//! The actor cell: everything the runtime keeps for one actor.
//!
//! # Who touches what
//! | field | written by | how |
//! |---|---|---|
//! | `mailbox` | any sender (push) / the turn (pop) | lock-free, see `mailbox/` |
//! | `flags`, `wake`, `refs` | anyone | atomics |
//! | `ctl` (watchers, links, stop reason) | other actors, the turn at stop | mutex |
//! | `life`, `cx`, `state`, `pending` | **only the actor's current turn** | `UnsafeCell` |
//!
//! A turn is exclusive because a cell is scheduled at most once at a time: only the push
//! that finds the mailbox marked empty schedules it (see `mailbox/mod.rs`), and a parked
//! async turn is rescheduled only by the waker's `PARKED -> SCHEDULED` transition.
//!
//! # Lifetime
//! The cell lives in an `Arc`. While the actor has not stopped, the runtime holds one
//! count of its own (taken at spawn with `Arc::into_raw`, given back by the turn that
//! stops it), so run queues can hold plain pointers. `ActorRef`s hold counts too and
//! also count in `refs`, the number of strong user references (local actor GC).
//!
//! # Async turns (`wake` state machine)
//! `IDLE` -(async handler starts)-> `RUNNING` -(poll: Pending)-> `PARKED`
//! -(waker)-> `SCHEDULED` -(turn resumes)-> `RUNNING` -(Ready)-> `IDLE`.
//! A wake during `RUNNING` sets `NOTIFIED`, and the turn polls again instead of parking.
//! A pending future may ask to give the worker up (`YIELDED`, a long reservation in
//! `sharing/`): the turn then ends as `SCHEDULED` and requeues, and polls it next time.
//! While `PARKED` the mailbox stays unmarked, so senders never schedule the actor.
//!
//! # Migration (`migrate.rs`)
//! A mobile actor's turn can *freeze* between two messages: it hands the turn to a
//! transport (`FREEZING`, then `FROZEN` once the turn has returned) without marking the
//! mailbox, so arriving messages queue in order and nothing schedules the actor, as
//! while `PARKED`. Stop and kill requests do not wake a frozen turn. The transport ends
//! the freeze with a resume (the turn runs again here) or a commit (the cell becomes a
//! forwarding *stub*: `MOVED` is set and `Phase::Moved` forwards what arrives).

mod drain;
mod lifecycle;
mod migrate;
#[cfg(feature = "observe")]
mod observed;
mod spawn;
mod start;
mod turn;
mod wake;

use std::cell::UnsafeCell;
use std::collections::VecDeque;
use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU8, AtomicUsize, Ordering};
use std::task::{Wake, Waker};

use crate::sync::Mutex;

pub(crate) use lifecycle::AnyCell;
pub(crate) use migrate::{FrozenCell, MobileCell, MoveGuard, prepare_cell};
pub use spawn::SpawnOptions;
pub(crate) use spawn::spawn;

use crate::mailbox::node::{Header, PendingFuture, message_node, notice_vtable, signal_node};
use crate::mailbox::queue::{Head, Push, Queue};
use crate::refs::ask::ReplyTo;
use crate::scheduler::{Placement, Task, TaskHeader};
use crate::supervision::Supervised;
use crate::system::Shared;
use crate::{Actor, ActorId, Context, Handles, Message, StopReason, TellError};

const STOP_REQUESTED: u8 = 1;
const STOPPED: u8 = 2;
/// With `STOP_REQUESTED`: cancel a pending async handler instead of letting it finish.
const KILL_REQUESTED: u8 = 4;
/// The actor moved to another node: this cell is a stub that forwards (`migrate.rs`).
/// Tested on the same load as `STOPPED` in `Cell::send`.
const MOVED: u8 = 8;
/// `ActorRef::stop_gracefully` was called: sends are refused from now on, and a stop
/// signal queued behind everything already accepted stops the actor (`drain.rs`).
/// Tested on the same load as `STOPPED` in `Cell::send`, so it costs senders nothing.
const DRAINING: u8 = 16;

const IDLE: u8 = 0;
const RUNNING: u8 = 1;
const NOTIFIED: u8 = 2;
const PARKED: u8 = 3;
const SCHEDULED: u8 = 4;
/// A turn froze the actor and is still returning; a transport that ends the freeze
/// meanwhile sets `THAWED` and the turn requeues itself instead of parking.
const FREEZING: u8 = 5;
/// Frozen: a transport owns the turn. `wake_turn` leaves it alone.
const FROZEN: u8 = 6;
const THAWED: u8 = 7;
/// A pending future asked its turn to end here and go to the back of a run queue
/// (`sharing/`: a reservation that used up its budget). Only a turn sets it, from
/// `RUNNING` or `NOTIFIED`; `park` turns it into `SCHEDULED` + `Requeue`.
const YIELDED: u8 = 8;

/// Where the actor is in its life. Owned by the turn.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Phase {
    /// Spawned; `started` has not run yet.
    New,
    Running,
    /// A supervised actor whose handler panicked: its state is gone, user messages are
    /// held until the supervisor's directive arrives.
    Failed,
    /// Frozen for a move: a transport owns the turn (`migrate.rs`).
    Frozen,
    /// A forwarding stub: the actor moved away; the state is gone.
    Moved,
    /// Installed by a transport and not yet activated: nothing runs.
    Prepared,
    /// Runs `migration_failed` first on the next turn (a move was aborted).
    Resumed,
    /// Runs `migrated` first on the next turn (the actor arrived here).
    Migrated,
}

/// Owner-only bookkeeping of the turn.
pub(crate) struct Life<A: Actor> {
    pub(crate) phase: Phase,
    /// A strong reference was dropped to zero; check for GC when the mailbox drains.
    pub(crate) gc_check: bool,
    /// Exempt from collection (`SpawnOptions::keep_alive`): read only when `gc_check`
    /// is set, so other actors pay nothing for it.
    pub(crate) keep_alive: bool,
    /// User messages held back while `Failed`, or unstashed; delivered before the mailbox.
    pub(crate) held: VecDeque<NonNull<Header<A>>>,
    pub(crate) supervision: Option<Box<Supervised<A>>>,
    /// Cached metric handles and the turn's clock stamp of an observing system.
    #[cfg(feature = "observe")]
    pub(crate) obs: crate::observe::TurnObs,
}

/// Rarely used, fixed at spawn.
pub(crate) struct Extras {
    /// Bounded mailboxes: one permit per queued user message.
    pub(crate) bound: Option<tokio::sync::Semaphore>,
    /// Blocking actors: their own thread.
    pub(crate) dedicated: Option<Dedicated>,
    /// Actors installed by a transport after a move: their birth identity.
    pub(crate) mobile: Option<Box<MobileCell>>,
    /// Named actors (`SpawnOptions::name`): out of line, so unnamed ones pay nothing.
    pub(crate) name: Option<Box<str>>,
}

/// The thread of a blocking actor.
pub(crate) struct Dedicated {
    pub(crate) ready: AtomicBool,
    pub(crate) unparker: crossbeam_utils::sync::Unparker,
}

/// Delivers a `Terminated` to one watcher.
pub(crate) type Notify = Box<dyn FnOnce(crate::Terminated) + Send>;

/// State other actors touch: behind a mutex, allocated on first use.
#[derive(Default)]
pub(crate) struct Control {
    pub(crate) watchers: Vec<(ActorId, Notify)>,
    pub(crate) links: Vec<Arc<dyn AnyCell>>,
    pub(crate) stop_reason: Option<StopReason>,
    /// A stop from the supervisor or from shutdown was requested: it wins over any
    /// restart (`lifecycle.rs`), whatever reason was requested first.
    pub(crate) no_restart: bool,
    pub(crate) final_reason: Option<StopReason>,
    /// A stub's route (set once, at commit, before `MOVED`).
    pub(crate) route: Option<Arc<dyn crate::remote::Forward>>,
}

/// The fields are ordered by who touches them on the hot paths, so that a producer on
/// one core and the actor's turn on another do not write to a cache line the other
/// reads for every message, without padding (an idle actor must stay small). The
/// allocation is not line-aligned (`Arc`'s counts come first, and blocks of this size
/// sit at varying offsets in a line), so the groups rely on distances, not alignment:
///
/// 1. `mailbox_head`, which every send writes, with 56 bytes of fields behind it that
///    no hot path touches for each message (`ctl`, `id`, `refs`, `raw`, `pending`),
///    so that the consumer's fields start a full line after it.
/// 2. Fields both sides read but rarely write (`flags`, `wake`, `shared`, `extras`),
///    and `life`, which a turn reads for each message.
/// 3. What the turn writes for each message: `mailbox` (its `tail`), `cx`, and the
///    actor's state, last.
///
/// Measured on Counting with the producer and the counter on two workers: 36.7 → 26.7
/// ms (`docs/bench/per-message-2026-11-25.md`).
#[repr(C)]
pub(crate) struct Cell<A: Actor> {
    /// Must stay first: run queues hold `NonNull<TaskHeader>` pointing here.
    task: TaskHeader,
    mailbox_head: Head,
    pub(crate) ctl: Mutex<Option<Box<Control>>>,
    id: ActorId,
    pub(crate) refs: AtomicUsize,
    /// This cell as `Arc::as_ptr` gave it: the only pointer the runtime turns into a
    /// task, a waker or a new `Arc`, because it carries provenance over the whole
    /// allocation (a pointer made from `&self` would not; Miri checks this).
    raw: AtomicPtr<Cell<A>>,
    pending: UnsafeCell<Option<PendingFuture>>,
    flags: AtomicU8,
    wake: crate::loom::AtomicU8,
    shared: Arc<Shared>,
    extras: Option<Box<Extras>>,
    /// Mailbox depth and trace contexts of an observing system (`observe/`).
    #[cfg(feature = "observe")]
    obs: crate::observe::CellObs,
    life: UnsafeCell<Life<A>>,
    mailbox: Queue,
    cx: UnsafeCell<Context<A>>,
    state: UnsafeCell<Option<A>>,
}

// SAFETY: the `UnsafeCell` fields are only accessed by the actor's current turn, and
// turns are serialized by the scheduling protocol (module docs); `A: Send` lets the
// state move between worker threads. Everything else is atomic or locked.
unsafe impl<A: Actor> Sync for Cell<A> {}
// SAFETY: as above; the raw node pointers in `life.held` are owned messages of `Send`
// types.
unsafe impl<A: Actor> Send for Cell<A> {}

impl<A: Actor> Cell<A> {
    pub(crate) fn id(&self) -> ActorId {
        self.id
    }

    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// The id `ActorRef::id` reports: the birth id for an actor that moved here.
    pub(crate) fn public_id(&self) -> ActorId {
        match self.mobile() {
            Some(m) => m.birth.id,
            None => self.id,
        }
    }

    /// The name given at spawn, if any.
    pub(crate) fn name(&self) -> Option<&str> {
        self.extras.as_ref().and_then(|e| e.name.as_deref())
    }

    /// How log lines show this actor: id, type and name (if any).
    pub(crate) fn label(&self) -> crate::actor::Label<'_> {
        crate::actor::Label {
            id: self.public_id(),
            type_name: std::any::type_name::<A>(),
            name: self.name(),
        }
    }

    pub(crate) fn mobile(&self) -> Option<&MobileCell> {
        self.extras.as_ref().and_then(|e| e.mobile.as_deref())
    }

    pub(crate) fn is_stopped(&self) -> bool {
        self.flags.load(Ordering::Acquire) & STOPPED != 0
    }

    /// Whether a stop or kill was requested and not acted on yet.
    pub(crate) fn stop_requested(&self) -> bool {
        self.flags.load(Ordering::Acquire) & STOP_REQUESTED != 0
    }

    pub(crate) fn raw(&self) -> NonNull<Cell<A>> {
        match NonNull::new(self.raw.load(Ordering::Relaxed)) {
            Some(p) => p,
            None => unreachable!("a cell is used before spawn recorded its address"),
        }
    }

    fn task(&self) -> Task {
        // `task` is the first field of this `#[repr(C)]` struct.
        Task::new(self.raw().cast())
    }

    /// Asks the processor to start loading the lines a send touches (`mailbox_head`,
    /// then `flags`, `shared` and `extras`: see the layout above) without waiting for
    /// them. A send's atomic swap orders every load before it, so a sender telling
    /// many cold actors in a row pays one full cache miss after another; prefetched a
    /// few sends ahead, the misses overlap.
    #[inline]
    pub(crate) fn prefetch(self: &Arc<Self>) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            let base = Arc::as_ptr(self).cast::<i8>();
            // Three lines from the cell's start cover groups 1 and 2 (group 2 ends about
            // 100 bytes in) wherever the allocation sits in a line: the cell is not
            // line-aligned.
            for line in [0usize, 64, 128] {
                // A prefetch never faults and never dereferences in the language's
                // sense; `wrapping_add` keeps the address computation defined even if
                // it pointed past the allocation.
                #[allow(unused_unsafe)]
                // SAFETY: `_mm_prefetch` is only `unsafe` before Rust 1.87 (it needs
                // SSE, which every x86_64 has); it reads nothing the program can see.
                unsafe {
                    _mm_prefetch::<_MM_HINT_T0>(base.wrapping_add(line));
                }
            }
        }
    }

    fn bound(&self) -> Option<&tokio::sync::Semaphore> {
        self.extras.as_ref().and_then(|e| e.bound.as_ref())
    }

    pub(crate) fn semaphore(&self) -> Option<&tokio::sync::Semaphore> {
        self.bound()
    }

    /// Sends `msg`, with a reply channel for asks. Never blocks.
    pub(crate) fn send<M, K>(
        &self,
        msg: M,
        reply: Option<ReplyTo<M::Reply>>,
    ) -> Result<(), TellError<M>>
    where
        M: Message,
        A: Handles<M, K>,
    {
        // One load and one test for all three: a stopped or draining actor and a stub
        // (whose cold path refuses types that cannot leave the node, `migrate.rs`).
        if self.flags.load(Ordering::Acquire) & (STOPPED | MOVED | DRAINING) != 0 {
            if let Err(refusal) = self.refuse_or_pass::<M>() {
                return Err(refusal.with(msg));
            }
        }
        if let Some(bound) = self.bound() {
            match bound.try_acquire() {
                Ok(permit) => permit.forget(),
                Err(tokio::sync::TryAcquireError::NoPermits) => return Err(TellError::Full(msg)),
                Err(tokio::sync::TryAcquireError::Closed) => {
                    return Err(TellError::Stopped(msg));
                }
            }
        }
        let vtables = A::__vtables();
        let node = match reply {
            Some(reply) => message_node(vtables.ask, msg, reply),
            None => message_node(vtables.tell, msg, ()),
        };
        #[cfg(feature = "observe")]
        if self.shared.config.observe {
            self.observe_send(node);
        }
        self.push_node(node);
        Ok(())
    }

    /// Sends `msg` (with a reply channel for asks) after a permit was already taken
    /// (awaitable send or ask to a bounded mailbox).
    pub(crate) fn send_with_permit<M, K>(
        &self,
        msg: M,
        reply: Option<ReplyTo<M::Reply>>,
    ) -> Result<(), TellError<M>>
    where
        M: Message,
        A: Handles<M, K>,
    {
        if self.flags.load(Ordering::Acquire) & (STOPPED | MOVED | DRAINING) != 0 {
            if let Err(refusal) = self.refuse_or_pass::<M>() {
                if let Some(b) = self.bound() {
                    b.add_permits(1);
                }
                return Err(refusal.with(msg));
            }
        }
        let vtables = A::__vtables();
        let node = match reply {
            Some(reply) => message_node(vtables.ask, msg, reply),
            None => message_node(vtables.tell, msg, ()),
        };
        #[cfg(feature = "observe")]
        if self.shared.config.observe {
            self.observe_send(node);
        }
        self.push_node(node);
        Ok(())
    }

    /// Sends a runtime notice (`Terminated`): never refused by a bound, and dropped only
    /// if the actor has stopped (see [`Kind::Notice`](crate::mailbox::node::Kind)).
    pub(crate) fn send_notice<M>(&self, msg: M)
    where
        M: Message,
        A: crate::Handler<M>,
    {
        if !self.is_stopped() {
            self.push_node(message_node(notice_vtable::<A, M>(), msg, ()));
        }
    }

    /// Builds a node for `msg` without sending it (stash).
    pub(crate) fn make_node<M, K>(msg: M) -> NonNull<Header<A>>
    where
        M: Message,
        A: Handles<M, K>,
    {
        message_node(A::__vtables().tell, msg, ())
    }

    /// Runs `f` on the actor's turn, in mailbox order.
    pub(crate) fn signal(&self, f: impl FnOnce(&Cell<A>) + Send + 'static) {
        self.push_node(signal_node(f));
    }

    /// Pushes a chain of nodes as one (an atomic batch): nothing from another sender
    /// lands between them.
    pub(crate) fn push_chain(&self, chain: crate::mailbox::chain::Chain) {
        // SAFETY: the chain owns its nodes, freshly allocated and in no queue; they stay
        // alive until popped (nodes are only freed by deliver/discard).
        let push = unsafe { self.mailbox.push_chain(&self.mailbox_head, chain) };
        if push == Some(Push::WasEmpty) {
            self.schedule(Placement::Slot, true);
        }
    }

    pub(crate) fn push_node(&self, node: NonNull<Header<A>>) {
        // SAFETY: the node is freshly allocated and owned by no queue; it stays alive
        // until popped (nodes are only freed by deliver/discard).
        let push = unsafe { self.mailbox.push(&self.mailbox_head, Header::link(node)) };
        if push == Push::WasEmpty {
            self.schedule(Placement::Slot, true);
        }
    }

    /// The push that found the mailbox empty owns the consumer role. Gives it to a
    /// worker, or, if the actor has stopped, drains the mailbox itself.
    fn schedule(&self, placement: Placement, new_unit: bool) {
        if self.is_stopped() {
            self.drain_stopped();
            return;
        }
        if let Some(d) = self.extras.as_ref().and_then(|e| e.dedicated.as_ref()) {
            if new_unit {
                self.shared.sched.begin_unit();
            }
            d.ready.store(true, Ordering::Release);
            d.unparker.unpark();
            return;
        }
        if crate::scheduler::inline::keep(&self.shared, self.task(), new_unit) {
            return;
        }
        self.shared.sched.schedule(self.task(), placement, new_unit);
    }

    /// Wakes a parked async turn (also used to make a stop request seen promptly).
    pub(crate) fn wake_turn(&self) {
        if wake::wake(&self.wake) {
            self.schedule(Placement::Slot, false);
        }
    }

    /// Called by a pending future on its own turn: ends the turn after this poll and
    /// requeues the actor at the back (fairness for long reservations, `sharing/`).
    /// A wake meanwhile is not lost: the next turn polls again anyway.
    pub(crate) fn yield_turn(&self) {
        // Only `wake_turn` changes `wake` concurrently, and only RUNNING -> NOTIFIED,
        // which this overrides on purpose (the requeued turn polls anyway).
        self.wake.store(YIELDED, Ordering::Release);
    }

    fn waker(&self) -> Waker {
        // SAFETY: `self` lives in an `Arc` (module docs: every cell is created by
        // `spawn` with `Arc::new`), and the runtime holds a count while a turn runs, so
        // adding a count and rebuilding an `Arc` from the pointer is sound.
        let arc = unsafe {
            let ptr: *const Self = self.raw().as_ptr();
            Arc::increment_strong_count(ptr);
            Arc::from_raw(ptr)
        };
        Waker::from(arc)
    }

    /// # Safety
    /// Only inside the actor's turn, with no other live borrow of `life`.
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn life(&self) -> &mut Life<A> {
        // SAFETY: caller contract (turn exclusivity, module docs).
        unsafe { &mut *self.life.get() }
    }

    /// # Safety
    /// Only inside the actor's turn, with no pending async handler (which borrows both)
    /// and no other live borrow of either.
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn state_and_context(&self) -> (&mut A, &mut Context<A>) {
        // SAFETY: caller contract. A user message is only delivered while the actor has
        // state (phase Running), which `turn` checks before delivering.
        unsafe {
            let state = (*self.state.get())
                .as_mut()
                .unwrap_or_else(|| unreachable!("message delivered to an actor with no state"));
            (state, &mut *self.cx.get())
        }
    }

    /// # Safety
    /// As for [`Cell::state_and_context`].
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn context(&self) -> &mut Context<A> {
        // SAFETY: caller contract.
        unsafe { &mut *self.cx.get() }
    }
}

impl<A: Actor> Wake for Cell<A> {
    fn wake(self: Arc<Self>) {
        self.wake_turn();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.wake_turn();
    }
}

impl<A: Actor> Drop for Cell<A> {
    fn drop(&mut self) {
        // Only reachable after the actor stopped and drained (the runtime's count is
        // given back then), or if it was never started because the system was gone.
        // Free whatever is still queued.
        // SAFETY: `&mut self`: no other thread can touch the cell any more.
        unsafe {
            while let Some(link) = self.mailbox.pop(&self.mailbox_head) {
                let node = Header::<A>::from_link(link);
                (Header::vtable(node).discard)(node);
            }
            let life = &mut *self.life.get();
            for node in life.held.drain(..) {
                (Header::vtable(node).discard)(node);
            }
        }
    }
}

impl<A: Actor> Cell<A> {
    /// Runs `f` on the state, if the actor has one. Only for signals, which run on the
    /// turn and never while an async handler is pending.
    pub(crate) fn with_state(&self, f: impl FnOnce(&mut A, &mut Context<A>)) {
        // SAFETY: signals are delivered on the actor's turn with no pending future and
        // no other borrow of state or context.
        unsafe {
            if let Some(state) = (*self.state.get()).as_mut() {
                f(state, &mut *self.cx.get());
            }
        }
    }
}
