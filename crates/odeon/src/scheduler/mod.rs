//! M:N scheduling of actor turns over a pool of worker threads.
//!
//! # Types
//! - [`Task`]: a pointer to a cell with pending work. A task is in at most one place
//!   (a slot, a deque, the injector, or running) because only the push that finds a
//!   mailbox empty creates one (see `mailbox/`).
//! - [`Scheduler`]: the shared part: the injector (work from outside the pool), one
//!   [`WorkerShared`] per worker (its stealer, its slot, its monitor counters), parking.
//! - `worker::WorkerCtx`: the thread-local part of a worker: its deque.
//!
//! # Where a task goes ([`Placement`])
//! - `Slot`: an actor that was just sent a message goes to the sending worker's slot and
//!   runs next, on the same core (request–reply locality). The previous occupant, if
//!   any, moves to the back of the deque.
//! - `Back`: spawned actors and actors that used up their budget go to the back of the
//!   deque (FIFO: everything queued before them runs first).
//! - From a thread outside the pool, tasks go to the injector.
//!
//! # Fairness
//! - A turn handles at most `budget` messages.
//! - A worker takes from its slot at most `SLOT_STREAK_LIMIT` times in a row while its
//!   deque has work, and polls the injector every `INJECTOR_INTERVAL` turns.
//! - The monitor (`monitor.rs`) sees a worker stuck in one turn and brings in an idle
//!   worker or a spare thread, which may also steal the stuck worker's slot. While
//!   a worker is called stuck, an actor its turn makes runnable goes to its deque,
//!   where others steal, and an idle worker is woken at once (not at the monitor's
//!   next look).
//!
//! # Waking workers
//! Parking and unparking cost microseconds, far more than a message. A worker is woken
//! only when a worker's local run queue holds two or more runnable actors (real
//! parallel work), when work comes from outside the pool, or by the monitor.
//!
//! For the same reason an actor whose mailbox runs dry, on a thread with nothing else
//! queued, lingers a moment (`SystemBuilder::linger_rounds`) before giving up its turn,
//! so that a stream or a reply from another thread does not pay a reschedule each time.
//!
//! # Quiescence counters
//! A "unit" begins when an idle actor is scheduled (or a timer is armed) and ends when
//! the actor goes idle or stops (or the timer fires). A parked async turn keeps its unit
//! open. Each worker counts its own begins and ends; threads outside the pool use
//! shared atomics. The system is quiescent when two consecutive collections of all
//! counters are equal and begins equal ends.

mod idle;
pub(crate) mod inline;
mod monitor;
mod throttle;
mod worker;

use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::thread::JoinHandle;

use crate::sync::{Condvar, Mutex};
use crossbeam_deque::{Injector, Stealer, Worker};
use crossbeam_utils::CachePadded;
use crossbeam_utils::sync::{Parker, Unparker};

use crate::system::Shared;
use idle::Idle;

/// The first field of every cell: the entry the scheduler calls to run a turn.
pub(crate) struct TaskHeader {
    run: unsafe fn(NonNull<TaskHeader>) -> TurnReport,
}

impl TaskHeader {
    pub(crate) fn new(run: unsafe fn(NonNull<TaskHeader>) -> TurnReport) -> Self {
        Self { run }
    }
}

/// A schedulable actor (see module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Task(NonNull<TaskHeader>);

// SAFETY: a task is a pointer to a `Cell`, which is `Send + Sync`; who may run it is
// governed by the scheduling protocol, not by the thread that holds it.
unsafe impl Send for Task {}

impl Task {
    pub(crate) fn new(header: NonNull<TaskHeader>) -> Self {
        Self(header)
    }

    fn as_ptr(self) -> *mut TaskHeader {
        self.0.as_ptr()
    }

    /// Runs one turn.
    ///
    /// # Safety
    /// The caller owns the turn: it took the task from a run queue or slot, or was
    /// handed it by the push that found the mailbox empty.
    #[inline]
    pub(crate) unsafe fn run(self) -> TurnReport {
        // SAFETY: the header is alive while the task is scheduled (the runtime holds a
        // count on the cell until a turn returns `Stopped`).
        unsafe { ((*self.0.as_ptr()).run)(self.0) }
    }
}

