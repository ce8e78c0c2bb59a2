//! A worker thread: find a task, run its turn, repeat; park when there is none.

use std::cell::Cell;
use std::ptr::{self, NonNull};
use std::sync::Arc;
use std::sync::atomic::{Ordering, fence};
use std::time::Duration;

use crossbeam_deque::{Steal, Worker};
use crossbeam_utils::sync::Parker;

use super::{Count, Placement, RunOutcome, Scheduler, Task, TurnReport, WorkerShared};
use crate::defaults;
use crate::system::Shared;

thread_local! {
    static CURRENT: Cell<*const WorkerCtx> = const { Cell::new(ptr::null()) };
}

/// The thread-local half of a worker.
pub(super) struct WorkerCtx {
    sched: *const Scheduler,
    index: usize,
    local: Worker<Task>,
    streak: Cell<u32>,
    tick: Cell<u32>,
    searching: Cell<bool>,
    rng: Cell<u32>,
}

/// The calling thread's worker context, if it is a worker of `sched`.
#[inline]
pub(super) fn current(sched: &Scheduler) -> Option<&WorkerCtx> {
    let p = CURRENT.with(Cell::get);
    if p.is_null() {
        return None;
    }
    // SAFETY: `CURRENT` points at the `WorkerCtx` on the stack of `run` below, set when
    // `run` starts and cleared before it returns; we are on that thread, inside that
    // call, so the context outlives this borrow.
    let ctx = unsafe { &*p };
    ptr::eq(ctx.sched, sched).then_some(ctx)
}

pub(super) fn run(shared: Arc<Shared>, index: usize, local: Worker<Task>, parker: Parker) {
    let _io = shared.io.enter();
    let sched = &shared.sched;
    let ctx = WorkerCtx {
        sched,
        index,
        local,
        streak: Cell::new(0),
        tick: Cell::new(0),
        searching: Cell::new(false),
        rng: Cell::new((index as u32).wrapping_mul(2_654_435_761).wrapping_add(1)),
    };
    CURRENT.with(|c| c.set(&ctx));
    loop {
        if sched.is_shutdown() {
            break;
        }
        if sched.is_benched(index) {
            ctx.sit_out(sched, &parker);
            continue;
        }
        match ctx.find_task(sched) {
            Some(task) => {
                if ctx.searching.get() {
                    ctx.stop_searching(sched);
                }
                ctx.run_task(sched, task);
            }
            None => {
                if ctx.spin_for_work(sched) {
                    continue;
                }
                if !ctx.park(sched, &parker) {
                    break;
                }
            }
        }
    }
    CURRENT.with(|c| c.set(ptr::null()));
}

