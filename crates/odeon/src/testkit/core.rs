//! The deterministic scheduler's machinery: the run set, the seeded choice, the
//! virtual clock and its timers. [`Sim`](super::Sim) and the probes drive it.
//!
//! # Where it plugs in
//! A simulated system's [`Scheduler`] has no worker: `Scheduler::schedule`, called
//! from the test thread (which is no worker), hands every runnable task to
//! [`SimCore::push`] instead of the injector. [`SimCore::step`] takes one task out of
//! the run set, chosen by the seeded RNG, and runs its turn with the very code a
//! worker runs (`Task::run`, `cell/turn.rs`), with a budget of one message and no
//! lingering, then files the task by the turn's outcome as a worker does. So mailboxes,
//! macro-steps, async parking, supervision and GC are the runtime's own.
//!
//! # Time
//! [`VirtualClock`] is a base `Instant` plus an elapsed time that only the simulation
//! moves. Timers (`timer.rs`) armed in a simulated system become [`VirtualTimer`]s in
//! this heap; ask deadlines are dated on the virtual clock by the system's
//! `DeadlineWatch` (`refs/deadline.rs`). [`SimCore::advance_to`] fires both in due
//! order (timers first at equal times, each set in arming order).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::scheduler::{RunOutcome, Scheduler, Task};
use crate::sync::Mutex;
use crate::system::Shared;
use crate::timer::Unit;

/// The default most steps a single `run_until_idle`, `block_on` or probe wait takes.
pub(crate) const DEFAULT_STEP_LIMIT: usize = 1_000_000;

/// A clock that moves only when the simulation says so.
#[derive(Debug)]
pub(crate) struct VirtualClock {
    base: Instant,
    elapsed_ns: AtomicU64,
}

impl VirtualClock {
    fn new() -> Self {
        Self {
            base: Instant::now(),
            elapsed_ns: AtomicU64::new(0),
        }
    }

    /// Virtual time since the simulation began.
    pub(crate) fn elapsed(&self) -> Duration {
        Duration::from_nanos(self.elapsed_ns.load(Ordering::Acquire))
    }

    /// The virtual now as an `Instant` (for the ask deadlines' heap).
    pub(crate) fn now(&self) -> Instant {
        self.base + self.elapsed()
    }

    fn since_base(&self, at: Instant) -> Duration {
        at.saturating_duration_since(self.base)
    }

    /// Moves the clock forward to `to` (never back).
    fn set(&self, to: Duration) {
        let ns = u64::try_from(to.as_nanos()).unwrap_or(u64::MAX);
        self.elapsed_ns.fetch_max(ns, Ordering::AcqRel);
    }
}

/// Sends the timer's message; `false` ends a periodic timer.
pub(crate) type Fire = Box<dyn FnMut() -> bool + Send>;

/// A timer of a simulated system. Cancelling drops its message and its reference to
/// the target at once, so that a cancelled timer keeps no actor alive.
pub(crate) struct VirtualTimer {
    armed: Mutex<Option<(Fire, Unit)>>,
}

impl std::fmt::Debug for VirtualTimer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VirtualTimer")
            .field("finished", &self.is_finished())
            .finish()
    }
}

impl VirtualTimer {
    pub(crate) fn cancel(&self) {
        let armed = self.armed.lock().take();
        // Dropped outside the lock: dropping the target's ref may run runtime code.
        drop(armed);
    }

    pub(crate) fn is_finished(&self) -> bool {
        self.armed.lock().is_none()
    }

    /// Sends the message; returns whether the timer is still armed afterwards.
    fn fire(&self, periodic: bool) -> bool {
        let Some((mut fire, unit)) = self.armed.lock().take() else {
            return false;
        };
        // The lock is not held while sending: the send schedules the target.
        let again = fire() && periodic;
        if again {
            let mut slot = self.armed.lock();
            // A cancel while sending (from another thread) wins.
            if slot.is_none() {
                *slot = Some((fire, unit));
                return true;
            }
        }
        false
    }
}

/// A timer in the heap, ordered by due time, then arming order.
struct Armed {
    at: Duration,
    seq: u64,
    period: Option<Duration>,
    timer: Arc<VirtualTimer>,
}

