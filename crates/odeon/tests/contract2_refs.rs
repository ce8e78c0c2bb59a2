//! Second contract pass over what any holder of a ref may do since issue 15, read from
//! the rustdoc of `ActorRef::stop_gracefully`, `send_after`, `send_interval`,
//! `ask_wait` and `prefetch`, at the corners the first tests (refs_drain.rs,
//! refs_timers.rs) do not reach: a stop during a drain, concurrent drains, a drain
//! from the actor's own handler, timers that outlive their handle and every other ref,
//! zero periods, full mailboxes when a timer fires, FIFO among waiting asks, an ask
//! never polled.
//!
//! The receiver is held deterministically with a gate (an async handler that awaits a
//! `Notify`), so its mailbox fills while the test acts. Durations below are only
//! "fail instead of hang" guards.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use odeon::{
    Actor, AskError, AsyncHandler, Context, DrainError, Handler, Message, SpawnOptions, StopReason,
    System, TellError,
};
use tokio::sync::Notify;

const GUARD: Duration = Duration::from_secs(10);

struct Worker {
    entered: mpsc::Sender<()>,
    gate: Arc<Notify>,
    log: Arc<Mutex<Vec<u32>>>,
}
impl Actor for Worker {}

/// Holds the actor until the gate opens.
struct Hold;
impl Message for Hold {
    type Reply = ();
}
impl AsyncHandler<Hold> for Worker {
    async fn handle(&mut self, _: Hold, _: &mut Context<Self>) {
        let _ = self.entered.send(());
        self.gate.notified().await;
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Job(u32);
impl Message for Job {
    type Reply = u32;
}
impl Handler<Job> for Worker {
    fn handle(&mut self, Job(n): Job, _: &mut Context<Self>) -> u32 {
        self.log.lock().unwrap().push(n);
        n
    }
}

/// Starts a drain of the actor from inside its own handler.
struct DrainMyself;
impl Message for DrainMyself {
    type Reply = ();
}
impl Handler<DrainMyself> for Worker {
    fn handle(&mut self, _: DrainMyself, cx: &mut Context<Self>) {
        cx.myself().stop_gracefully().unwrap();
    }
}

/// Stashes a `Job`.
struct StashJob(u32);
impl Message for StashJob {
    type Reply = ();
}
impl Handler<StashJob> for Worker {
    fn handle(&mut self, StashJob(n): StashJob, cx: &mut Context<Self>) {
        cx.stash(Job(n));
    }
}

/// Puts the stashed messages back in front of the mailbox.
struct Unstash;
impl Message for Unstash {
    type Reply = ();
}
impl Handler<Unstash> for Worker {
    fn handle(&mut self, _: Unstash, cx: &mut Context<Self>) {
        cx.unstash_all();
    }
}

struct Fixture {
    system: System,
    entered: mpsc::Receiver<()>,
    gate: Arc<Notify>,
    log: Arc<Mutex<Vec<u32>>>,
}

impl Fixture {
    fn new() -> Self {
        let (_, entered) = mpsc::channel();
        Self {
            system: System::builder().workers(2).build(),
            entered,
            gate: Arc::new(Notify::new()),
            log: Arc::default(),
        }
    }

    fn worker(&mut self) -> Worker {
        let (tx, rx) = mpsc::channel();
        self.entered = rx;
        Worker {
            entered: tx,
            gate: self.gate.clone(),
            log: self.log.clone(),
        }
    }

    /// Spawns a worker and holds it inside `Hold` until `release`.
    fn held(&mut self, opts: SpawnOptions) -> odeon::ActorRef<Worker> {
        let w = self.worker();
        let r = self.system.spawn_with(w, opts);
        r.tell(Hold).unwrap();
        self.entered
            .recv_timeout(GUARD)
            .expect("the gate was not entered");
        r
    }

    fn release(&self) {
        self.gate.notify_one();
    }

    fn log(&self) -> Vec<u32> {
        self.log.lock().unwrap().clone()
    }

    /// Waits (guarded) until the log holds `n` entries.
    fn wait_log(&self, n: usize) -> Vec<u32> {
        let deadline = std::time::Instant::now() + GUARD;
        loop {
            let log = self.log();
            if log.len() >= n {
                return log;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "only {log:?} after the guard"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

/// Runs `f` to completion on a runtime of the test's own (with a timer), failing
/// instead of hanging.
fn guarded<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
        .block_on(async { tokio::time::timeout(GUARD, f).await })
        .expect("did not complete within the guard")
}

// ---- stop_gracefully ------------------------------------------------------------

/// "a stop request (`stop`, `kill`) meanwhile still cuts the drain short".
#[test]
fn a_stop_during_a_drain_cuts_it_short_and_fails_the_queued_asks() {
    let mut f = Fixture::new();
    let w = f.held(SpawnOptions::new());
    let asks: Vec<_> = (1..=5).map(|n| w.ask(Job(n))).collect();
    w.stop_gracefully().unwrap();
    w.stop();
    f.release();
    assert_eq!(guarded(w.wait_stopped()), StopReason::Normal);
    for ask in asks {
        assert_eq!(guarded(ask), Err(AskError::Stopped));
    }
    assert!(f.log().is_empty(), "the stop did not cut the drain short");
}

/// "Calling it again while a drain runs does nothing": so many callers at once all
/// get `Ok`, and every message queued before is handled once.
#[test]
fn concurrent_drains_all_succeed_and_each_queued_message_is_handled_once() {
    let mut f = Fixture::new();
    let w = f.held(SpawnOptions::new());
    for n in 0..100 {
        w.tell(Job(n)).unwrap();
    }
    let results: Vec<_> = std::thread::scope(|s| {
        let calls: Vec<_> = (0..8).map(|_| s.spawn(|| w.stop_gracefully())).collect();
        calls.into_iter().map(|c| c.join().unwrap()).collect()
    });
    assert_eq!(results, vec![Ok(()); 8]);
    f.release();
    assert_eq!(guarded(w.wait_stopped()), StopReason::Normal);
    assert_eq!(f.log(), (0..100).collect::<Vec<_>>());
    assert_eq!(w.stop_gracefully(), Err(DrainError::Stopped));
}

/// A drain started from the actor's own handler (through `cx.myself()`) handles
/// what was queued behind that message, then stops.
#[test]
fn a_drain_started_by_the_actor_itself_handles_what_is_behind_it() {
    let mut f = Fixture::new();
    let w = f.held(SpawnOptions::new());
    w.tell(DrainMyself).unwrap();
    w.tell(Job(1)).unwrap();
    w.tell(Job(2)).unwrap();
    f.release();
    assert_eq!(guarded(w.wait_stopped()), StopReason::Normal);
    assert_eq!(f.log(), vec![1, 2]);
}

/// "stashed messages that are not unstashed before the end are dropped": one
/// unstashed during the drain is handled, one still stashed at the end is not.
#[test]
fn a_drain_handles_what_is_unstashed_during_it_and_drops_what_stays_stashed() {
    let mut f = Fixture::new();
    let w = f.held(SpawnOptions::new());
    w.tell(StashJob(1)).unwrap();
    w.tell(Unstash).unwrap();
    w.tell(StashJob(2)).unwrap();
    w.tell(Job(3)).unwrap();
    w.stop_gracefully().unwrap();
    f.release();
    assert_eq!(guarded(w.wait_stopped()), StopReason::Normal);
    assert_eq!(f.log(), vec![1, 3]);
}

/// An idle actor (empty mailbox) stops at once with `Normal`, and a watcher-free
/// `wait_stopped` from inside both tokio flavours sees it.
#[tokio::test(flavor = "current_thread")]
async fn draining_an_idle_actor_stops_it_inside_a_current_thread_runtime() {
    let mut f = Fixture::new();
    let worker = f.worker();
    let w = f.system.spawn(worker);
    w.stop_gracefully().unwrap();
    let reason = tokio::time::timeout(GUARD, w.wait_stopped()).await;
    assert_eq!(reason.expect("hung"), StopReason::Normal);
    f.system.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn draining_a_full_bounded_mailbox_inside_a_multi_thread_runtime_handles_it_all() {
    let mut f = Fixture::new();
    let w = f.held(SpawnOptions::new().bounded(4));
    for n in 0..4 {
        w.tell(Job(n)).unwrap();
    }
    assert!(matches!(w.tell(Job(9)), Err(TellError::Full(Job(9)))));
    w.stop_gracefully().unwrap();
    f.release();
    let reason = tokio::time::timeout(GUARD, w.wait_stopped()).await;
    assert_eq!(reason.expect("hung"), StopReason::Normal);
    assert_eq!(f.log(), vec![0, 1, 2, 3]);
    f.system.shutdown();
}

/// `send_interval` is refused while draining, as `send_after` is ("As
/// [`ActorRef::send_after`]").
#[test]
fn send_interval_on_a_draining_actor_is_refused_with_the_message() {
    let mut f = Fixture::new();
    let w = f.held(SpawnOptions::new());
    w.stop_gracefully().unwrap();
    assert!(matches!(
        w.send_interval(Duration::from_millis(1), Job(5)),
        Err(TellError::Stopped(Job(5)))
    ));
    f.release();
    assert_eq!(guarded(w.wait_stopped()), StopReason::Normal);
    assert!(f.log().is_empty());
}

// ---- send_after / send_interval --------------------------------------------------

/// "dropping the handle does not" cancel, and "Until it fires it holds a reference,
/// so it keeps the actor alive": no ref and no handle left, the message still arrives.
#[test]
fn a_timer_outlives_its_handle_and_every_other_ref() {
    let mut f = Fixture::new();
    let worker = f.worker();
    let w = f.system.spawn(worker);
    let timer = w.send_after(Duration::from_millis(20), Job(1)).unwrap();
    drop(timer);
    drop(w);
    assert_eq!(f.wait_log(1), vec![1]);
}

#[test]
fn a_zero_delay_fires_and_a_zero_period_ticks_until_cancelled() {
    let mut f = Fixture::new();
    let worker = f.worker();
    let w = f.system.spawn(worker);
    w.send_after(Duration::ZERO, Job(1)).unwrap();
    assert_eq!(f.wait_log(1), vec![1]);
    let interval = w.send_interval(Duration::ZERO, Job(2)).unwrap();
    f.wait_log(4);
    interval.cancel();
    assert!(interval.is_finished());
    // Ticks sent before the cancel may still be queued, and a send already under way
    // on a runtime thread completes: quiescence is reached once the aborted task is
    // gone and the mailbox handled (a fixed pause was too short on a loaded machine).
    assert!(
        f.system.wait_quiescent(Some(GUARD)),
        "the interval never ended"
    );
    let after_cancel = f.log().len();
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(f.log().len(), after_cancel, "ticked after cancel");
    assert!(w.is_alive());
    f.system.shutdown();
}

/// `is_finished`: "Whether the timer has fired (one-shot) or was cancelled": true as
/// soon as `cancel` returns, on the handle and on its clones (it was false until the
/// runtime got round to the aborted task).
#[test]
fn a_cancelled_timer_is_finished_as_soon_as_cancel_returns() {
    let mut f = Fixture::new();
    let worker = f.worker();
    let w = f.system.spawn(worker);
    for _ in 0..50 {
        let once = w.send_after(Duration::from_secs(3600), Job(1)).unwrap();
        let ticks = w.send_interval(Duration::from_secs(3600), Job(2)).unwrap();
        let clone = ticks.clone();
        assert!(!once.is_finished() && !ticks.is_finished());
        once.cancel();
        assert!(
            once.is_finished(),
            "a cancelled one-shot timer is not finished"
        );
        clone.cancel();
        assert!(clone.is_finished() && ticks.is_finished());
    }
    assert!(f.log().is_empty());
    f.system.shutdown();
}

/// "If the mailbox is bounded and full when it fires, it waits for room": the
/// message is not dropped.
#[test]
fn a_timer_firing_on_a_full_bounded_mailbox_waits_for_room() {
    let mut f = Fixture::new();
    let w = f.held(SpawnOptions::new().bounded(1));
    w.tell(Job(1)).unwrap();
    let timer = w.send_after(Duration::ZERO, Job(2)).unwrap();
    let ticks = w.send_interval(Duration::from_millis(1), Job(3)).unwrap();
    std::thread::sleep(Duration::from_millis(30)); // both fired on a full mailbox
    f.release();
    let log = f.wait_log(3);
    ticks.cancel();
    assert_eq!(log[0], 1);
    assert!(log.contains(&2), "the timer's message was dropped: {log:?}");
    assert!(log.contains(&3), "no tick got through: {log:?}");
    assert!(timer.is_finished());
    f.system.shutdown();
}

/// Timers armed from many threads at once each deliver exactly once.
#[test]
fn timers_armed_concurrently_each_deliver_once() {
    let mut f = Fixture::new();
    let worker = f.worker();
    let w = f.system.spawn(worker);
    std::thread::scope(|s| {
        for t in 0..4u32 {
            let w = &w;
            s.spawn(move || {
                for i in 0..25 {
                    w.send_after(Duration::from_millis(u64::from(i % 3)), Job(t * 100 + i))
                        .unwrap();
                }
            });
        }
    });
    f.wait_log(100);
    std::thread::sleep(Duration::from_millis(20)); // a duplicate would show by now
    let mut log = f.log();
    log.sort_unstable();
    let want: Vec<u32> = (0..4)
        .flat_map(|t| (0..25).map(move |i| t * 100 + i))
        .collect();
    assert_eq!(log, want);
    f.system.shutdown();
}

/// A pending timer's target stopped before it fires: the message is dropped, the
/// timer ends (no panic, no hang in shutdown).
#[test]
fn a_timer_whose_target_stopped_drops_its_message_and_ends() {
    let mut f = Fixture::new();
    let worker = f.worker();
    let w = f.system.spawn(worker);
    let timer = w.send_after(Duration::from_millis(30), Job(1)).unwrap();
    let ticks = w.send_interval(Duration::from_millis(5), Job(2)).unwrap();
    w.stop();
    assert_eq!(guarded(w.wait_stopped()), StopReason::Normal);
    let deadline = std::time::Instant::now() + GUARD;
    while !(timer.is_finished() && ticks.is_finished()) {
        assert!(
            std::time::Instant::now() < deadline,
            "a timer outlived its target"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(f.log().is_empty());
    assert!(f.system.shutdown());
}

// ---- ask_wait ---------------------------------------------------------------------

/// "Waiting senders get room in FIFO order."
#[test]
fn asks_waiting_for_room_are_sent_in_the_order_they_began_waiting() {
    let mut f = Fixture::new();
    let w = f.held(SpawnOptions::new().bounded(1));
    w.tell(Job(0)).unwrap();
    let io = f.system.handle().io();
    let mut waiting = Vec::new();
    for n in 1..=6 {
        // Polled once here, so that each is parked on the bound before the next one
        // starts waiting (a pause for the runtime to poll it was not enough on a
        // loaded machine); the runtime polls it again with a waker of its own.
        let mut ask = Box::pin(w.ask_wait(Job(n)).timeout(GUARD));
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        assert!(
            std::future::Future::poll(ask.as_mut(), &mut cx).is_pending(),
            "ask {n} did not wait for room"
        );
        waiting.push(io.spawn(ask));
    }
    f.release();
    for (n, ask) in (1..=6).zip(waiting) {
        assert_eq!(guarded(ask).unwrap(), Ok(n));
    }
    assert_eq!(f.log(), vec![0, 1, 2, 3, 4, 5, 6]);
    f.system.shutdown();
}

/// "Nothing is sent until the returned [`Ask`] is polled, if the mailbox is full":
/// an ask_wait dropped unpolled sends nothing.
#[test]
fn an_ask_wait_dropped_unpolled_on_a_full_mailbox_sends_nothing() {
    let mut f = Fixture::new();
    let w = f.held(SpawnOptions::new().bounded(1));
    w.tell(Job(1)).unwrap();
    drop(w.ask_wait(Job(2)));
    f.release();
    assert_eq!(guarded(w.ask_wait(Job(3)).timeout(GUARD)), Ok(3));
    assert_eq!(f.log(), vec![1, 3]);
    f.system.shutdown();
}

/// With room, `ask_wait` sends at once, as `ask` does: dropped unpolled, the message
/// is still handled (only its reply is lost).
#[test]
fn an_ask_wait_with_room_is_sent_at_once() {
    let mut f = Fixture::new();
    let w = f.held(SpawnOptions::new().bounded(2));
    drop(w.ask_wait(Job(1)));
    f.release();
    assert_eq!(guarded(w.ask(Job(2))), Ok(2));
    assert_eq!(f.log(), vec![1, 2]);
    f.system.shutdown();
}

// ---- prefetch ---------------------------------------------------------------------

/// A cache hint: harmless on a stopped actor and after shutdown.
#[test]
fn prefetch_is_harmless_on_a_stopped_actor_and_after_shutdown() {
    let mut f = Fixture::new();
    let worker = f.worker();
    let w = f.system.spawn(worker);
    w.prefetch();
    w.stop();
    assert_eq!(guarded(w.wait_stopped()), StopReason::Normal);
    w.prefetch();
    let worker = f.worker();
    let other = f.system.spawn(worker);
    let system = std::mem::replace(&mut f.system, System::builder().workers(1).build());
    assert!(system.shutdown());
    other.prefetch();
    assert!(matches!(other.tell(Job(1)), Err(TellError::Stopped(_))));
}