impl WorkerCtx {
    #[inline]
    fn me<'a>(&self, sched: &'a Scheduler) -> &'a WorkerShared {
        &sched.workers[self.index]
    }

    /// Single-writer increment: only this worker writes its counters.
    #[inline]
    pub(super) fn bump(&self, sched: &Scheduler, c: Count) {
        let a = self.me(sched).counters.get(c);
        // Release pairs with the Acquire loads of `Scheduler::collect`.
        a.store(a.load(Ordering::Relaxed) + 1, Ordering::Release);
    }

    #[inline]
    pub(super) fn push(&self, sched: &Scheduler, task: Task, placement: Placement) {
        match placement {
            Placement::Slot => {
                let me = self.me(sched);
                // A stuck worker cannot run its slot until its long turn ends: what it
                // makes runnable goes where another worker takes it, and one is woken
                // now instead of at the monitor's next look (an actor fed by a long
                // turn, as Savina's Counting is once the monitor moves it, would
                // otherwise wait up to a monitor interval each time it runs dry).
                if me.stuck.load(Ordering::Relaxed) {
                    self.local.push(task);
                    sched.idle.notify_one(sched);
                    return;
                }
                // Only this thread puts into the slot; thieves only take. So an empty
                // slot stays empty until our store, and a full one is swapped.
                let old = if me.slot.load(Ordering::Relaxed).is_null() {
                    // Release pairs with the thief's or our own AcqRel `swap` in take.
                    me.slot.store(task.as_ptr(), Ordering::Release);
                    ptr::null_mut()
                } else {
                    me.slot.swap(task.as_ptr(), Ordering::AcqRel)
                };
                if let Some(old) = NonNull::new(old) {
                    self.push_back(sched, Task(old));
                }
            }
            Placement::Back => self.push_back(sched, task),
        }
    }

    #[inline]
    fn push_back(&self, sched: &Scheduler, task: Task) {
        self.local.push(task);
        let slot_full = !self.me(sched).slot.load(Ordering::Relaxed).is_null();
        if self.local.len() + usize::from(slot_full) >= 2 && !self.alone(sched) {
            sched.idle.notify_one(sched);
        }
    }

    /// Whether this is the only base worker taking work (the throttle benched the
    /// others, or the pool has one worker). Then nobody on the idle list could take
    /// the work, and `notify_one` would only pay its `SeqCst` fence: Big on one
    /// worker hit it on about one message in five. Spares are not on the idle list,
    /// and a worker brought back by the throttle looks for work by itself.
    #[inline]
    fn alone(&self, sched: &Scheduler) -> bool {
        self.index == 0 && sched.active.load(Ordering::Relaxed) == 1
    }

    fn run_task(&self, sched: &Scheduler, task: Task) {
        let me = self.me(sched);
        // Plain stores: only this thread writes them; the monitor only reads.
        me.seq
            .store(me.seq.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        me.busy.store(true, Ordering::Relaxed);
        // SAFETY: the task came from a run queue or slot, so this worker owns the turn.
        let TurnReport { outcome, handled } = unsafe { task.run() };
        me.busy.store(false, Ordering::Relaxed);
        // Single writer: only this worker's turns count here.
        me.handled.store(
            me.handled.load(Ordering::Relaxed) + u64::from(handled),
            Ordering::Relaxed,
        );
        if me.stuck.load(Ordering::Relaxed) {
            me.stuck.store(false, Ordering::Relaxed);
        }
        match outcome {
            RunOutcome::Requeue => self.push_back(sched, task),
            // After the mark, as the quiescence protocol requires (`cell/turn.rs`).
            RunOutcome::Drained => self.bump(sched, Count::Ended),
            RunOutcome::Parked | RunOutcome::Stopped => {}
        }
    }

    fn find_task(&self, sched: &Scheduler) -> Option<Task> {
        let me = self.me(sched);
        let tick = self.tick.get().wrapping_add(1);
        self.tick.set(tick);
        if tick % defaults::INJECTOR_INTERVAL == 0 {
            if let Some(t) = self.steal_injector(sched) {
                return Some(t);
            }
        }
        let streak = self.streak.get();
        if streak < defaults::SLOT_STREAK_LIMIT || self.local.is_empty() {
            if let Some(t) = take_slot(me) {
                self.streak.set(streak + 1);
                return Some(t);
            }
        } else if let Some(t) = take_slot(me) {
            // Fairness: the slot's actor waits behind what is already queued.
            self.local.push(t);
        }
        self.streak.set(0);
        if let Some(t) = self.local.pop() {
            return Some(t);
        }
        if let Some(t) = self.steal_injector(sched) {
            return Some(t);
        }
        self.steal_others(sched)
    }

    fn steal_injector(&self, sched: &Scheduler) -> Option<Task> {
        loop {
            match sched.injector.steal_batch_and_pop(&self.local) {
                Steal::Success(t) => return Some(t),
                Steal::Empty => return None,
                Steal::Retry => {}
            }
        }
    }

    fn steal_others(&self, sched: &Scheduler) -> Option<Task> {
        let n = sched.workers.len();
        let mut x = self.rng.get();
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.rng.set(x);
        let start = x as usize % n;
        for k in 0..n {
            let i = (start + k) % n;
            if i == self.index {
                continue;
            }
            let w = &sched.workers[i];
            loop {
                match w.stealer.steal_batch_and_pop(&self.local) {
                    Steal::Success(t) => {
                        #[cfg(feature = "observe")]
                        if crate::observe::process_on() {
                            crate::observe::count(crate::observe::STEALS);
                        }
                        return Some(t);
                    }
                    Steal::Empty => break,
                    Steal::Retry => {}
                }
            }
            if w.stuck.load(Ordering::Acquire) {
                if let Some(t) = take_slot(w) {
                    return Some(t);
                }
            }
        }
        None
    }

    /// Looks for work for a short while as a searcher before parking, so that a sender
    /// meanwhile sees a searcher and does not pay for waking a parked thread.
    fn spin_for_work(&self, sched: &Scheduler) -> bool {
        if self.me(sched).spare {
            return false;
        }
        if !self.searching.replace(true) {
            sched.idle.num_searching.fetch_add(1, Ordering::SeqCst);
        }
        for _ in 0..defaults::SPIN_BEFORE_PARK {
            if sched.stealable_work_exists() || sched.is_shutdown() || sched.is_benched(self.index)
            {
                return true;
            }
            for _ in 0..16 {
                std::hint::spin_loop();
            }
        }
        false
    }

    fn stop_searching(&self, sched: &Scheduler) {
        self.searching.set(false);
        let last = sched.idle.num_searching.fetch_sub(1, Ordering::SeqCst) == 1;
        if last && !self.local.is_empty() {
            sched.idle.notify_one(sched);
        }
    }

    /// Benched by the throttle (`throttle.rs`): hands everything queued here to the
    /// injector, where active workers take it, and parks outside the idle list until
    /// brought back. A notifier that picked this worker as a searcher meanwhile has its
    /// wake-up passed on, so no notification is lost.
    fn sit_out(&self, sched: &Scheduler, parker: &Parker) {
        if let Some(t) = take_slot(self.me(sched)) {
            sched.injector.push(t);
        }
        while let Some(t) = self.local.pop() {
            sched.injector.push(t);
        }
        if self.searching.replace(false) {
            sched.idle.num_searching.fetch_sub(1, Ordering::SeqCst);
        }
        // Whatever was handed over above is in the injector now. Besides, a sender
        // that saw this worker searching (or about to park) left its work to it, and
        // the early exit of `park` returns here, not to `find_task`, when it saw work.
        // So look, after our count is gone (the fence pairs with the notifier's), and
        // pass any work on to an active worker.
        fence(Ordering::SeqCst);
        if sched.stealable_work_exists() {
            sched.idle.notify_one(sched);
        }
        sched.notify_quiet();
        while sched.is_benched(self.index) && !sched.is_shutdown() {
            parker.park();
        }
    }

    /// Parks until woken. Returns `false` on shutdown.
    fn park(&self, sched: &Scheduler, parker: &Parker) -> bool {
        #[cfg(feature = "observe")]
        if crate::observe::process_on() {
            crate::observe::count(crate::observe::PARKS);
        }
        sched.notify_quiet();
        if self.me(sched).spare {
            if sched
                .workers
                .iter()
                .any(|w| w.stuck.load(Ordering::Acquire))
            {
                parker.park_timeout(Duration::from_millis(1));
            } else {
                parker.park();
            }
            return !sched.is_shutdown();
        }
        sched
            .idle
            .register(self.index, self.searching.replace(false));
        // SeqCst fence pairs with the one in `Idle::notify_one`: either the notifier
        // sees us registered, or we see its work here.
        fence(Ordering::SeqCst);
        if sched.stealable_work_exists() || sched.is_shutdown() {
            if !sched.idle.unregister(self.index) {
                // A notifier picked us already and left a token: consume it.
                parker.park();
                self.searching.set(true);
            }
            return !sched.is_shutdown();
        }
        loop {
            parker.park();
            if sched.is_shutdown() {
                return false;
            }
            if !sched.idle.is_registered(self.index) {
                self.searching.set(true);
                return true;
            }
            if sched.is_benched(self.index) {
                // Benched while parked here: leave the idle list (so notifiers pick an
                // active worker) and sit out from the main loop. If a notifier took
                // us off the list first, we count as its searcher: `sit_out` passes
                // the wake-up on.
                if !sched.idle.unregister(self.index) {
                    self.searching.set(true);
                }
                return true;
            }
        }
    }
}