/// What a turn ended with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RunOutcome {
    /// The mailbox was marked empty: the turn's quiescence unit is over, and the
    /// thread that ran the turn ends it ([`Scheduler::end_unit`], or its worker's own
    /// counter). The cell may already be gone by then; the unit is not tied to it.
    Drained,
    /// An async handler is pending; its waker schedules the actor again (the unit
    /// stays open).
    Parked,
    /// Mail left after the budget: to the back of the run queue.
    Requeue,
    /// The actor stopped; the task pointer is dangling now.
    Stopped,
}

/// What a turn reports to the thread that ran it. Returned by value (two registers),
/// so that the per-turn bookkeeping, the throttle's message count and the end of a
/// quiescence unit, costs the worker a plain store on its own line instead of a
/// thread-local lookup inside the turn (callgrind, Big on one worker: about 30
/// instructions per turn).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TurnReport {
    pub(crate) outcome: RunOutcome,
    /// Messages and signals the turn handled.
    pub(crate) handled: u32,
}

/// Where a newly runnable task goes (see module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Placement {
    Slot,
    Back,
}

/// Counters owned by one worker (single writer) or shared (external threads).
#[derive(Default, Debug)]
pub(crate) struct Counters {
    pub(crate) begun: AtomicU64,
    pub(crate) ended: AtomicU64,
    pub(crate) spawned: AtomicU64,
    pub(crate) stopped: AtomicU64,
}

/// Which counter to bump.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Count {
    Begun,
    Ended,
    Spawned,
    Stopped,
}

impl Counters {
    fn get(&self, c: Count) -> &AtomicU64 {
        match c {
            Count::Begun => &self.begun,
            Count::Ended => &self.ended,
            Count::Spawned => &self.spawned,
            Count::Stopped => &self.stopped,
        }
    }

    fn snapshot(&self) -> [u64; 4] {
        [
            self.begun.load(Ordering::Acquire),
            self.ended.load(Ordering::Acquire),
            self.spawned.load(Ordering::Acquire),
            self.stopped.load(Ordering::Acquire),
        ]
    }
}

/// The part of a worker other threads see.
pub(crate) struct WorkerShared {
    stealer: Stealer<Task>,
    /// The "just messaged" actor. Written by the owner; taken by the owner or, when the
    /// owner is stuck, by a thief (both with `swap`).
    slot: AtomicPtr<TaskHeader>,
    unparker: Unparker,
    /// Turns started (monitor reads it to see progress).
    seq: AtomicU64,
    /// Messages handled by this worker's turns (the throttle's measure, `throttle.rs`).
    handled: AtomicU64,
    busy: AtomicBool,
    /// Set by the monitor when the worker has been in one turn too long.
    stuck: AtomicBool,
    counters: Counters,
    spare: bool,
}

/// A worker's deque and parker, waiting for its thread to start.
type ThreadParts = (Worker<Task>, Parker);

/// The scheduler shared by all workers of one system.
pub(crate) struct Scheduler {
    injector: Injector<Task>,
    workers: Box<[CachePadded<WorkerShared>]>,
    base: usize,
    /// Base workers that take shared work: those with a smaller index (`throttle.rs`).
    /// The others are benched: they hand their queue to the injector and park.
    active: AtomicUsize,
    idle: Idle,
    shutdown: AtomicBool,
    global: CachePadded<Counters>,
    /// Deques and parkers not yet handed to a thread (spares start lazily).
    pending_threads: Mutex<Vec<Option<ThreadParts>>>,
    threads: Mutex<Vec<JoinHandle<()>>>,
    spares_started: AtomicUsize,
    monitor_unparker: Mutex<Option<Unparker>>,
    /// Quiescence and shutdown waiters sleep here; workers about to park notify it.
    quiet: (Mutex<()>, Condvar),
    quiet_waiters: AtomicUsize,
    /// The deterministic scheduler of `odeon::testkit`: when set, no worker runs and
    /// every runnable task goes to the simulation's run set instead of the injector.
    sim: Option<Arc<crate::testkit::core::SimCore>>,
}

