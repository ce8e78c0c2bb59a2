//! Ask deadlines kept by the system's monitor thread instead of one tokio timer each.
//!
//! # Why
//! Every ask has a deadline (`SystemBuilder::ask_timeout`, 5 s by default), and almost
//! every ask is answered long before it. A tokio `Sleep` per ask paid for that
//! deadline with a heap timer, a clock read, an entry into the runtime's context, and
//! an insertion into and removal from the timer wheel under its lock (contended by two
//! workers): half of Logistic Map's time, whose workers ask their rate computer for
//! every term (68 → 36 ms without any timer, `docs/bench/per-message-2026-11-25.md`).
//!
//! # How
//! A pending ask registers a [`Deadline`] in its worker's shard: a lock nobody else
//! takes except the monitor once per tick, and a `Vec` push. The monitor drains the
//! shards every tick and forgets the deadlines of asks already answered, which is
//! nearly all of them. The others get their due time from the monitor's clock at that
//! tick, which is after their first poll, so a deadline never fires early; it may fire
//! up to one tick late (2 ms while the pool works, up to 50 ms while it idles). They
//! go into a heap ordered by due time, and the monitor sleeps no longer than until the
//! first is due. A due deadline whose ask still waits fires: the ask completes with
//! [`AskError::Timeout`](super::AskError). Asks read no clock at all: a clock read per
//! ask was 8% of Logistic Map's samples in `perf`.
//!
//! Only timeouts of at least [`WATCHED_MIN`] are kept here, so that the tick's lateness
//! stays small beside them. Shorter ones, and asks made after the system shut down,
//! use a timer of their own (`futures-timer`, see `ask.rs`).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::task::Waker;
use std::time::{Duration, Instant};

use crate::sync::Mutex;

/// The shortest ask timeout the monitor keeps; shorter ones get a timer of their own.
pub(crate) const WATCHED_MIN: Duration = Duration::from_secs(1);

/// The ask is waiting for its reply.
const WAITING: u8 = 0;
/// The ask completed or was dropped: the deadline is moot.
const SETTLED: u8 = 1;
/// The deadline passed while the ask was waiting.
const FIRED: u8 = 2;
/// The system shut down before the deadline: the ask keeps its own timer instead.
const ABANDONED: u8 = 3;

/// What [`Deadline::check`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    Waiting,
    Fired,
    /// The watch stopped; the ask must time itself out at [`Deadline::fallback`].
    Abandoned,
}

/// One ask's deadline, shared by the ask and the watch.
pub(crate) struct Deadline {
    timeout: Duration,
    state: AtomicU8,
    slot: Mutex<Slot>,
}

/// What the ask and the monitor exchange under the deadline's lock.
struct Slot {
    waker: Option<Waker>,
    /// When it is due, once the monitor has taken it in.
    due: Option<Instant>,
}

impl Deadline {
    /// When the ask times out, for an ask that keeps its own timer after the watch
    /// stopped: the due time if the monitor had set one, else `timeout` from now;
    /// `None` if that is too far out to represent (`Duration::MAX`: never).
    pub(crate) fn fallback(&self) -> Option<Instant> {
        let due = self.slot.lock().due;
        due.or_else(|| Instant::now().checked_add(self.timeout))
    }

    /// Whether the deadline fired, and otherwise makes `waker` the one woken when it
    /// does. The state is read under the waker's lock, which `fire` also holds, so a
    /// deadline that fires meanwhile either is seen here or wakes this `waker`.
    pub(crate) fn check(&self, waker: &Waker) -> Status {
        let mut slot = self.slot.lock();
        match self.state.load(Ordering::Acquire) {
            FIRED => return Status::Fired,
            ABANDONED => return Status::Abandoned,
            _ => {}
        }
        match slot.waker.as_ref() {
            Some(w) if w.will_wake(waker) => {}
            _ => slot.waker = Some(waker.clone()),
        }
        Status::Waiting
    }

    /// The ask no longer needs its deadline (it completed, or was dropped).
    pub(crate) fn settle(&self) {
        // Only WAITING moves to SETTLED; a fired or abandoned deadline stays so.
        let _ = self
            .state
            .compare_exchange(WAITING, SETTLED, Ordering::Release, Ordering::Relaxed);
    }

    fn is_settled(&self) -> bool {
        self.state.load(Ordering::Acquire) == SETTLED
    }