fn take_slot(w: &WorkerShared) -> Option<Task> {
    if w.slot.load(Ordering::Relaxed).is_null() {
        return None;
    }
    // AcqRel pairs with the Release store/swap in `WorkerCtx::push`.
    NonNull::new(w.slot.swap(ptr::null_mut(), Ordering::AcqRel)).map(Task)
}

impl Scheduler {
    /// The index of the calling thread among this pool's workers, if it is one.
    pub(crate) fn current_worker(&self) -> Option<usize> {
        current(self).map(|ctx| ctx.index)
    }

    /// Whether the calling thread has nothing queued but the turn it is running: a
    /// pool worker with an empty slot and deque while the injector is empty too, or an
    /// actor's own thread (which runs nothing else).
    ///
    /// Other workers' deques are deliberately not consulted: lingering while they hold
    /// work measured better than giving up the turn to steal it (Chameneos 31 vs 55 ms,
    /// fjthrput 17 vs 26 ms, 9 interleaved runs each).
    #[inline]
    pub(crate) fn nothing_else_to_run(&self) -> bool {
        if let Some(ctx) = current(self) {
            // The slot first: in request–reply chains it is usually full, and it is
            // this worker's own line.
            if !ctx.me(self).slot.load(Ordering::Relaxed).is_null() || !ctx.local.is_empty() {
                return false;
            }
        } else if super::inline::running() {
            // An I/O thread running a turn it delivered (`inline.rs`) has a link to read.
            return false;
        }
        self.injector.is_empty()
    }

    /// Work an idle worker could take right now.
    pub(super) fn stealable_work_exists(&self) -> bool {
        !self.injector.is_empty()
            || self.workers.iter().any(|w| {
                !w.stealer.is_empty()
                    || (w.stuck.load(Ordering::Acquire)
                        && !w.slot.load(Ordering::Acquire).is_null())
            })
    }
}
