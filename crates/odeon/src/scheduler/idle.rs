//! Parking and waking workers without a thundering herd.
//!
//! At most one worker is woken per notification, and none while another is already
//! searching for work: that searcher will find it (and, if it finds more than it can
//! run, wakes the next one).

use std::sync::atomic::{AtomicUsize, Ordering, fence};

use crate::sync::Mutex;

use super::Scheduler;

pub(super) struct Idle {
    sleepers: Mutex<Vec<usize>>,
    pub(super) num_sleeping: AtomicUsize,
    pub(super) num_searching: AtomicUsize,
}

impl Idle {
    pub(super) fn new() -> Self {
        Self {
            sleepers: Mutex::new(Vec::new()),
            num_sleeping: AtomicUsize::new(0),
            num_searching: AtomicUsize::new(0),
        }
    }

    /// Wakes one parked worker if nobody is searching. Returns whether one was woken.
    pub(super) fn notify_one(&self, sched: &Scheduler) -> bool {
        // Pairs with the fence in `WorkerCtx::park` (store-load: we published work,
        // the parker published itself; one of us sees the other).
        fence(Ordering::SeqCst);
        if self.num_searching.load(Ordering::SeqCst) > 0
            || self.num_sleeping.load(Ordering::SeqCst) == 0
        {
            return false;
        }
        let mut sleepers = self.sleepers.lock();
        if self.num_searching.load(Ordering::SeqCst) > 0 {
            return false;
        }
        let Some(index) = sleepers.pop() else {
            return false;
        };
        self.num_sleeping.fetch_sub(1, Ordering::SeqCst);
        self.num_searching.fetch_add(1, Ordering::SeqCst);
        drop(sleepers);
        sched.workers[index].unparker.unpark();
        true
    }

    pub(super) fn register(&self, index: usize, was_searching: bool) {
        let mut sleepers = self.sleepers.lock();
        sleepers.push(index);
        self.num_sleeping.fetch_add(1, Ordering::SeqCst);
        if was_searching {
            self.num_searching.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Removes `index` if still registered; `false` means a notifier took it.
    pub(super) fn unregister(&self, index: usize) -> bool {
        let mut sleepers = self.sleepers.lock();
        match sleepers.iter().position(|&i| i == index) {
            Some(p) => {
                sleepers.swap_remove(p);
                self.num_sleeping.fetch_sub(1, Ordering::SeqCst);
                true
            }
            None => false,
        }
    }

    pub(super) fn is_registered(&self, index: usize) -> bool {
        self.sleepers.lock().contains(&index)
    }
}
