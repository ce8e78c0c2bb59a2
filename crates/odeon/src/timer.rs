//! Timers: delayed and periodic messages, on the system's tokio timer.
//!
//! An armed timer counts as work in flight for quiescence and holds a strong reference
//! to its target (a scheduled message is a reference); cancelling it, or the target
//! stopping, releases both.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::task::AbortHandle;

use crate::system::Shared;
use crate::{Actor, ActorRef, Handles, Message};

/// A running timer. Dropping the handle does not cancel it; [`TimerHandle::cancel`] does.
///
/// ```
/// use std::time::Duration;
/// use odeon::{Actor, Context, Handler, Message, System, TimerHandle};
///
/// struct Metronome { ticks: u32 }
/// impl Actor for Metronome {}
/// #[derive(Clone)]
/// struct Tick;
/// impl Message for Tick { type Reply = (); }
/// impl Handler<Tick> for Metronome {
///     fn handle(&mut self, _: Tick, _: &mut Context<Self>) { self.ticks += 1; }
/// }
/// struct Start;
/// impl Message for Start { type Reply = TimerHandle; }
/// impl Handler<Start> for Metronome {
///     fn handle(&mut self, _: Start, cx: &mut Context<Self>) -> TimerHandle {
///         cx.send_interval(Duration::from_millis(1), Tick)
///     }
/// }
///
/// let system = System::new();
/// let m = system.spawn(Metronome { ticks: 0 });
/// let timer = system.block_on(m.ask(Start)).unwrap();
/// assert!(!timer.is_finished(), "an interval runs until cancelled");
/// timer.cancel();
/// system.run_until_quiescent();        // returns once the cancelled timer is gone
/// assert!(timer.is_finished());
/// ```
#[derive(Clone, Debug)]
pub struct TimerHandle {
    inner: Inner,
}

/// A task on the system's tokio timer, or a timer of a simulated system (`testkit/`).
#[derive(Clone, Debug)]
enum Inner {
    /// The task, and whether a handle (this one or a clone) cancelled it: an abort
    /// takes effect only when the runtime next polls the task, but `is_finished`
    /// must say `true` as soon as `cancel` returns.
    Task(AbortHandle, Arc<AtomicBool>),
    Virtual(Arc<crate::testkit::core::VirtualTimer>),
}

impl TimerHandle {
    /// Cancels the timer; a message not yet sent will not be.
    pub fn cancel(&self) {
        match &self.inner {
            Inner::Task(abort, cancelled) => {
                cancelled.store(true, Ordering::Release);
                abort.abort();
            }
            Inner::Virtual(timer) => timer.cancel(),
        }
    }

    /// Whether the timer has fired (one-shot) or was cancelled.
    pub fn is_finished(&self) -> bool {
        match &self.inner {
            Inner::Task(abort, cancelled) => {
                cancelled.load(Ordering::Acquire) || abort.is_finished()
            }
            Inner::Virtual(timer) => timer.is_finished(),
        }
    }

    fn task(abort: AbortHandle) -> Self {
        Self {
            inner: Inner::Task(abort, Arc::new(AtomicBool::new(false))),
        }
    }
}

/// Ends the quiescence unit of a timer's (or a stream's) task however the task ends
/// (fired, cancelled, shut down).
pub(crate) struct Unit(pub(crate) Arc<Shared>);

impl Unit {
    /// Begins a timer's unit; dropping the `Unit` ends it.
    pub(crate) fn begin(shared: &Arc<Shared>) -> Self {
        shared.sched.begin_unit();
        Unit(shared.clone())
    }
}

impl Drop for Unit {
    fn drop(&mut self) {
        self.0.sched.end_unit();
    }
}

/// The tokio instant `delay` from now; a delay too far out to represent ("never",
/// `Duration::MAX`) gives an instant decades away, as `tokio::time::sleep` does,
/// rather than overflowing (which panicked in the handler that armed the timer).
fn after(delay: Duration) -> tokio::time::Instant {
    const FAR: Duration = Duration::from_secs(86_400 * 365 * 30);
    let now = tokio::time::Instant::now();
    now.checked_add(delay).unwrap_or_else(|| now + FAR)
}

pub(crate) fn send_after<A, M, K>(
    shared: &Arc<Shared>,
    target: ActorRef<A>,
    delay: Duration,
    msg: M,
) -> TimerHandle
where
    A: Handles<M, K>,
    M: Message,
    K: 'static,
{
    if let Some(sim) = shared.sched.sim() {
        // Virtual time: the simulation sends it when its clock passes `delay`.
        let mut msg = Some(msg);
        let fire = move || {
            if let Some(msg) = msg.take() {
                if target.tell(msg).is_err() {
                    tracing::debug!("a simulated timer's message was refused");
                }
            }
            false
        };
        return TimerHandle {
            inner: Inner::Virtual(sim.arm(Unit::begin(shared), delay, None, Box::new(fire))),
        };
    }
    shared.sched.begin_unit();
    let unit = Unit(shared.clone());
    // The delay counts from this call, not from whenever the I/O runtime first polls
    // the task, on the runtime's clock (turns run inside its context, so a paused test
    // clock is the one read here).
    let deadline = after(delay);
    let task = shared.io.spawn(async move {
        let _unit = unit;
        tokio::time::sleep_until(deadline).await;
        // Waits for room in a bounded mailbox rather than dropping the message.
        let _ = target.send(msg).await;
    });
    TimerHandle::task(task.abort_handle())
}

/// Runs `f` on the system's timer after `delay`, unless cancelled first (supervisors'
/// restart backoff). Counts as work in flight for quiescence, like any timer.
pub(crate) fn run_after(
    shared: &Arc<Shared>,
    delay: Duration,
    f: impl FnOnce() + Send + 'static,
) -> TimerHandle {
    if let Some(sim) = shared.sched.sim() {
        // Virtual time, as `send_after`: the simulation runs it when its clock passes.
        let mut f = Some(f);
        let fire = move || {
            if let Some(f) = f.take() {
                f();
            }
            false
        };
        return TimerHandle {
            inner: Inner::Virtual(sim.arm(Unit::begin(shared), delay, None, Box::new(fire))),
        };
    }
    let unit = Unit::begin(shared);
    let deadline = after(delay);
    let task = shared.io.spawn(async move {
        let _unit = unit;
        tokio::time::sleep_until(deadline).await;
        f();
    });
    TimerHandle::task(task.abort_handle())
}

pub(crate) fn send_interval<A, M, K>(
    shared: &Arc<Shared>,
    target: ActorRef<A>,
    period: Duration,
    msg: M,
) -> TimerHandle
where
    A: Actor + Handles<M, K>,
    M: Message + Clone,
    K: 'static,
{
    let period = period.max(Duration::from_micros(1));
    if let Some(sim) = shared.sched.sim() {
        // Only a stopped target ends it, as below; a full mailbox skips that tick.
        let fire = move || !matches!(target.tell(msg.clone()), Err(crate::TellError::Stopped(_)));
        return TimerHandle {
            inner: Inner::Virtual(sim.arm(
                Unit::begin(shared),
                period,
                Some(period),
                Box::new(fire),
            )),
        };
    }
    shared.sched.begin_unit();
    let unit = Unit(shared.clone());
    let task = shared.io.spawn(async move {
        let _unit = unit;
        let start = after(period);
        let mut ticks = tokio::time::interval_at(start, period);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            // Waits for room in a bounded mailbox; only a stopped target ends the timer.
            if target.send(msg.clone()).await.is_err() {
                break;
            }
        }
    });
    TimerHandle::task(task.abort_handle())
}