impl PartialEq for Armed {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl Eq for Armed {}
impl PartialOrd for Armed {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Armed {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

struct State {
    /// Runnable tasks in the order they became runnable (the choice among them is
    /// the RNG's, so the order only has to be deterministic).
    runnable: Vec<Task>,
    rng: u64,
    timers: BinaryHeap<Reverse<Armed>>,
    seq: u64,
}

/// The deterministic scheduler of one simulated system.
pub(crate) struct SimCore {
    seed: u64,
    clock: Arc<VirtualClock>,
    state: Mutex<State>,
    step_limit: AtomicUsize,
    steps: AtomicU64,
}

impl std::fmt::Debug for SimCore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimCore")
            .field("seed", &self.seed)
            .field("now", &self.clock.elapsed())
            .finish_non_exhaustive()
    }
}

/// SplitMix64: tiny, and every seed (0 included) gives a good stream.
fn next_random(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl SimCore {
    pub(crate) fn new(seed: u64) -> Self {
        Self {
            seed,
            clock: Arc::new(VirtualClock::new()),
            state: Mutex::new(State {
                runnable: Vec::new(),
                rng: seed,
                timers: BinaryHeap::new(),
                seq: 0,
            }),
            step_limit: AtomicUsize::new(DEFAULT_STEP_LIMIT),
            steps: AtomicU64::new(0),
        }
    }

    pub(crate) fn seed(&self) -> u64 {
        self.seed
    }

    pub(crate) fn clock(&self) -> &Arc<VirtualClock> {
        &self.clock
    }

    pub(crate) fn step_limit(&self) -> usize {
        self.step_limit.load(Ordering::Relaxed)
    }

    pub(crate) fn set_step_limit(&self, limit: usize) {
        self.step_limit.store(limit.max(1), Ordering::Relaxed);
    }

    /// Steps taken so far (turns that did something).
    pub(crate) fn steps(&self) -> u64 {
        self.steps.load(Ordering::Relaxed)
    }

    /// A task became runnable (`Scheduler::schedule`).
    pub(crate) fn push(&self, task: Task) {
        self.state.lock().runnable.push(task);
    }

    pub(crate) fn runnable(&self) -> usize {
        self.state.lock().runnable.len()
    }

    /// Arms a timer due `delay` from the virtual now, repeating every `period`.
    pub(crate) fn arm(
        &self,
        unit: Unit,
        delay: Duration,
        period: Option<Duration>,
        fire: Fire,
    ) -> Arc<VirtualTimer> {
        let timer = Arc::new(VirtualTimer {
            armed: Mutex::new(Some((fire, unit))),
        });
        let at = self.clock.elapsed().saturating_add(delay);
        let mut st = self.state.lock();
        st.seq += 1;
        let seq = st.seq;
        let entry = Armed {
            at,
            seq,
            period,
            timer: timer.clone(),
        };
        st.timers.push(Reverse(entry));
        timer
    }

    /// Runs one turn of one runnable actor, chosen by the seeded RNG. A turn that
    /// only found its mailbox empty (possible after a requeue) does not count: the
    /// next is taken. Returns `false` if nothing was runnable.
    pub(crate) fn step(&self, sched: &Scheduler) -> bool {
        loop {
            let task = {
                let mut st = self.state.lock();
                let n = st.runnable.len();
                if n == 0 {
                    return false;
                }
                let i = (next_random(&mut st.rng) % n as u64) as usize;
                st.runnable.remove(i)
            };
            // SAFETY: the task was taken out of the run set, where only the push that
            // made it runnable put it (`Scheduler::schedule`): this thread owns the
            // turn, as a worker that popped it from a run queue would.
            let report = unsafe { task.run() };
            match report.outcome {
                RunOutcome::Requeue => self.push(task),
                // After the mark, as the quiescence protocol requires (`cell/turn.rs`).
                RunOutcome::Drained => sched.end_unit(),
                RunOutcome::Parked | RunOutcome::Stopped => {}
            }
            if report.handled > 0 || report.outcome != RunOutcome::Drained {
                self.steps.fetch_add(1, Ordering::Relaxed);
                return true;
            }
        }
    }

    /// When the next timer or ask deadline is due (virtual time since the start).
    pub(crate) fn next_event(&self, shared: &Shared) -> Option<Duration> {
        let timer = {
            let mut st = self.state.lock();
            // Cancelled timers leave their entries behind: drop them here.
            while st
                .timers
                .peek()
                .is_some_and(|Reverse(a)| a.timer.is_finished())
            {
                st.timers.pop();
            }
            st.timers.peek().map(|Reverse(a)| a.at)
        };
        let deadline = shared
            .deadlines
            .next_due()
            .map(|at| self.clock.since_base(at));
        match (timer, deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Moves the virtual clock to `until`, firing every timer and ask deadline due by
    /// then in due order. Fired messages wait to be stepped.
    pub(crate) fn advance_to(&self, shared: &Shared, until: Duration) {
        while let Some(at) = self.next_event(shared).filter(|at| *at <= until) {
            self.clock.set(at);
            loop {
                let due = {
                    let mut st = self.state.lock();
                    match st.timers.peek() {
                        Some(Reverse(a)) if a.at <= at => st.timers.pop().map(|Reverse(a)| a),
                        _ => None,
                    }
                };
                let Some(armed) = due else { break };
                if armed.timer.fire(armed.period.is_some()) {
                    if let Some(period) = armed.period {
                        let mut st = self.state.lock();
                        st.seq += 1;
                        let seq = st.seq;
                        st.timers.push(Reverse(Armed {
                            at: armed.at.saturating_add(period),
                            seq,
                            ..armed
                        }));
                    }
                }
            }
            shared.deadlines.tick(self.clock.now());
        }
        self.clock.set(until);
    }

    /// Shutdown of a simulated system (`System::shutdown`): runs turns until every
    /// actor has stopped, then forgets the timers still armed (their references to
    /// the system would otherwise keep it alive). Returns whether every actor stopped.
    pub(crate) fn shut_down(&self, sched: &Scheduler) -> bool {
        let all_stopped = || sched.totals().is_some_and(|t| t[2] == t[3]);
        let mut steps = 0usize;
        while !all_stopped() && steps < self.step_limit() && self.step(sched) {
            steps += 1;
        }
        let timers = std::mem::take(&mut self.state.lock().timers);
        for Reverse(armed) in timers {
            armed.timer.cancel();
        }
        let done = all_stopped();
        if !done {
            tracing::warn!(
                seed = self.seed,
                "simulated shutdown: some actors did not stop"
            );
        }
        done
    }
}
