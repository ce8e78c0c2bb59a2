//! Timers armed from outside an actor (`ActorRef::send_after`, `send_interval`): on
//! the testkit's virtual clock, on a paused application clock, on odeon's own runtime
//! from a plain thread and from inside tokio runtimes of both flavours, and their
//! errors on a stopped actor.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use odeon::testkit::Sim;
use odeon::{Actor, Context, Handler, Message, StopReason, System, TellError};

const GUARD: Duration = Duration::from_secs(10);

struct Clock {
    log: Arc<Mutex<Vec<u32>>>,
}
impl Actor for Clock {}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Tick(u32);
impl Message for Tick {
    type Reply = ();
}
impl Handler<Tick> for Clock {
    fn handle(&mut self, Tick(n): Tick, _: &mut Context<Self>) {
        self.log.lock().unwrap().push(n);
    }
}

/// Stops the actor when handled.
struct Quit;
impl Message for Quit {
    type Reply = ();
}
impl Handler<Quit> for Clock {
    fn handle(&mut self, _: Quit, cx: &mut Context<Self>) {
        cx.stop();
    }
}

fn clock() -> (Clock, Arc<Mutex<Vec<u32>>>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    (Clock { log: log.clone() }, log)
}

fn seen(log: &Arc<Mutex<Vec<u32>>>) -> Vec<u32> {
    log.lock().unwrap().clone()
}

// ---- virtual time (testkit) -------------------------------------------------------

#[test]
fn send_after_from_outside_fires_when_virtual_time_reaches_it() {
    let sim = Sim::new(7);
    let (c, log) = clock();
    let r = sim.spawn(c);
    let timer = r.send_after(Duration::from_secs(60), Tick(1)).unwrap();
    sim.run_for(Duration::from_secs(59));
    assert!(seen(&log).is_empty(), "fired before its minute");
    assert!(!timer.is_finished());
    sim.run_for(Duration::from_secs(1));
    assert_eq!(seen(&log), vec![1]);
    assert!(timer.is_finished());
}

#[test]
fn a_cancelled_outside_timer_never_sends() {
    let sim = Sim::new(8);
    let (c, log) = clock();
    let r = sim.spawn(c);
    let timer = r.send_after(Duration::from_secs(1), Tick(1)).unwrap();
    timer.cancel();
    sim.run_for(Duration::from_secs(5));
    assert!(seen(&log).is_empty());
    assert!(timer.is_finished());
}

#[test]
fn send_interval_from_outside_ticks_once_per_period_until_cancelled() {
    let sim = Sim::new(9);
    let (c, log) = clock();
    let r = sim.spawn(c);
    let timer = r.send_interval(Duration::from_secs(1), Tick(0)).unwrap();
    sim.run_for(Duration::from_millis(3500));
    assert_eq!(seen(&log).len(), 3, "three periods, three ticks");
    timer.cancel();
    sim.run_for(Duration::from_secs(10));
    assert_eq!(seen(&log).len(), 3, "ticked after cancel");
}

#[test]
fn an_outside_interval_ends_when_its_target_stops() {
    let sim = Sim::new(10);
    let (c, _log) = clock();
    let r = sim.spawn(c);
    let timer = r.send_interval(Duration::from_secs(1), Tick(0)).unwrap();
    sim.run_for(Duration::from_millis(1500));
    r.tell(Quit).unwrap();
    sim.run_for(Duration::from_secs(3));
    assert!(!r.is_alive());
    assert!(timer.is_finished(), "the interval outlived its target");
}

// ---- errors -----------------------------------------------------------------------

#[test]
fn timers_on_a_stopped_actor_fail_with_the_message_back() {
    let system = System::builder().workers(1).build();
    let (c, _log) = clock();
    let r = system.spawn(c);
    r.tell(Quit).unwrap();
    assert_eq!(system.block_on(r.wait_stopped()), StopReason::Normal);
    assert!(matches!(
        r.send_after(Duration::from_millis(1), Tick(1)),
        Err(TellError::Stopped(Tick(1)))
    ));
    assert!(matches!(
        r.send_interval(Duration::from_millis(1), Tick(2)),
        Err(TellError::Stopped(Tick(2)))
    ));
}

