//! `ActorRef::wait_stopped`: waiting from outside an actor until it stops, with the
//! real reason, from any thread or runtime.

use std::future::Future;
use std::pin::pin;
use std::sync::mpsc;
use std::task::{Context as TaskContext, Poll, Waker};
use std::time::Duration;

use odeon::{Actor, AsyncHandler, Context, Handler, Message, StopReason, System};

/// Fail instead of hanging; never a statement about speed.
const HANG_GUARD: Duration = Duration::from_secs(10);

fn small_system() -> System {
    System::builder().workers(2).build()
}

/// Awaits `fut` on the system's runtime, failing the test if it hangs.
fn wait<F: Future>(system: &System, fut: F) -> F::Output {
    system.block_on(async {
        tokio::time::timeout(HANG_GUARD, fut)
            .await
            .expect("the wait resolved")
    })
}

struct Worker;
impl Actor for Worker {}

struct Crash;
impl Message for Crash {
    type Reply = ();
}
impl Handler<Crash> for Worker {
    fn handle(&mut self, _: Crash, _: &mut Context<Self>) {
        panic!("crashed on purpose");
    }
}

struct Ping;
impl Message for Ping {
    type Reply = u32;
}
impl Handler<Ping> for Worker {
    fn handle(&mut self, _: Ping, _: &mut Context<Self>) -> u32 {
        7
    }
}

/// An async handler that never completes: only a kill ends it.
struct Hang;
impl Message for Hang {
    type Reply = ();
}
impl AsyncHandler<Hang> for Worker {
    async fn handle(&mut self, _: Hang, _: &mut Context<Self>) {
        std::future::pending::<()>().await;
    }
}

#[test]
fn a_normal_stop_resolves_with_normal() {
    let system = small_system();
    let worker = system.spawn(Worker);
    let done = worker.wait_stopped();
    // Alive: the wait has not resolved.
    assert_eq!(wait(&system, worker.ask(Ping)), Ok(7));
    worker.stop();
    assert_eq!(wait(&system, done), StopReason::Normal);
    assert!(!worker.is_alive());
}

#[test]
fn a_panic_resolves_with_the_panic_message() {
    let system = small_system();
    let worker = system.spawn(Worker);
    let done = worker.wait_stopped();
    worker.tell(Crash).unwrap();
    assert_eq!(
        wait(&system, done),
        StopReason::Panicked("crashed on purpose".into())
    );
}

#[test]
fn a_kill_resolves_with_killed_even_mid_await() {
    let system = small_system();
    let worker = system.spawn(Worker);
    let done = worker.wait_stopped();
    worker.tell(Hang).unwrap();
    worker.kill();
    assert_eq!(wait(&system, done), StopReason::Killed);
}

#[test]
fn shutdown_resolves_with_shutdown_for_a_waiter_on_another_runtime() {
    let system = small_system();
    let worker = system.spawn(Worker);
    let done = worker.wait_stopped();
    let (tx, rx) = mpsc::channel();
    // Awaited on a runtime the system knows nothing about, on another thread.
    let waiter = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let _ = tx.send(rt.block_on(done));
    });
    assert!(system.shutdown());
    assert_eq!(
        rx.recv_timeout(HANG_GUARD).expect("the waiter resolved"),
        StopReason::Shutdown
    );
    waiter.join().unwrap();
}

#[test]
fn an_already_stopped_actor_resolves_on_the_first_poll() {
    let system = small_system();
    let worker = system.spawn(Worker);
    worker.tell(Crash).unwrap();
    wait(&system, worker.wait_stopped());
    // No executor, no waker that works: a later wait must be ready at once.
    let mut late = pin!(worker.wait_stopped());
    let mut cx = TaskContext::from_waker(Waker::noop());
    match late.as_mut().poll(&mut cx) {
        Poll::Ready(reason) => {
            assert_eq!(reason, StopReason::Panicked("crashed on purpose".into()))
        }
        Poll::Pending => panic!("a stopped actor's wait must be ready at once"),
    }
}

#[test]
fn many_waiters_on_many_threads_all_see_the_reason() {
    let system = small_system();
    let worker = system.spawn(Worker);
    let (tx, rx) = mpsc::channel();
    let mut threads = Vec::new();
    for _ in 0..8 {
        let done = worker.wait_stopped();
        let tx = tx.clone();
        threads.push(std::thread::spawn(move || {
            let _ = tx.send(futures_executor::block_on(done));
        }));
    }
    drop(tx);
    // Waits dropped before the stop must not disturb the others.
    for _ in 0..100 {
        drop(worker.wait_stopped());
    }
    worker.tell(Crash).unwrap();
    for _ in 0..8 {
        let reason = rx.recv_timeout(HANG_GUARD).expect("every waiter resolves");
        assert_eq!(reason, StopReason::Panicked("crashed on purpose".into()));
    }
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn waiting_does_not_keep_the_actor_alive() {
    let system = small_system();
    let worker = system.spawn(Worker);
    let done = worker.wait_stopped();
    let weak = worker.downgrade();
    drop(worker);
    // The only strong ref is gone: the actor is collected although someone waits.
    assert_eq!(wait(&system, done), StopReason::Unreferenced);
    assert!(weak.upgrade().is_none());
}

#[test]
fn a_self_stop_from_a_handler_is_seen_by_the_waiter() {
    struct Quitter;
    impl Actor for Quitter {}
    struct Quit;
    impl Message for Quit {
        type Reply = ();
    }
    impl Handler<Quit> for Quitter {
        fn handle(&mut self, _: Quit, cx: &mut Context<Self>) {
            cx.stop();
        }
    }
    let system = small_system();
    let quitter = system.spawn(Quitter);
    let done = quitter.wait_stopped();
    quitter.tell(Quit).unwrap();
    assert_eq!(wait(&system, done), StopReason::Normal);
}
