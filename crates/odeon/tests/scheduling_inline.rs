//! Turns run on the delivering thread (`odeon::remote::run_delivered`, issue 19): a
//! transport's reader that delivers a message while every worker is parked runs the
//! actor's turn itself instead of waking a worker. The guarantees stay those of any
//! turn: one message at a time per actor, the budget, quiescence; and a long handler
//! sends the next deliveries back to the pool.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, ThreadId};
use std::time::{Duration, Instant};

use odeon::remote::run_delivered;
use odeon::{Actor, Context, Handler, Message, System};

const GUARD: Duration = Duration::from_secs(20);
/// How long inline turns stay off on a thread after a slow one (`scheduler/inline.rs`).
const BACK_OFF: Duration = Duration::from_millis(50);

#[derive(Default)]
struct Probe {
    /// The thread of each handled message, in order.
    threads: Arc<Mutex<Vec<ThreadId>>>,
    inside: Arc<AtomicBool>,
    overlaps: Arc<AtomicUsize>,
}
impl Actor for Probe {}

/// Handled by recording the thread; sleeps this long first.
struct Rec(Duration);
impl Message for Rec {
    type Reply = ();
}
impl Handler<Rec> for Probe {
    fn handle(&mut self, Rec(pause): Rec, _cx: &mut Context<Self>) {
        if self.inside.swap(true, Ordering::SeqCst) {
            self.overlaps.fetch_add(1, Ordering::SeqCst);
        }
        if !pause.is_zero() {
            thread::sleep(pause);
        }
        self.threads.lock().unwrap().push(thread::current().id());
        self.inside.store(false, Ordering::SeqCst);
    }
}

struct Count;
impl Message for Count {
    type Reply = usize;
}
impl Handler<Count> for Probe {
    fn handle(&mut self, _: Count, _cx: &mut Context<Self>) -> usize {
        self.threads.lock().unwrap().len()
    }
}

/// Delivers `Rec(pause)` with `run_delivered` after giving the pool time to park,
/// until one such delivery was handled on this thread before `run_delivered`
/// returned. Returns whether that happened within `attempts`.
fn deliver_until_inline(
    system: &System,
    target: &odeon::ActorRef<Probe>,
    threads: &Mutex<Vec<ThreadId>>,
    pause: Duration,
    attempts: usize,
) -> bool {
    let me = thread::current().id();
    for _ in 0..attempts {
        // A delivery of a failed attempt may still be running on the pool: were the
        // next one sent a fixed time after the last, a turn as long as that time
        // (`pause`) could keep the worker awake at each delivery, every time.
        assert!(system.wait_quiescent(Some(GUARD)), "units balance");
        // Workers linger and spin a few microseconds before they park.
        thread::sleep(Duration::from_millis(5));
        let before = threads.lock().unwrap().len();
        run_delivered(|| target.tell(Rec(pause)).unwrap());
        let seen = threads.lock().unwrap();
        if seen.len() == before + 1 && seen[before] == me {
            return true;
        }
    }
    false
}

#[test]
fn a_message_delivered_while_the_pool_sleeps_runs_on_the_delivering_thread() {
    let system = System::builder().workers(2).build();
    let probe = Probe::default();
    let threads = probe.threads.clone();
    let target = system.spawn(probe);
    assert!(
        deliver_until_inline(&system, &target, &threads, Duration::ZERO, 400),
        "no delivery ran on the delivering thread in 400 tries with an idle pool"
    );
    assert!(system.wait_quiescent(Some(GUARD)), "units balance");
    system.shutdown();
}

#[test]
fn without_the_scope_a_delivery_goes_to_the_pool() {
    let system = System::builder().workers(1).build();
    let probe = Probe::default();
    let threads = probe.threads.clone();
    let target = system.spawn(probe);
    for _ in 0..20 {
        thread::sleep(Duration::from_millis(2));
        target.tell(Rec(Duration::ZERO)).unwrap();
    }
    assert_eq!(system.block_on(target.ask(Count)).unwrap(), 20);
    let me = thread::current().id();
    assert!(threads.lock().unwrap().iter().all(|t| *t != me));
    system.shutdown();
}

