//! The source's hand-over timeouts (step 4: a target that never answers must not keep
//! the actor frozen), without a task per move.
//!
//! Every move's deadline is its freeze plus the node's request timeout, so deadlines
//! come in the order the moves start: one queue, in order, and one sweeper task per
//! node that sleeps until the oldest deadline. A move that ended first stays queued
//! until its deadline, when the entry ignores the timeout
//! ([`MobileEntry::timeout`](super::entry::MobileEntry::timeout) checks the move).
//! The sweeper starts with the node's first move and, while the queue is empty,
//! waits to be notified: a move that finds the queue non-empty wakes no thread.
//! (Before, each move spawned a task that slept for the timeout: a task allocation
//! and, often, the wake-up of an I/O thread on the path of every move.)

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::driver::Mobile;
use crate::node::NodeInner;

/// A queue of deadlines that come in order (each is "now + the same timeout").
pub(crate) struct Deadlines<T = (Weak<Mobile>, u64)> {
    /// (deadline, what to fire), oldest first.
    queue: Mutex<VecDeque<(Instant, T)>>,
    /// The sweeper task was spawned.
    started: AtomicBool,
    /// Wakes the sweeper: the queue was empty and is not any more.
    wake: Notify,
}

impl<T> Default for Deadlines<T> {
    fn default() -> Self {
        Self {
            queue: Mutex::new(VecDeque::new()),
            started: AtomicBool::new(false),
            wake: Notify::new(),
        }
    }
}

impl<T: Send + 'static> Deadlines<T> {
    /// Queues `item` to fire after `timeout`. Returns whether the caller must spawn
    /// the sweeper (the first push); otherwise the sweeper is woken if it was idle.
    fn push(&self, timeout: Duration, item: T) -> bool {
        let was_empty = {
            let mut q = self.queue.lock();
            // Read under the lock: the queue stays in deadline order.
            let at = Instant::now() + timeout;
            let was_empty = q.is_empty();
            q.push_back((at, item));
            was_empty
        };
        if !self.started.swap(true, Ordering::AcqRel) {
            return true;
        }
        if was_empty {
            self.wake.notify_one();
        }
        false
    }

    /// Fires the deadlines in order with `fire`, while `alive` gives the timeout (it
    /// returns `None` once the node is gone, and the sweeper ends within a timeout).
    async fn sweep(self: Arc<Self>, alive: impl Fn() -> Option<Duration>, fire: impl Fn(T)) {
        loop {
            let Some(timeout) = alive() else {
                return;
            };
            let next = self.queue.lock().front().map(|d| d.0);
            match next {
                // Bounded, so that the task ends within a timeout of the node's end.
                None => {
                    let _ = tokio::time::timeout(timeout, self.wake.notified()).await;
                }
                Some(at) if at > Instant::now() => tokio::time::sleep_until(at).await,
                Some(_) => {
                    let now = Instant::now();
                    loop {
                        let due = {
                            let mut q = self.queue.lock();
                            match q.front() {
                                Some(d) if d.0 <= now => q.pop_front(),
                                _ => None,
                            }
                        };
                        match due {
                            Some((_, item)) => fire(item),
                            None => break,
                        }
                    }
                }
            }
        }
    }
}

impl NodeInner {
    /// Arms the timeout of the move `migration` of `mobile` (see the module docs).
    pub(crate) fn abort_after_timeout(self: &Arc<Self>, mobile: &Arc<Mobile>, migration: u64) {
        let timeout = self.settings.request_timeout;
        if !self
            .deadlines
            .push(timeout, (Arc::downgrade(mobile), migration))
        {
            return;
        }
        let (alive, fire) = (Arc::downgrade(self), Arc::downgrade(self));
        self.io.spawn(self.deadlines.clone().sweep(
            move || alive.upgrade().map(|n| n.settings.request_timeout),
            move |(mobile, migration): (Weak<Mobile>, u64)| {
                if let (Some(node), Some(mobile)) = (fire.upgrade(), mobile.upgrade()) {
                    let mut d = mobile.state.lock();
                    let outs = d.entry.timeout(migration);
                    node.perform(&mobile, &mut d, outs);
                }
            },
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// Every deadline fires, in order, including one queued after the queue emptied
    /// (the sweeper was idle and must be woken).
    #[test]
    fn deadlines_fire_in_order_and_an_idle_sweeper_is_woken() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_time()
            .build()
            .unwrap();
        let timeout = Duration::from_millis(5);
        let deadlines: Arc<Deadlines<u32>> = Arc::default();
        let (tx, fired) = mpsc::channel();
        let spawn = |d: &Arc<Deadlines<u32>>, tx: mpsc::Sender<u32>| {
            rt.spawn(d.clone().sweep(
                move || Some(timeout),
                move |n| {
                    let _ = tx.send(n);
                },
            ));
        };
        assert!(
            deadlines.push(timeout, 1),
            "the first push starts the sweeper"
        );
        spawn(&deadlines, tx);
        assert!(!deadlines.push(timeout, 2));
        assert!(!deadlines.push(timeout, 3));
        // Guards against a hang only: no timing is asserted.
        let guard = Duration::from_secs(30);
        let first: Vec<u32> = (0..3).map(|_| fired.recv_timeout(guard).unwrap()).collect();
        assert_eq!(first, [1, 2, 3]);
        assert!(deadlines.queue.lock().is_empty());
        assert!(!deadlines.push(timeout, 4), "one sweeper per queue");
        assert_eq!(fired.recv_timeout(guard), Ok(4));
    }

    /// The sweeper ends once its node is gone.
    #[test]
    fn the_sweeper_ends_with_its_node() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let deadlines: Arc<Deadlines<u32>> = Arc::default();
        deadlines.push(Duration::from_millis(1), 1);
        let alive = AtomicBool::new(true);
        let fired = std::sync::atomic::AtomicU32::new(0);
        rt.block_on(async {
            let sweep = deadlines.clone().sweep(
                || {
                    alive
                        .load(Ordering::Acquire)
                        .then_some(Duration::from_millis(1))
                },
                |_| {
                    fired.fetch_add(1, Ordering::AcqRel);
                    alive.store(false, Ordering::Release);
                },
            );
            tokio::time::timeout(Duration::from_secs(30), sweep)
                .await
                .expect("the sweeper ends once alive() says the node is gone");
        });
        assert_eq!(fired.load(Ordering::Acquire), 1);
    }
}
