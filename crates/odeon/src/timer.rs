//! Timers: delayed and periodic messages, on the system's tokio timer.
//!
//! An armed timer counts as work in flight for quiescence and holds a strong reference
//! to its target (a scheduled message is a reference); cancelling it, or the target
//! stopping, releases both.

use std::sync::Arc;
use std::time::Duration;

use tokio::task::AbortHandle;

use crate::system::Shared;
use crate::{Actor, ActorRef, Handles, Message};

/// A running timer. Dropping the handle does not cancel it; [`TimerHandle::cancel`] does.
#[derive(Clone, Debug)]
pub struct TimerHandle {
    abort: AbortHandle,
}

impl TimerHandle {
    /// Cancels the timer; a message not yet sent will not be.
    pub fn cancel(&self) {
        self.abort.abort();
    }

    /// Whether the timer has fired (one-shot) or was cancelled.
    pub fn is_finished(&self) -> bool {
        self.abort.is_finished()
    }
}

/// Ends the timer's quiescence unit however its task ends (fired, cancelled, shut down).
struct Unit(Arc<Shared>);

impl Drop for Unit {
    fn drop(&mut self) {
        self.0.sched.end_unit();
    }
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
    shared.sched.begin_unit();
    let unit = Unit(shared.clone());
    let task = shared.io.spawn(async move {
        let _unit = unit;
        tokio::time::sleep(delay).await;
        // Waits for room in a bounded mailbox rather than dropping the message.
        let _ = target.send(msg).await;
    });
    TimerHandle {
        abort: task.abort_handle(),
    }
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
    shared.sched.begin_unit();
    let unit = Unit(shared.clone());
    let period = period.max(Duration::from_micros(1));
    let task = shared.io.spawn(async move {
        let _unit = unit;
        let start = tokio::time::Instant::now() + period;
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
    TimerHandle {
        abort: task.abort_handle(),
    }
}
