//! Creating actors.

use std::cell::UnsafeCell;
use std::collections::VecDeque;
use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU8, AtomicUsize, Ordering};

use crate::sync::Mutex;

use super::{Cell, Dedicated, Extras, IDLE, Life, Phase};
use crate::mailbox::queue::{Head, Queue};
use crate::scheduler::{Placement, RunOutcome, TaskHeader};
use crate::supervision::Supervised;
use crate::system::Shared;
use crate::{Actor, ActorId, Context, StopReason};

/// How to spawn an actor: mailbox bound, threading, collection and name. The default
/// is an unnamed actor with an unbounded mailbox on the shared worker pool, collected
/// once unreferenced.
///
/// ```
/// use odeon::{Actor, SpawnOptions, System};
/// struct Logger;
/// impl Actor for Logger {}
///
/// let system = System::new();
/// let opts = SpawnOptions::new().bounded(1024).blocking().name("logger");
/// let logger = system.spawn_with(Logger, opts);
/// assert_eq!(logger.name(), Some("logger"));
/// ```
#[derive(Clone, Debug, Default)]
pub struct SpawnOptions {
    bounded: Option<usize>,
    blocking: bool,
    keep_alive: bool,
    name: Option<String>,
}

impl SpawnOptions {
    /// Unbounded mailbox, shared worker pool.
    pub fn new() -> Self {
        Self::default()
    }

    /// Bounds the mailbox to `capacity` user messages (backpressure): `tell` to a full
    /// mailbox fails with [`TellError::Full`](crate::TellError::Full), and
    /// [`ActorRef::send`](crate::ActorRef::send) waits for room.
    ///
    /// Any `capacity` is accepted. With 0 the mailbox is always full: every `tell` and
    /// `ask` is refused with `Full` (runtime signals and stops still reach the actor).
    /// A capacity above `usize::MAX >> 3` (tokio's semaphore limit) is taken as that
    /// limit, which no mailbox reaches.
    pub fn bounded(mut self, capacity: usize) -> Self {
        self.bounded = Some(capacity);
        self
    }

    /// Gives the actor its own OS thread, for handlers that block (synchronous I/O,
    /// FFI calls, long computations) and must not hold a worker of the pool.
    pub fn blocking(mut self) -> Self {
        self.blocking = true;
        self
    }

    /// Exempts the actor from collection: by default an actor whose last strong
    /// reference ([`ActorRef`](crate::ActorRef), [`Recipient`](crate::Recipient), an
    /// armed timer) is dropped stops with
    /// [`StopReason::Unreferenced`](crate::StopReason::Unreferenced) once its mailbox is
    /// empty. A kept-alive actor instead lives until it is stopped (by itself, a
    /// [`WeakActorRef`](crate::WeakActorRef) upgraded later, its parent or the system's
    /// shutdown). Use it for actors that work on their own: a service that a
    /// [`Context::add_stream`](crate::Context::add_stream) or a transport feeds.
    ///
    /// ```
    /// use odeon::{Actor, SpawnOptions, System};
    /// struct Service;
    /// impl Actor for Service {}
    ///
    /// let system = System::new();
    /// let weak = system.spawn_with(Service, SpawnOptions::new().keep_alive()).downgrade();
    /// system.run_until_quiescent();          // no strong ref left, but not collected
    /// let service = weak.upgrade().expect("kept alive");
    /// service.stop();
    /// ```
    pub fn keep_alive(mut self) -> Self {
        self.keep_alive = true;
        self
    }