#[test]
fn the_budget_hands_the_rest_to_the_pool_and_nothing_is_lost() {
    let system = System::builder().workers(1).budget(4).build();
    let probe = Probe::default();
    let threads = probe.threads.clone();
    let target = system.spawn(probe);
    let me = thread::current().id();
    let mut burst_started_inline = false;
    for _ in 0..400 {
        // Workers linger and spin a few microseconds before they park.
        thread::sleep(Duration::from_millis(5));
        let before = threads.lock().unwrap().len();
        run_delivered(|| {
            for _ in 0..100 {
                target.tell(Rec(Duration::ZERO)).unwrap();
            }
        });
        // Inline, at most one turn's budget ran on this thread. The pool may already
        // have handled the rest by now, so only this thread's entries are counted.
        let inline = threads.lock().unwrap()[before..]
            .iter()
            .filter(|t| **t == me)
            .count();
        assert!(inline <= 4, "{inline} handled inline");
        assert_eq!(
            system.block_on(target.ask(Count)).unwrap(),
            before + 100,
            "the rest ran on the pool"
        );
        if inline > 0 {
            burst_started_inline = true;
            break;
        }
    }
    assert!(
        burst_started_inline,
        "no burst started on the delivering thread in 400 tries with an idle pool"
    );
    assert!(system.wait_quiescent(Some(GUARD)), "units balance");
    system.shutdown();
}

#[test]
fn a_long_turn_sends_the_next_deliveries_to_the_pool() {
    let system = System::builder().workers(1).build();
    let probe = Probe::default();
    let threads = probe.threads.clone();
    let target = system.spawn(probe);
    let me = thread::current().id();
    for _ in 0..400 {
        // Turns off inline turns on this thread for 50 ms from a point after `start`.
        let start = Instant::now();
        // A turn of 5 ms, run here: far over the inline limit.
        if !deliver_until_inline(&system, &target, &threads, Duration::from_millis(5), 1) {
            continue;
        }
        // Right after it, inline turns are off on this thread.
        let before = threads.lock().unwrap().len();
        run_delivered(|| target.tell(Rec(Duration::ZERO)).unwrap());
        if start.elapsed() >= BACK_OFF {
            // This thread was descheduled past the back-off (a loaded machine): the
            // delivery may rightly have run inline. Let it finish and start over.
            assert_eq!(system.block_on(target.ask(Count)).unwrap(), before + 1);
            continue;
        }
        assert_eq!(system.block_on(target.ask(Count)).unwrap(), before + 1);
        assert_ne!(
            threads.lock().unwrap()[before],
            me,
            "ran inline right after a long turn"
        );
        system.shutdown();
        return;
    }
    panic!("no long turn ran on the delivering thread in 400 tries with an idle pool");
}

#[test]
fn inline_and_pool_turns_of_one_actor_never_overlap() {
    const THREADS: usize = 3;
    const EACH: usize = 1_500;
    let system = System::builder().workers(2).budget(8).build();
    let probe = Probe::default();
    let (threads, overlaps) = (probe.threads.clone(), probe.overlaps.clone());
    let target = system.spawn(probe);
    thread::scope(|s| {
        for t in 0..THREADS {
            let target = target.clone();
            s.spawn(move || {
                for i in 0..EACH {
                    if t == 0 {
                        // A plain sender: its mail goes to the pool.
                        target.tell(Rec(Duration::ZERO)).unwrap();
                    } else {
                        run_delivered(|| target.tell(Rec(Duration::ZERO)).unwrap());
                    }
                    if i % 100 == 0 {
                        // Let the pool park now and then, so that both paths run.
                        thread::sleep(Duration::from_micros(300));
                    }
                }
            });
        }
    });
    assert_eq!(
        system.block_on(target.ask(Count)).unwrap(),
        THREADS * EACH,
        "every message handled once"
    );
    assert_eq!(overlaps.load(Ordering::SeqCst), 0, "two turns at once");
    let _ = threads;
    assert!(system.wait_quiescent(Some(GUARD)), "units balance");
    system.shutdown();
}