impl Scheduler {
    pub(crate) fn new(workers: usize, spares: usize) -> Self {
        let total = workers + spares;
        let mut shared = Vec::with_capacity(total);
        let mut locals = Vec::with_capacity(total);
        for i in 0..total {
            let w = Worker::new_fifo();
            let parker = Parker::new();
            shared.push(CachePadded::new(WorkerShared {
                stealer: w.stealer(),
                slot: AtomicPtr::new(std::ptr::null_mut()),
                unparker: parker.unparker().clone(),
                seq: AtomicU64::new(0),
                handled: AtomicU64::new(0),
                busy: AtomicBool::new(false),
                stuck: AtomicBool::new(false),
                counters: Counters::default(),
                spare: i >= workers,
            }));
            locals.push(Some((w, parker)));
        }
        Self {
            injector: Injector::new(),
            workers: shared.into_boxed_slice(),
            base: workers,
            active: AtomicUsize::new(workers),
            idle: Idle::new(),
            shutdown: AtomicBool::new(false),
            global: CachePadded::new(Counters::default()),
            pending_threads: Mutex::new(locals),
            threads: Mutex::new(Vec::new()),
            spares_started: AtomicUsize::new(0),
            monitor_unparker: Mutex::new(None),
            quiet: (Mutex::new(()), Condvar::new()),
            quiet_waiters: AtomicUsize::new(0),
            sim: None,
        }
    }

    /// A scheduler whose tasks go to `sim` (`testkit/`); it starts no thread.
    pub(crate) fn deterministic(sim: Arc<crate::testkit::core::SimCore>) -> Self {
        Self {
            sim: Some(sim),
            ..Self::new(1, 0)
        }
    }

    /// The deterministic scheduler this one hands its tasks to, if any.
    pub(crate) fn sim(&self) -> Option<&Arc<crate::testkit::core::SimCore>> {
        self.sim.as_ref()
    }

    /// Starts the base workers and the monitor.
    pub(crate) fn start(shared: &Arc<Shared>) {
        let sched = &shared.sched;
        for i in 0..sched.base {
            sched.start_worker(shared, i);
        }
        monitor::start(shared);
    }

    fn start_worker(&self, shared: &Arc<Shared>, index: usize) {
        let Some((local, parker)) = self.pending_threads.lock()[index].take() else {
            return;
        };
        let shared2 = shared.clone();
        let kind = if self.workers[index].spare {
            "spare"
        } else {
            "worker"
        };
        let spawned = std::thread::Builder::new()
            .name(format!("odeon-{kind}-{index}"))
            .spawn(move || worker::run(shared2, index, local, parker));
        match spawned {
            Ok(handle) => self.threads.lock().push(handle),
            Err(e) => tracing::error!(error = %e, index, "could not start a worker thread"),
        }
    }

    /// Makes `task` runnable. `new_unit` counts the start of a quiescence unit.
    #[inline]
    pub(crate) fn schedule(&self, task: Task, placement: Placement, new_unit: bool) {
        if let Some(ctx) = worker::current(self) {
            if new_unit {
                ctx.bump(self, Count::Begun);
            }
            ctx.push(self, task, placement);
        } else {
            if new_unit {
                self.global.begun.fetch_add(1, Ordering::AcqRel);
            }
            // The deterministic scheduler's seam. Only the path from outside the pool
            // tests it (a worker never belongs to a simulated system, whose test thread
            // is no worker), and that path already pays an injector push, an atomic
            // read-modify-write and `notify_one`'s fence: one well-predicted branch on
            // a field of this line costs nothing beside them. Worker-to-worker sends,
            // the hot path, take the branch above and never see it.
            if let Some(sim) = &self.sim {
                sim.push(task);
                return;
            }
            self.injector.push(task);
            self.idle.notify_one(self);
        }
    }

    #[inline]
    pub(crate) fn bump(&self, c: Count) {
        match worker::current(self) {
            Some(ctx) => ctx.bump(self, c),
            None => {
                self.global.get(c).fetch_add(1, Ordering::AcqRel);
            }
        }
    }

    #[inline]
    pub(crate) fn begin_unit(&self) {
        self.bump(Count::Begun);
    }

    #[inline]
    pub(crate) fn end_unit(&self) {
        self.bump(Count::Ended);
    }

    fn collect(&self) -> Vec<[u64; 4]> {
        let mut v: Vec<[u64; 4]> = self.workers.iter().map(|w| w.counters.snapshot()).collect();
        v.push(self.global.snapshot());
        v
    }