    /// Moves a waiting deadline to `to` and wakes its ask.
    fn finish(&self, to: u8) {
        let waker = {
            let mut slot = self.slot.lock();
            if self
                .state
                .compare_exchange(WAITING, to, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
            {
                return;
            }
            slot.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }
}

/// A heap entry: due time, then registration order (entries need a total order).
struct Due {
    at: Instant,
    seq: u64,
    deadline: Arc<Deadline>,
}

impl PartialEq for Due {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl Eq for Due {}
impl PartialOrd for Due {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Due {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

/// What the monitor owns: the deadlines that outlived their first tick.
#[derive(Default)]
struct Pending {
    heap: BinaryHeap<Reverse<Due>>,
    seq: u64,
    /// The heap's size after the last sweep of settled entries.
    swept_len: usize,
    /// An emptied shard buffer, swapped into the next shard taken in, so that buffers
    /// keep their capacity from tick to tick.
    spare: Vec<Arc<Deadline>>,
}

/// New registrations of one worker (or of every thread outside the pool).
#[derive(Default)]
struct Shard {
    new: Vec<Arc<Deadline>>,
    /// Deadlines of asks answered before the monitor took them in. The monitor leaves
    /// them here, and the shard's thread drops them at its next registration, so that
    /// a `Deadline` is freed by the thread that allocated it: glibc's malloc (the
    /// global allocator of most programs) handles frees from another thread badly
    /// (see `mailbox/alloc.rs`), and `perf` showed the monitor in `_int_free` and the
    /// workers in `_int_malloc`. Logistic Map: 36.3 → 33.2 ms median (30 runs,
    /// `docs/bench/per-message-2026-11-25.md`).
    graveyard: Vec<Arc<Deadline>>,
    closed: bool,
}

/// The deadlines of one system's asks.
pub(crate) struct DeadlineWatch {
    shards: Box<[crossbeam_utils::CachePadded<Mutex<Shard>>]>,
    pending: Mutex<Pending>,
    /// Under `odeon::testkit`'s deterministic scheduler: deadlines are dated by the
    /// virtual clock when registered, of any length, and fired by the simulation.
    virtual_clock: Option<Arc<crate::testkit::core::VirtualClock>>,
}

impl DeadlineWatch {
    /// A watch with one shard per worker thread, plus one for every other thread.
    pub(crate) fn new(threads: usize) -> Self {
        Self {
            shards: (0..=threads)
                .map(|_| crossbeam_utils::CachePadded::new(Mutex::new(Shard::default())))
                .collect(),
            pending: Mutex::new(Pending::default()),
            virtual_clock: None,
        }
    }

    /// A watch for a simulated system (`testkit/`): every ask is watched, due
    /// `timeout` after its first poll on `clock`, and fired when the simulation's
    /// [`DeadlineWatch::tick`] reaches it.
    pub(crate) fn new_virtual(clock: Arc<crate::testkit::core::VirtualClock>) -> Self {
        Self {
            virtual_clock: Some(clock),
            ..Self::new(0)
        }
    }

    /// When the first deadline of a still waiting ask is due (for the simulation,
    /// whose clock jumps to it; answered asks' entries at the top are dropped).
    pub(crate) fn next_due(&self) -> Option<Instant> {
        let mut pending = self.pending.lock();
        while pending
            .heap
            .peek()
            .is_some_and(|Reverse(d)| d.deadline.state.load(Ordering::Acquire) != WAITING)
        {
            pending.heap.pop();
        }
        pending.heap.peek().map(|Reverse(d)| d.at)
    }

    /// Registers a deadline dated by the virtual clock straight into the heap.
    fn register_virtual(
        &self,
        clock: &crate::testkit::core::VirtualClock,
        timeout: Duration,
        waker: &Waker,
    ) -> Arc<Deadline> {
        // A timeout too far out to represent never fires: it stays out of the heap.
        let at = clock.now().checked_add(timeout);
        let deadline = Arc::new(Deadline {
            timeout,
            state: AtomicU8::new(WAITING),
            slot: Mutex::new(Slot {
                waker: Some(waker.clone()),
                due: at,
            }),
        });
        if let Some(at) = at {
            let mut pending = self.pending.lock();
            pending.seq += 1;
            let seq = pending.seq;
            let deadline = deadline.clone();
            pending.heap.push(Reverse(Due { at, seq, deadline }));
        }
        deadline
    }

    /// Registers an ask's deadline, `timeout` from now (as the monitor's next tick
    /// sees it), on the shard of `thread` (a worker's index; `None` for other threads).
    /// `None` if `timeout` is too short to be watched or the watch has stopped: the
    /// ask then keeps its own timer.
    pub(crate) fn register(
        &self,
        thread: Option<usize>,
        timeout: Duration,
        waker: &Waker,
    ) -> Option<Arc<Deadline>> {
        // Once per ask, on its first poll: one well-predicted test of a field that is
        // `None` outside the simulation, beside the `Arc` and the lock that follow.
        if let Some(clock) = &self.virtual_clock {
            return Some(self.register_virtual(clock, timeout, waker));
        }
        if timeout < WATCHED_MIN {
            return None;
        }
        let deadline = Arc::new(Deadline {
            timeout,
            state: AtomicU8::new(WAITING),
            slot: Mutex::new(Slot {
                waker: Some(waker.clone()),
                due: None,
            }),
        });
        let last = self.shards.len() - 1;
        let shard = &self.shards[thread.map_or(last, |t| t.min(last))];
        let mut shard = shard.lock();
        if shard.closed {
            return None;
        }
        shard.new.push(deadline.clone());
        let dead = std::mem::take(&mut shard.graveyard);
        drop(shard);
        drop(dead);
        Some(deadline)
    }

    /// The monitor's tick: takes in new registrations, forgets settled deadlines,
    /// fires those due. Returns when the next one is due.
    pub(crate) fn tick(&self, now: Instant) -> Option<Instant> {
        let mut pending = self.pending.lock();
        let mut taken = std::mem::take(&mut pending.spare);
        let mut fresh = Vec::new();
        for shard in self.shards.iter() {
            let mut shard = shard.lock();
            if shard.new.is_empty() {
                continue;
            }
            // Swap in last tick's (emptied) buffer so the shard keeps a capacity.
            std::mem::swap(&mut shard.new, &mut taken);
            for deadline in taken.drain(..) {
                if deadline.is_settled() {
                    shard.graveyard.push(deadline);
                } else {
                    fresh.push(deadline);
                }
            }
        }
        // Dated after every registration taken in was made (each was pushed before
        // its shard's lock was taken above), so that none can fire early.
        let clock = if fresh.is_empty() {
            now
        } else {
            Instant::now().max(now)
        };
        for deadline in fresh {
            // A timeout too far out to represent never fires.
            let Some(at) = clock.checked_add(deadline.timeout) else {
                continue;
            };
            deadline.slot.lock().due = Some(at);
            pending.seq += 1;
            let seq = pending.seq;
            pending.heap.push(Reverse(Due { at, seq, deadline }));
        }
        pending.spare = taken;
        let mut fired = Vec::new();
        while let Some(Reverse(due)) = pending.heap.peek() {
            if due.at > now {
                break;
            }
            if let Some(Reverse(due)) = pending.heap.pop() {
                fired.push(due.deadline);
            }
        }
        // Asks answered after their first tick stay in the heap until their deadline;
        // sweep them out whenever the heap has doubled since the last sweep.
        if pending.heap.len() > 2 * pending.swept_len.max(512) {
            pending.heap.retain(|Reverse(d)| !d.deadline.is_settled());
            pending.swept_len = pending.heap.len();
        }
        let next = pending.heap.peek().map(|Reverse(d)| d.at);
        drop(pending);
        // Wakers run executor code: not under the watch's lock.
        for deadline in fired {
            deadline.finish(FIRED);
        }
        next
    }

    /// Stops watching (the monitor is exiting): every waiting ask is woken to keep its
    /// own timer, and later asks do so from the start.
    pub(crate) fn close(&self) {
        let mut left = Vec::new();
        for shard in self.shards.iter() {
            let mut shard = shard.lock();
            shard.closed = true;
            left.append(&mut shard.new);
            shard.graveyard.clear();
        }
        let mut pending = self.pending.lock();
        left.extend(pending.heap.drain().map(|Reverse(d)| d.deadline));
        drop(pending);
        for deadline in left {
            deadline.finish(ABANDONED);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::task::Wake;

    #[derive(Default)]
    struct CountingWaker(AtomicUsize);
    impl Wake for CountingWaker {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn waker() -> (Arc<CountingWaker>, Waker) {
        let w = Arc::new(CountingWaker::default());
        (w.clone(), Waker::from(w))
    }

    #[test]
    fn short_timeouts_are_left_to_a_precise_timer() {
        let watch = DeadlineWatch::new(1);
        let (_, w) = waker();
        assert!(watch.register(Some(0), WATCHED_MIN / 2, &w).is_none());
        assert!(watch.register(Some(0), WATCHED_MIN, &w).is_some());
    }

    #[test]
    fn a_waiting_deadline_fires_once_due_and_wakes_its_ask() {
        let watch = DeadlineWatch::new(2);
        let (count, w) = waker();
        let d = watch.register(Some(1), WATCHED_MIN, &w).expect("watched");
        let start = Instant::now();
        // Taken in: due `timeout` after the tick that took it in (never earlier than
        // `timeout` after the registration), not fired.
        let due = watch.tick(start).expect("a deadline is pending");
        assert!(due >= start + WATCHED_MIN);
        assert_eq!(d.fallback(), Some(due));
        assert_eq!(d.check(&w), Status::Waiting);
        // Just before its time it still waits.
        assert_eq!(watch.tick(due - Duration::from_millis(1)), Some(due));
        assert_eq!(d.check(&w), Status::Waiting);
        assert_eq!(count.0.load(Ordering::SeqCst), 0);
        // Due: fired and woken, and nothing is left.
        assert_eq!(watch.tick(due), None);
        assert_eq!(d.check(&w), Status::Fired);
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_settled_deadline_never_fires_and_is_dropped_by_its_own_thread() {
        let watch = DeadlineWatch::new(1);
        let (count, w) = waker();
        let d = watch.register(Some(0), WATCHED_MIN, &w).expect("watched");
        d.settle();
        assert_eq!(watch.tick(Instant::now()), None);
        assert_eq!(count.0.load(Ordering::SeqCst), 0);
        // The monitor left it for the shard's thread...
        assert_eq!(Arc::strong_count(&d), 2);
        // ...which drops it at its next registration (on another thread's shard,
        // nothing happens to it).
        let _other = watch.register(Some(1), WATCHED_MIN, &w).expect("watched");
        assert_eq!(Arc::strong_count(&d), 2);
        let _next = watch.register(Some(0), WATCHED_MIN, &w).expect("watched");
        assert_eq!(Arc::strong_count(&d), 1);
    }

    #[test]
    fn settled_deadlines_that_reached_the_heap_are_swept_as_it_grows() {
        let watch = DeadlineWatch::new(1);
        let (_, w) = waker();
        let now = Instant::now();
        let held: Vec<_> = (0..2000)
            .map(|_| watch.register(Some(0), WATCHED_MIN, &w).expect("watched"))
            .collect();
        watch.tick(now);
        for d in &held {
            d.settle();
        }
        // The heap was swept at 2000 entries (none settled then); it is swept again
        // once it has doubled.
        let late: Vec<_> = (0..2000)
            .map(|_| watch.register(Some(0), WATCHED_MIN, &w).expect("watched"))
            .collect();
        watch.tick(now);
        assert!(held.iter().all(|d| Arc::strong_count(d) == 2));
        let _one_more = watch.register(Some(0), WATCHED_MIN, &w).expect("watched");
        watch.tick(now);
        assert!(late.iter().all(|d| Arc::strong_count(d) == 2));
        assert!(held.iter().all(|d| Arc::strong_count(d) == 1));
    }

    #[test]
    fn a_closed_watch_hands_waiting_asks_back_and_takes_no_more() {
        let watch = DeadlineWatch::new(1);
        let (count, w) = waker();
        let queued = watch.register(Some(0), WATCHED_MIN, &w).expect("watched");
        let in_heap = watch.register(Some(0), WATCHED_MIN, &w).expect("watched");
        watch.tick(Instant::now());
        let queued2 = watch.register(Some(0), WATCHED_MIN, &w).expect("watched");
        watch.close();
        for d in [&queued, &in_heap, &queued2] {
            assert_eq!(d.check(&w), Status::Abandoned);
        }
        assert_eq!(count.0.load(Ordering::SeqCst), 3);
        assert!(watch.register(Some(0), WATCHED_MIN, &w).is_none());
    }

    #[test]
    fn an_abandoned_deadline_too_far_out_to_represent_has_no_fallback_and_no_panic() {
        let watch = DeadlineWatch::new(1);
        let (_count, w) = waker();
        let never = watch.register(Some(0), Duration::MAX, &w).expect("watched");
        watch.close();
        assert_eq!(never.check(&w), Status::Abandoned);
        assert_eq!(never.fallback(), None);
    }
}