    /// Names the actor, for people: [`ActorRef::name`](crate::ActorRef::name) returns
    /// it, and the `Debug` output of its refs and the runtime's log lines about it show
    /// it. A name need not be unique and does not make the actor findable; for that,
    /// [`System::register`](crate::System::register) it.
    ///
    /// Only named actors pay for the name (it is kept out of line, with the other
    /// rarely used options).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// A pointer to a blocking actor's `Dedicated`, handed to its thread.
struct DedicatedPtr(NonNull<Dedicated>);
// SAFETY: `Dedicated` is `Sync` (an atomic and an `Unparker`); the pointer is only
// dereferenced while the cell is alive (before its turn returns `Stopped`).
unsafe impl Send for DedicatedPtr {}

/// Creates the cell, registers the runtime's count and schedules the first turn (which
/// runs `started`). The returned `Arc` accounts for one strong user reference.
///
/// # Panics
/// If the OS refuses a thread for a blocking actor.
pub(crate) fn spawn<A: Actor>(
    shared: &Arc<Shared>,
    actor: A,
    opts: SpawnOptions,
    supervision: Option<Box<Supervised<A>>>,
) -> Arc<Cell<A>> {
    let mut parker = None;
    // Under the deterministic scheduler (`testkit/`) every actor runs on the test
    // thread: a thread of its own would make the interleaving depend on the OS.
    let blocking = opts.blocking && shared.sched.sim().is_none();
    let extras = (opts.bounded.is_some() || blocking || opts.name.is_some()).then(|| {
        let dedicated = blocking.then(|| {
            let p = crossbeam_utils::sync::Parker::new();
            let unparker = p.unparker().clone();
            parker = Some(p);
            Dedicated {
                ready: AtomicBool::new(true),
                unparker,
            }
        });
        Box::new(Extras {
            bound: opts
                .bounded
                .map(|c| tokio::sync::Semaphore::new(c.min(tokio::sync::Semaphore::MAX_PERMITS))),
            dedicated,
            mobile: None,
            name: opts.name.map(String::into_boxed_str),
        })
    });
    // Read before `supervision` moves into the cell; only by an observing system.
    #[cfg(feature = "observe")]
    let supervisor = if shared.config.observe {
        supervision.as_ref().map(|s| s.supervisor_id())
    } else {
        None
    };
    let cell = new_cell(shared, actor, extras, supervision, Phase::New);
    if opts.keep_alive {
        // SAFETY: nothing has scheduled the cell yet, so no turn can run meanwhile:
        // this thread owns `life` until the `schedule` below.
        unsafe { cell.life() }.keep_alive = true;
    }
    // The runtime's own count, given back by the turn that stops the actor.
    let _ = Arc::into_raw(cell.clone());
    shared.actor_spawned();
    #[cfg(feature = "observe")]
    if shared.config.observe {
        crate::observe::spawned(std::any::type_name::<A>());
        if let Some(live) = shared.live.as_ref() {
            let probe: std::sync::Weak<dyn crate::observe::Probe> = Arc::downgrade(&cell) as _;
            live.spawned(
                cell.id(),
                std::any::type_name::<A>(),
                cell.name(),
                supervisor,
                probe,
            );
        }
    }
    if shared.is_shutting_down() {
        stop_unstarted(&cell);
        return cell;
    }
    match parker {
        Some(parker) => start_dedicated(&cell, parker),
        None => shared.sched.schedule(cell.task(), Placement::Back, true),
    }
    cell
}

/// Allocates a cell at its final address with its mailbox unmarked: the caller owns
/// the first turn (it schedules it, or, for a transport's prepared cell, holds it).
pub(super) fn new_cell<A: Actor>(
    shared: &Arc<Shared>,
    actor: A,
    extras: Option<Box<Extras>>,
    supervision: Option<Box<Supervised<A>>>,
    phase: Phase,
) -> Arc<Cell<A>> {
    let cell = Arc::new(Cell {
        task: TaskHeader::new(crate::cell::turn::run_turn::<A>),
        mailbox_head: Head::new(),
        ctl: Mutex::new(None),
        id: ActorId::next(),
        refs: AtomicUsize::new(1),
        raw: AtomicPtr::new(std::ptr::null_mut()),
        pending: UnsafeCell::new(None),
        flags: AtomicU8::new(0),
        wake: crate::loom::AtomicU8::new(IDLE),
        shared: shared.clone(),
        extras,
        #[cfg(feature = "observe")]
        obs: crate::observe::CellObs::default(),
        life: UnsafeCell::new(Life {
            phase,
            gc_check: false,
            keep_alive: false,
            held: VecDeque::new(),
            supervision,
            #[cfg(feature = "observe")]
            obs: crate::observe::TurnObs::default(),
        }),
        mailbox: Queue::new(),
        cx: UnsafeCell::new(Context::detached()),
        state: UnsafeCell::new(Some(actor)),
    });
    let raw = Arc::as_ptr(&cell).cast_mut();
    cell.raw.store(raw, Ordering::Relaxed);
    // SAFETY: the cell is at its final address and not shared yet. The mailbox starts
    // unmarked: this function owns the first turn and schedules it below.
    unsafe {
        cell.mailbox.init(&cell.mailbox_head, false);
        (*cell.cx.get()).attach(NonNull::new(raw).unwrap_or_else(|| unreachable!()));
    }
    cell
}

/// Stops an actor spawned while the system shuts down, on the spawning thread, before
/// `spawn` returns: once the pool has stopped no worker would ever run its first turn,
/// and its ref would look alive, accept tells and drop them. `started` does not run (the
/// actor never ran); `stopped(Shutdown)` does, so the state is dropped as for any stop.
pub(super) fn stop_unstarted<A: Actor>(cell: &Arc<Cell<A>>) {
    // `spawn` owns the first turn (the mailbox starts unmarked and nothing was
    // scheduled), so this thread may act as the actor's turn. `finish` ends the
    // quiescence unit a scheduled first turn would have begun.
    cell.shared.sched.begin_unit();
    let _ = cell.finish(StopReason::Shutdown);
    // SAFETY: the turn that stops the actor gives back the count taken with
    // `Arc::into_raw` above; the caller's `Arc` keeps the cell alive past this line.
    unsafe { drop(Arc::from_raw(cell.raw().as_ptr().cast_const())) };
}

fn start_dedicated<A: Actor>(cell: &Arc<Cell<A>>, parker: crossbeam_utils::sync::Parker) {
    let shared = cell.shared.clone();
    shared.sched.begin_unit();
    let task = cell.task();
    let dedicated = cell
        .extras
        .as_ref()
        .and_then(|e| e.dedicated.as_ref())
        .map(|d| DedicatedPtr(NonNull::from(d)))
        .unwrap_or_else(|| unreachable!("blocking actor without its thread state"));
    let io = shared.io.clone();
    std::thread::Builder::new()
        .name(format!("odeon-blocking-{}", cell.id.as_u64()))
        .spawn(move || {
            // Held for the thread's life: this thread ends a drained turn's quiescence
            // unit after the cell may already be gone (`RunOutcome::Drained`).
            let shared = shared;
            let _io = io.enter();
            let dedicated = dedicated;
            loop {
                // SAFETY: the cell is alive until a turn returns `Stopped`, after which
                // this thread returns without touching it again.
                let ready = unsafe { &dedicated.0.as_ref().ready };
                while !ready.swap(false, Ordering::Acquire) {
                    parker.park();
                }
                loop {
                    // SAFETY: `ready` was set by the push that owned the consumer role
                    // (or by spawn), so this thread owns the turn.
                    match unsafe { task.run() }.outcome {
                        RunOutcome::Requeue => continue,
                        RunOutcome::Drained => {
                            shared.sched.end_unit();
                            break;
                        }
                        RunOutcome::Parked => break,
                        RunOutcome::Stopped => return,
                    }
                }
            }
        })
        .expect("the OS refused a thread for a blocking actor");
}