// ---- real runtimes ----------------------------------------------------------------

#[test]
fn send_after_from_a_plain_thread_runs_on_odeons_own_runtime() {
    let system = System::builder().workers(1).build();
    let (c, log) = clock();
    let r = system.spawn(c);
    let r2 = r.clone();
    std::thread::spawn(move || r2.send_after(Duration::from_millis(1), Tick(4)).unwrap())
        .join()
        .unwrap();
    system.run_until_quiescent(); // waits for the armed timer
    assert_eq!(seen(&log), vec![4]);
    assert!(system.shutdown());
}

async fn fires_inside_a_runtime() {
    let system = System::builder().workers(1).build();
    let (c, log) = clock();
    let r = system.spawn(c);
    r.send_after(Duration::from_millis(1), Tick(5)).unwrap();
    // Two timers whose deadlines have both passed when the timer thread gets the CPU
    // (a loaded machine) may be delivered in either order, however far apart they are
    // set: the second is armed only once the first was handled.
    let deadline = std::time::Instant::now() + GUARD;
    while seen(&log).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the timer never fired"
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    r.send_after(Duration::from_millis(1), Quit).unwrap();
    let stopped = tokio::time::timeout(GUARD, r.wait_stopped()).await;
    assert_eq!(stopped, Ok(StopReason::Normal));
    assert_eq!(seen(&log), vec![5]);
    assert!(system.shutdown_async().await);
}

#[tokio::test(flavor = "current_thread")]
async fn send_after_from_inside_a_current_thread_runtime() {
    fires_inside_a_runtime().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_after_from_inside_a_multi_thread_runtime() {
    fires_inside_a_runtime().await;
}

/// With the application's runtime lent (`io_handle`), its paused clock drives timers
/// armed from outside, as it drives `Context::send_after` (tests/runtime_io.rs).
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_paused_application_clock_drives_outside_timers_on_a_lent_runtime() {
    let system = System::builder()
        .workers(1)
        .io_handle(tokio::runtime::Handle::current())
        .build();
    let (c, log) = clock();
    let r = system.spawn(c);
    let hour = Duration::from_secs(3600);
    r.send_after(hour, Tick(1)).unwrap();
    tokio::time::advance(hour - Duration::from_secs(1)).await;
    system.block_on(r.ask(Tick(0))).unwrap(); // a round trip: anything due is in
    assert_eq!(seen(&log), vec![0], "fired before its hour");
    tokio::time::advance(Duration::from_secs(1)).await;
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    system.block_on(r.ask(Tick(2))).unwrap();
    assert_eq!(seen(&log), vec![0, 1, 2]);
    assert!(system.shutdown_async().await);
}

/// Without a lent runtime, odeon's timers are on its own runtime's (unpaused) clock:
/// a caller's paused clock neither delays nor hastens them, so a short timer fires.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_paused_caller_clock_does_not_stop_timers_on_odeons_own_runtime() {
    let system = System::builder().workers(1).build();
    let (c, log) = clock();
    let r = system.spawn(c);
    // The tell first: a timer of 20 ms armed before it could fire first when this
    // thread is descheduled between the two (a loaded machine).
    r.tell(Tick(1)).unwrap();
    r.send_after(Duration::from_millis(20), Quit).unwrap();
    // `wait_stopped` needs no timer; the guard is a wall-clock thread.
    let (tx, rx) = std::sync::mpsc::channel();
    let waiter = r.wait_stopped();
    std::thread::spawn(move || {
        let _ = tx.send(futures_block_on(waiter));
    });
    let reason = tokio::task::spawn_blocking(move || rx.recv_timeout(GUARD))
        .await
        .unwrap();
    assert_eq!(reason, Ok(StopReason::Normal));
    assert_eq!(seen(&log), vec![1]);
    assert!(system.shutdown_async().await);
}

fn futures_block_on<F: std::future::Future>(f: F) -> F::Output {
    System::builder().workers(1).build().block_on(f)
}