    /// A consistent snapshot of (begun, ended, spawned, stopped) totals, or `None` if
    /// the counters moved while being read.
    pub(crate) fn totals(&self) -> Option<[u64; 4]> {
        let a = self.collect();
        let b = self.collect();
        if a != b {
            return None;
        }
        let mut t = [0u64; 4];
        for row in &a {
            for (acc, v) in t.iter_mut().zip(row) {
                *acc += v;
            }
        }
        Some(t)
    }

    /// Waits on the quiet condvar until `done` holds or `deadline` passes.
    pub(crate) fn wait_until(
        &self,
        deadline: Option<std::time::Instant>,
        mut done: impl FnMut() -> bool,
    ) -> bool {
        self.quiet_waiters.fetch_add(1, Ordering::SeqCst);
        let mut guard = self.quiet.0.lock();
        let result = loop {
            if done() {
                break true;
            }
            let now = std::time::Instant::now();
            let mut until = now + crate::defaults::QUIESCENCE_POLL;
            if let Some(d) = deadline {
                if now >= d {
                    break false;
                }
                until = until.min(d);
            }
            self.quiet.1.wait_until(&mut guard, until);
        };
        drop(guard);
        self.quiet_waiters.fetch_sub(1, Ordering::SeqCst);
        result
    }

    fn notify_quiet(&self) {
        if self.quiet_waiters.load(Ordering::SeqCst) > 0 {
            let _g = self.quiet.0.lock();
            self.quiet.1.notify_all();
        }
    }

    /// Whether base worker `index` is benched by the throttle. Spares never are.
    fn is_benched(&self, index: usize) -> bool {
        index < self.base && index >= self.active.load(Ordering::Acquire)
    }

    /// Sets how many base workers take shared work, and wakes the ones brought back.
    pub(crate) fn set_active(&self, n: usize) {
        let n = n.clamp(1, self.base);
        let was = self.active.swap(n, Ordering::AcqRel);
        for w in &self.workers[was.min(n)..was.max(n)] {
            // Brought back: wake it. Benched: wake it so that it hands its queue over.
            w.unparker.unpark();
        }
    }

    /// Messages handled so far by every worker (monotonic, for rates).
    fn handled_total(&self) -> u64 {
        self.workers
            .iter()
            .map(|w| w.handled.load(Ordering::Relaxed))
            .sum()
    }

    pub(crate) fn is_shutdown(&self) -> bool {
        self.shutdown.load(Ordering::Acquire)
    }

    /// Stops every thread of the pool and waits for them (except a thread stuck in a
    /// turn that never returns, which is detached).
    pub(crate) fn shutdown(&self) {
        self.shutdown.store(true, Ordering::Release);
        for w in self.workers.iter() {
            w.unparker.unpark();
        }
        if let Some(u) = self.monitor_unparker.lock().as_ref() {
            u.unpark();
        }
        let handles = std::mem::take(&mut *self.threads.lock());
        for h in handles {
            // A thread still finishing a turn exits right after it; one stuck in an
            // endless handler would hang shutdown if joined, so it is given
            // `STUCK_THREAD_GRACE` and then detached. The pause between looks starts
            // short: most turns end within microseconds, and a fixed 10 ms pause made
            // one shutdown in a few take over 5 ms (`examples`-style timing of
            // `System::shutdown`).
            let deadline = std::time::Instant::now() + crate::defaults::STUCK_THREAD_GRACE;
            let mut pause = std::time::Duration::from_micros(20);
            while !h.is_finished() && self.any_busy() && std::time::Instant::now() < deadline {
                std::thread::sleep(pause);
                pause = (pause * 2).min(std::time::Duration::from_millis(10));
            }
            if h.is_finished() || !self.any_busy() {
                let _ = h.join();
            } else {
                tracing::warn!("a worker is stuck in a turn; detaching it at shutdown");
            }
        }
    }

    fn any_busy(&self) -> bool {
        self.workers.iter().any(|w| w.busy.load(Ordering::Acquire))
    }

    /// Whether any runnable task waits anywhere (monitor's question).
    fn has_waiting_work(&self) -> bool {
        !self.injector.is_empty()
            || self
                .workers
                .iter()
                .any(|w| !w.stealer.is_empty() || !w.slot.load(Ordering::Acquire).is_null())
    }
}
