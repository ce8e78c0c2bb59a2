//! What a probe's actor received, and how an expectation waits for it.
//!
//! On a system with worker threads an expectation waits on a condition variable, for
//! real time. On a simulated one ([`Sim`](super::Sim)) nothing would arrive while the
//! test thread waited (it is the thread that runs the actors), so an expectation runs
//! the simulation instead, and its timeout is virtual: it steps the actors, and when
//! none is runnable it moves the virtual clock to the next timer or deadline, up to
//! the timeout.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::sync::{Condvar, Mutex};
use crate::system::Shared;

/// Messages in arrival order, and a condition variable for waiters.
pub(crate) struct Inbox<M> {
    queue: Mutex<VecDeque<M>>,
    arrived: Condvar,
}

impl<M> std::fmt::Debug for Inbox<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inbox")
            .field("queued", &self.len())
            .finish()
    }
}

impl<M> Inbox<M> {
    pub(crate) fn new() -> Self {
        Self {
            queue: Mutex::new(VecDeque::new()),
            arrived: Condvar::new(),
        }
    }

    pub(crate) fn put(&self, msg: M) {
        self.queue.lock().push_back(msg);
        self.arrived.notify_all();
    }

    pub(crate) fn try_take(&self) -> Option<M> {
        self.queue.lock().pop_front()
    }

    pub(crate) fn len(&self) -> usize {
        self.queue.lock().len()
    }

    /// Calls `f` on the queue until it returns `Some` or `timeout` passes (real time,
    /// or virtual time on a simulated system; see the module docs).
    pub(crate) fn wait<T>(
        &self,
        shared: &Arc<Shared>,
        timeout: Duration,
        mut f: impl FnMut(&mut VecDeque<M>) -> Option<T>,
    ) -> Option<T> {
        let Some(sim) = shared.sched.sim() else {
            // Far-future timeouts saturate rather than overflow `Instant`.
            let deadline = Instant::now().checked_add(timeout);
            let mut queue = self.queue.lock();
            loop {
                if let Some(t) = f(&mut queue) {
                    return Some(t);
                }
                match deadline {
                    Some(d) if Instant::now() >= d => return None,
                    Some(d) => {
                        self.arrived.wait_until(&mut queue, d);
                    }
                    None => {
                        let later = Instant::now() + Duration::from_secs(3600);
                        self.arrived.wait_until(&mut queue, later);
                    }
                }
            }
        };
        let until = sim.clock().elapsed().saturating_add(timeout);
        let limit = sim.step_limit();
        let mut steps = 0usize;
        loop {
            if let Some(t) = f(&mut self.queue.lock()) {
                return Some(t);
            }
            steps += 1;
            if steps > limit {
                panic!(
                    "odeon testkit: a probe waited {limit} steps (a livelock?), seed = {}",
                    sim.seed()
                );
            }
            if sim.step(&shared.sched) {
                continue;
            }
            let now = sim.clock().elapsed();
            match sim.next_event(shared) {
                Some(at) if at <= until => sim.advance_to(shared, at),
                _ if now < until => sim.advance_to(shared, until),
                _ => return None,
            }
        }
    }
}
