//! odeon embedded in a tokio application: a `System` created, used, shut down or
//! dropped inside `#[tokio::test]` (both flavours) never panics, and neither does
//! `System::block_on` there.

use std::time::Duration;

use odeon::{Actor, ActorRef, AskError, Context, Handler, Message, StopReason, System};

struct Echo {
    stopped: Option<std::sync::mpsc::Sender<StopReason>>,
}
impl Actor for Echo {
    fn stopped(&mut self, reason: &StopReason) {
        if let Some(tx) = self.stopped.take() {
            let _ = tx.send(reason.clone());
        }
    }
}
struct Say(u32);
impl Message for Say {
    type Reply = u32;
}
impl Handler<Say> for Echo {
    fn handle(&mut self, msg: Say, _: &mut Context<Self>) -> u32 {
        msg.0
    }
}

/// Builds a system, checks that asks work from async code (with the default, watched
/// timeout and with a short one, which has a timer of its own), and returns it with a
/// receiver of the actor's stop reason.
async fn used_system() -> (System, Used) {
    let system = System::builder().workers(2).build();
    let (tx, rx) = std::sync::mpsc::channel();
    let echo = system.spawn(Echo { stopped: Some(tx) });
    assert_eq!(echo.ask(Say(1)).await, Ok(1));
    assert_eq!(
        echo.ask(Say(2)).timeout(Duration::from_millis(500)).await,
        Ok(2)
    );
    echo.tell(Say(3)).unwrap();
    (system, (echo, rx))
}

/// The actor `used_system` spawned (kept, so that it is not collected) and its stop
/// reason's receiver.
type Used = (ActorRef<Echo>, std::sync::mpsc::Receiver<StopReason>);

fn assert_shut_down((echo, rx): &Used) {
    assert_eq!(
        rx.recv_timeout(Duration::from_secs(10)),
        Ok(StopReason::Shutdown)
    );
    assert!(!echo.is_alive());
}

#[tokio::test(flavor = "current_thread")]
async fn dropping_a_system_inside_a_current_thread_runtime_does_not_panic() {
    let (system, rx) = used_system().await;
    drop(system);
    assert_shut_down(&rx);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_a_system_inside_a_multi_thread_runtime_does_not_panic() {
    let (system, rx) = used_system().await;
    drop(system);
    assert_shut_down(&rx);
}

#[tokio::test(flavor = "current_thread")]
async fn shutdown_inside_a_current_thread_runtime_does_not_panic() {
    let (system, rx) = used_system().await;
    assert!(system.shutdown());
    assert_shut_down(&rx);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_inside_a_multi_thread_runtime_does_not_panic() {
    let (system, rx) = used_system().await;
    assert!(system.shutdown());
    assert_shut_down(&rx);
}

#[tokio::test(flavor = "current_thread")]
async fn shutdown_async_inside_a_current_thread_runtime_keeps_the_executor_free() {
    let (system, rx) = used_system().await;
    // A task of this runtime keeps running while the shutdown waits.
    let ticker = tokio::spawn(async {
        tokio::time::sleep(Duration::from_millis(1)).await;
        7
    });
    assert!(system.shutdown_async().await);
    assert_shut_down(&rx);
    assert_eq!(ticker.await.unwrap(), 7);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_async_inside_a_multi_thread_runtime_does_not_panic() {
    let (system, rx) = used_system().await;
    assert!(system.shutdown_async().await);
    assert_shut_down(&rx);
}

#[tokio::test(flavor = "current_thread")]
async fn block_on_inside_a_current_thread_runtime_does_not_panic() {
    let (system, _rx) = used_system().await;
    let echo = system.spawn(Echo { stopped: None });
    assert_eq!(system.block_on(echo.ask(Say(5))), Ok(5));
    // A tokio timer made inside the future runs on the system's own runtime. (One made
    // out here, `block_on(sleep(..))`, would belong to this test's runtime, whose only
    // thread `block_on` blocks: it would never fire.)
    system.block_on(async { tokio::time::sleep(Duration::from_millis(1)).await });
    drop(system);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn block_on_inside_a_multi_thread_runtime_does_not_panic() {
    let (system, _rx) = used_system().await;
    let echo = system.spawn(Echo { stopped: None });
    assert_eq!(system.block_on(echo.ask(Say(5))), Ok(5));
    system.block_on(async { tokio::time::sleep(Duration::from_millis(1)).await });
    assert!(system.shutdown());
}

#[tokio::test(flavor = "current_thread")]
async fn an_ask_after_an_in_context_shutdown_fails_instead_of_panicking() {
    let system = System::builder().workers(2).build();
    let echo = system.spawn(Echo { stopped: None });
    let handle = system.handle();
    assert!(system.shutdown_async().await);
    assert_eq!(echo.ask(Say(1)).await, Err(AskError::Stopped));
    let late = handle.spawn(Echo { stopped: None });
    assert_eq!(
        late.ask(Say(1)).timeout(Duration::from_millis(10)).await,
        Err(AskError::Stopped)
    );
}

#[test]
fn shutdown_and_drop_still_work_outside_any_async_context() {
    let system = System::builder().workers(2).build();
    let echo = system.spawn(Echo { stopped: None });
    assert_eq!(system.block_on(echo.ask(Say(1))), Ok(1));
    assert!(system.shutdown());
    let system = System::builder().workers(1).build();
    let echo = system.spawn(Echo { stopped: None });
    assert_eq!(system.block_on(echo.ask(Say(2))), Ok(2));
    drop(system);
}
