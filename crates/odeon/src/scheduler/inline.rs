//! Turns run on a thread outside the pool, for an I/O thread that just delivered a
//! message (issue 19): when every worker is parked, handing the actor to the pool
//! costs a futex wake-up of a worker, which on a guest whose other vCPU has halted
//! is ~35–40 µs, the largest single cost of a remote round trip. The thread that
//! delivered it is awake already; it runs the turn itself.
//!
//! # Rules
//! - Only inside [`run_delivered`]'s scope, only the first actor made runnable there,
//!   and only while no worker of its pool is awake (an awake worker takes it from the
//!   injector at once, for no wake-up).
//! - The turn is an ordinary one: the push that found the mailbox empty owns it, so
//!   one message at a time per actor holds; it handles at most the configured budget
//!   and then goes to the pool (`Requeue`); it never lingers (this thread has its own
//!   work: the link it reads).
//! - A turn that took longer than [`SLOW_TURN`] turns this off on the thread for
//!   [`BACK_OFF`]: a long handler blocks the link it arrived on once, not each time.

use std::cell::{Cell, RefCell};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::{Placement, RunOutcome, Task, TurnReport, worker};
use crate::system::Shared;

/// An inline turn longer than this is a handler that does real work: the next ones
/// go to the pool for a while.
const SLOW_TURN: Duration = Duration::from_micros(200);
/// How long inline turns stay off on a thread after a slow one.
const BACK_OFF: Duration = Duration::from_millis(50);

thread_local! {
    /// Inside `run_delivered`'s `f`: newly runnable actors may be kept here.
    static SCOPE: Cell<bool> = const { Cell::new(false) };
    /// Running an inline turn: it must not linger.
    static RUNNING: Cell<bool> = const { Cell::new(false) };
    /// The actor kept to run after `f`, with the system that will count its end.
    static KEPT: RefCell<Option<(Arc<Shared>, Task)>> = const { RefCell::new(None) };
    /// Inline turns are off on this thread until then (after a slow one).
    static OFF_UNTIL: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Called by the push that found an actor's mailbox empty: keeps its task to run on
/// this thread, if the rules allow. `true` if kept (and the unit counted).
///
/// Every schedule calls it, worker-to-worker sends too: outside a scope it costs one
/// load of a `const` thread-local, and the rest stays out of line.
#[inline]
pub(crate) fn keep(shared: &Arc<Shared>, task: Task, new_unit: bool) -> bool {
    SCOPE.with(Cell::get) && keep_in_scope(shared, task, new_unit)
}

#[inline(never)]
fn keep_in_scope(shared: &Arc<Shared>, task: Task, new_unit: bool) -> bool {
    let sched = &shared.sched;
    if sched.sim.is_some() || worker::current(sched).is_some() {
        return false;
    }
    // Every worker that takes work is parked, and none is on its way: the pool would
    // have to be woken.
    let awake = sched.idle.num_searching.load(Ordering::SeqCst) > 0
        || sched.idle.num_sleeping.load(Ordering::SeqCst) < sched.active.load(Ordering::Acquire);
    if awake {
        return false;
    }
    KEPT.with(|k| {
        let mut k = k.borrow_mut();
        if k.is_some() {
            return false;
        }
        if new_unit {
            sched.begin_unit();
        }
        *k = Some((shared.clone(), task));
        true
    })
}

/// Whether the calling thread is running an inline turn (it must not linger).
pub(crate) fn running() -> bool {
    RUNNING.with(Cell::get)
}

/// Runs `f`, which delivers messages, and then, on this thread, the turn of the first
/// actor that `f` made runnable, if no worker of its pool was awake to take it (see
/// the module docs).
pub(crate) fn run_delivered<R>(f: impl FnOnce() -> R) -> R {
    let off = OFF_UNTIL
        .with(Cell::get)
        .is_some_and(|t| Instant::now() < t);
    if off || SCOPE.with(Cell::get) || RUNNING.with(Cell::get) {
        return f();
    }
    /// Closes the scope even if `f` unwinds, and hands a kept actor to its pool then.
    struct Scope;
    impl Drop for Scope {
        fn drop(&mut self) {
            SCOPE.with(|s| s.set(false));
            // Nested `if`s: odeon's minimum Rust (1.85) has no let chains.
            if std::thread::panicking() {
                if let Some((shared, task)) = KEPT.with(|k| k.borrow_mut().take()) {
                    shared.sched.schedule(task, Placement::Back, false);
                }
            }
        }
    }
    SCOPE.with(|s| s.set(true));
    let scope = Scope;
    let result = f();
    drop(scope);
    if let Some((shared, task)) = KEPT.with(|k| k.borrow_mut().take()) {
        let start = Instant::now();
        RUNNING.with(|r| r.set(true));
        // SAFETY: the task was kept by `keep`, called by the push that found the
        // mailbox empty, which owns the turn; it went to no run queue.
        let TurnReport { outcome, .. } = unsafe { task.run() };
        RUNNING.with(|r| r.set(false));
        match outcome {
            RunOutcome::Requeue => shared.sched.schedule(task, Placement::Back, false),
            // After the mark, as the quiescence protocol requires (`cell/turn.rs`).
            RunOutcome::Drained => shared.sched.end_unit(),
            RunOutcome::Parked | RunOutcome::Stopped => {}
        }
        let now = Instant::now();
        if now.duration_since(start) > SLOW_TURN {
            OFF_UNTIL.with(|o| o.set(Some(now + BACK_OFF)));
        }
    }
    result
}
