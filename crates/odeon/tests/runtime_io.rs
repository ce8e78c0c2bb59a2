//! The tokio runtime odeon runs its timers on: its own (`SystemBuilder::io_threads`) or
//! the application's (`SystemBuilder::io_handle`). With a lent runtime, its clock drives
//! odeon's timers, and shutting the system down never stops (or panics inside) it.

use std::time::Duration;

use odeon::{Actor, AskError, AsyncHandler, Context, Handler, Message, System};

/// Counts `Fire`s; `Arm` sets a timer that sends one.
struct Alarm {
    fired: u32,
}
impl Actor for Alarm {}

struct Fire;
impl Message for Fire {
    type Reply = ();
}
impl Handler<Fire> for Alarm {
    fn handle(&mut self, _: Fire, _: &mut Context<Self>) {
        self.fired += 1;
    }
}

struct Arm(Duration);
impl Message for Arm {
    type Reply = ();
}
impl Handler<Arm> for Alarm {
    fn handle(&mut self, msg: Arm, cx: &mut Context<Self>) {
        cx.send_after(msg.0, Fire);
    }
}

struct Fired;
impl Message for Fired {
    type Reply = u32;
}
impl Handler<Fired> for Alarm {
    fn handle(&mut self, _: Fired, _: &mut Context<Self>) -> u32 {
        self.fired
    }
}

/// Never answers: its handler awaits forever.
struct Silent;
impl Message for Silent {
    type Reply = ();
}
impl AsyncHandler<Silent> for Alarm {
    async fn handle(&mut self, _: Silent, _: &mut Context<Self>) {
        std::future::pending::<()>().await;
    }
}

const HOUR: Duration = Duration::from_secs(3600);

/// The count of `Fire`s handled, asked without letting this (paused) runtime idle:
/// `block_on` polls the ask on this thread, so tokio never auto-advances its clock
/// meanwhile. A `Fire` the timer sent earlier is already in the mailbox, ahead of the
/// ask, so the count includes it.
fn fired(system: &System, alarm: &odeon::ActorRef<Alarm>) -> u32 {
    system.block_on(alarm.ask(Fired)).unwrap()
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn send_after_fires_when_a_paused_application_clock_reaches_it() {
    let system = System::builder()
        .workers(1)
        .io_handle(tokio::runtime::Handle::current())
        .build();
    let alarm = system.spawn(Alarm { fired: 0 });
    system.block_on(alarm.ask(Arm(HOUR))).unwrap();
    // Let this runtime poll the timer's task once (it was spawned from a worker).
    tokio::task::yield_now().await;

    tokio::time::advance(HOUR - Duration::from_secs(1)).await;
    assert_eq!(fired(&system, &alarm), 0, "fired before its hour");

    tokio::time::advance(Duration::from_secs(1)).await;
    // The timer's task runs on this runtime; give it a turn to send.
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    assert_eq!(fired(&system, &alarm), 1, "did not fire after its hour");
    assert!(system.shutdown_async().await);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn ask_deadlines_run_on_the_wall_clock_not_on_paused_tokio_time() {
    let system = System::builder()
        .workers(1)
        .io_handle(tokio::runtime::Handle::current())
        .build();
    let alarm = system.spawn(Alarm { fired: 0 });
    // Nothing advances tokio's clock, and nothing answers: the deadline still fires.
    let ask = alarm.ask(Silent).timeout(Duration::from_millis(50));
    assert!(matches!(ask.await, Err(AskError::Timeout(_))));
    // The silent handler is killed, not awaited.
    assert!(system.shutdown_async().await);
}

#[test]
fn io_threads_sizes_odeons_own_runtime_and_its_timers_work() {
    let system = System::builder().workers(1).io_threads(2).build();
    assert_eq!(system.handle().io().metrics().num_workers(), 2);
    let alarm = system.spawn(Alarm { fired: 0 });
    system
        .block_on(alarm.ask(Arm(Duration::from_millis(1))))
        .unwrap();
    system.run_until_quiescent(); // waits for the armed timer
    assert_eq!(fired(&system, &alarm), 1);
    assert!(system.shutdown());
}

#[test]
fn the_default_runtime_has_one_io_thread() {
    let system = System::builder().workers(1).build();
    assert_eq!(system.handle().io().metrics().num_workers(), 1);
}

/// Uses a system on the current runtime: a timer fires on it, then the system is
/// handed back for the test to shut down one way or another.
async fn system_on_this_runtime() -> (System, odeon::ActorRef<Alarm>) {
    let system = System::builder()
        .workers(2)
        .io_handle(tokio::runtime::Handle::current())
        .build();
    let alarm = system.spawn(Alarm { fired: 0 });
    alarm.ask(Arm(Duration::from_millis(1))).await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while alarm.ask(Fired).await.unwrap() == 0 {
        assert!(tokio::time::Instant::now() < deadline, "timer never fired");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    // A timer still armed when the system goes: it must be cancelled, not panic.
    alarm.ask(Arm(HOUR)).await.unwrap();
    (system, alarm)
}

/// The application's runtime still runs after the system is gone.
async fn runtime_still_runs(alarm: odeon::ActorRef<Alarm>) {
    assert!(!alarm.is_alive());
    let task = tokio::spawn(async {
        tokio::time::sleep(Duration::from_millis(1)).await;
        7
    });
    assert_eq!(task.await.unwrap(), 7);
}

#[tokio::test(flavor = "current_thread")]
async fn shutdown_with_a_lent_current_thread_runtime_leaves_it_running() {
    let (system, alarm) = system_on_this_runtime().await;
    assert!(system.shutdown());
    runtime_still_runs(alarm).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_with_a_lent_multi_thread_runtime_leaves_it_running() {
    let (system, alarm) = system_on_this_runtime().await;
    assert!(system.shutdown());
    runtime_still_runs(alarm).await;
}

#[tokio::test(flavor = "current_thread")]
async fn shutdown_async_with_a_lent_current_thread_runtime_leaves_it_running() {
    let (system, alarm) = system_on_this_runtime().await;
    assert!(system.shutdown_async().await);
    runtime_still_runs(alarm).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_async_with_a_lent_multi_thread_runtime_leaves_it_running() {
    let (system, alarm) = system_on_this_runtime().await;
    assert!(system.shutdown_async().await);
    runtime_still_runs(alarm).await;
}

#[tokio::test(flavor = "current_thread")]
async fn dropping_a_system_with_a_lent_current_thread_runtime_leaves_it_running() {
    let (system, alarm) = system_on_this_runtime().await;
    drop(system);
    runtime_still_runs(alarm).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_a_system_with_a_lent_multi_thread_runtime_leaves_it_running() {
    let (system, alarm) = system_on_this_runtime().await;
    drop(system);
    runtime_still_runs(alarm).await;
}

#[test]
fn a_lent_runtime_outlives_the_system_outside_async_code() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let system = System::builder()
        .workers(1)
        .io_handle(rt.handle().clone())
        .build();
    let alarm = system.spawn(Alarm { fired: 0 });
    system
        .block_on(alarm.ask(Arm(Duration::from_millis(1))))
        .unwrap();
    system.run_until_quiescent();
    assert_eq!(fired(&system, &alarm), 1);
    assert!(system.shutdown());
    assert_eq!(rt.block_on(async { 5 }), 5);
}
