//! `ActorRef::stop_gracefully` (drain, then stop) and `ActorRef::ask_wait` (an ask that
//! waits for room in a bounded mailbox), with the corners a user hits: later sends,
//! a second call, a stopped actor, a shut-down system, a supervised child.
//!
//! The receiver is held deterministically with a gate (an async handler that awaits a
//! `Notify`), so its mailbox fills while the test acts.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use odeon::{
    Actor, AskError, AsyncHandler, Context, DrainError, Handler, Message, Restart, SpawnOptions,
    StopReason, Strategy, SupervisorSpec, System, TellError,
};
use tokio::sync::Notify;

const GUARD: Duration = Duration::from_secs(10);

struct Worker {
    entered: mpsc::Sender<()>,
    gate: Arc<Notify>,
    log: Arc<Mutex<Vec<u32>>>,
    /// What `cx.notify` returned while draining.
    notified: Arc<Mutex<Option<bool>>>,
}
impl Actor for Worker {}

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

/// Tries to send itself a message: refused once a drain has begun.
struct Echo;
impl Message for Echo {
    type Reply = ();
}
impl Handler<Echo> for Worker {
    fn handle(&mut self, _: Echo, cx: &mut Context<Self>) {
        let ok = cx.notify(Job(999)).is_ok();
        *self.notified.lock().unwrap() = Some(ok);
    }
}

struct Fixture {
    system: System,
    entered: mpsc::Receiver<()>,
    gate: Arc<Notify>,
    log: Arc<Mutex<Vec<u32>>>,
    notified: Arc<Mutex<Option<bool>>>,
}

impl Fixture {
    fn new() -> Self {
        let (_, entered) = mpsc::channel();
        Self {
            system: System::builder().workers(2).build(),
            entered,
            gate: Arc::new(Notify::new()),
            log: Arc::default(),
            notified: Arc::default(),
        }
    }

    fn worker(&mut self) -> Worker {
        let (tx, rx) = mpsc::channel();
        self.entered = rx;
        Worker {
            entered: tx,
            gate: self.gate.clone(),
            log: self.log.clone(),
            notified: self.notified.clone(),
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
}

/// Runs `f` to completion on a runtime of the test's own (with a timer), failing
/// instead of hanging. Works whether or not the system still exists.
fn guarded<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
        .block_on(async { tokio::time::timeout(GUARD, f).await })
        .expect("did not complete within the guard")
}

fn wait(r: &odeon::ActorRef<Worker>) -> StopReason {
    guarded(r.wait_stopped())
}

// ---- stop_gracefully ------------------------------------------------------------

#[test]
fn a_drain_handles_everything_queued_in_order_then_stops_normally() {
    let mut f = Fixture::new();
    let w = f.held(SpawnOptions::new());
    for n in 0..100 {
        w.tell(Job(n)).unwrap();
    }
    let last = w.ask(Job(100));
    w.stop_gracefully().unwrap();
    f.release();
    assert_eq!(f.system.block_on(last.timeout(GUARD)), Ok(100));
    assert_eq!(wait(&w), StopReason::Normal);
    assert_eq!(f.log(), (0..=100).collect::<Vec<_>>());
}

#[test]
fn stop_by_contrast_drops_the_queue_and_fails_its_asks() {
    let mut f = Fixture::new();
    let w = f.held(SpawnOptions::new());
    w.tell(Job(1)).unwrap();
    let queued = w.ask(Job(2));
    w.stop();
    f.release();
    assert_eq!(
        f.system.block_on(queued.timeout(GUARD)),
        Err(AskError::Stopped)
    );
    assert_eq!(wait(&w), StopReason::Normal);
    assert!(
        f.log().is_empty(),
        "stop handled queued messages: {:?}",
        f.log()
    );
}

#[test]
fn sends_after_the_call_are_refused_from_every_path() {
    let mut f = Fixture::new();
    let w = f.held(SpawnOptions::new());
    w.tell(Echo).unwrap();
    w.stop_gracefully().unwrap();
    assert!(matches!(w.tell(Job(7)), Err(TellError::Stopped(Job(7)))));
    assert!(matches!(
        f.system.block_on(w.send(Job(8))),
        Err(TellError::Stopped(Job(8)))
    ));
    assert_eq!(f.system.block_on(w.ask(Job(9))), Err(AskError::Stopped));
    assert_eq!(
        f.system.block_on(w.ask_wait(Job(10))),
        Err(AskError::Stopped)
    );
    assert!(matches!(
        w.send_after(Duration::from_millis(1), Job(11)),
        Err(TellError::Stopped(Job(11)))
    ));
    assert!(w.is_alive(), "draining is not stopped yet");
    f.release();
    assert_eq!(wait(&w), StopReason::Normal);
    assert_eq!(
        *f.notified.lock().unwrap(),
        Some(false),
        "cx.notify was accepted while draining"
    );
    assert!(
        f.log().is_empty(),
        "a refused message was handled: {:?}",
        f.log()
    );
}

#[test]
fn a_sender_waiting_for_room_is_refused_once_the_drain_begins() {
    let mut f = Fixture::new();
    let w = f.held(SpawnOptions::new().bounded(1));
    w.tell(Job(1)).unwrap(); // fills the mailbox
    assert!(matches!(w.tell(Job(2)), Err(TellError::Full(_))));
    let w2 = w.clone();
    let waiting = f
        .system
        .handle()
        .io()
        .spawn(async move { w2.send(Job(2)).await });
    let asking = w.ask_wait(Job(3)).timeout(GUARD);
    let asking = f.system.handle().io().spawn(asking);
    std::thread::sleep(Duration::from_millis(20)); // both are parked on the bound
    w.stop_gracefully().unwrap();
    f.release();
    let sent = guarded(waiting).unwrap();
    assert!(matches!(sent, Err(TellError::Stopped(Job(2)))), "{sent:?}");
    assert_eq!(guarded(asking).unwrap(), Err(AskError::Stopped));
    assert_eq!(wait(&w), StopReason::Normal);
    assert_eq!(f.log(), vec![1], "only what was queued before the drain");
}

#[test]
fn a_second_call_is_a_no_op_and_a_stopped_actor_is_an_error() {
    let mut f = Fixture::new();
    let w = f.held(SpawnOptions::new());
    w.tell(Job(1)).unwrap();
    assert_eq!(w.stop_gracefully(), Ok(()));
    assert_eq!(w.stop_gracefully(), Ok(()));
    f.release();
    assert_eq!(wait(&w), StopReason::Normal);
    assert_eq!(f.log(), vec![1]);
    assert_eq!(w.stop_gracefully(), Err(DrainError::Stopped));
}

#[test]
fn after_shutdown_every_outside_call_returns_a_typed_error() {
    let mut f = Fixture::new();
    let worker = f.worker();
    let w = f.system.spawn(worker);
    let system = std::mem::replace(&mut f.system, System::builder().workers(1).build());
    assert!(system.shutdown());
    assert_eq!(w.stop_gracefully(), Err(DrainError::Stopped));
    assert!(matches!(
        w.send_after(Duration::from_millis(1), Job(1)),
        Err(TellError::Stopped(Job(1)))
    ));
    assert!(matches!(
        w.send_interval(Duration::from_millis(1), Job(2)),
        Err(TellError::Stopped(_))
    ));
    assert_eq!(guarded(w.ask_wait(Job(3))), Err(AskError::Stopped));
    assert_eq!(guarded(w.ask(Job(4))), Err(AskError::Stopped));
}

#[test]
fn a_permanent_child_is_restarted_after_a_drain_and_accepts_messages_again() {
    let f = Fixture::new();
    let log = f.log.clone();
    let (tx, _rx) = mpsc::channel();
    let gate = f.gate.clone();
    let notified = f.notified.clone();
    let (_sup, w) = f
        .system
        .supervise(SupervisorSpec::new(Strategy::OneForOne), move |c| {
            let (tx, gate, log, notified) =
                (tx.clone(), gate.clone(), log.clone(), notified.clone());
            c.spawn_with_restart(Restart::Permanent, move || Worker {
                entered: tx.clone(),
                gate: gate.clone(),
                log: log.clone(),
                notified: notified.clone(),
            })
        });
    w.tell(Job(1)).unwrap();
    w.stop_gracefully().unwrap();
    // The restart clears the drain: a new instance answers behind the same ref.
    let deadline = std::time::Instant::now() + GUARD;
    loop {
        if f.system.block_on(w.ask(Job(2)).timeout(GUARD)) == Ok(2) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never accepted messages again"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(f.log(), vec![1, 2]);
}

// ---- ask_wait ---------------------------------------------------------------------

#[test]
fn ask_fails_at_once_on_a_full_mailbox_where_ask_wait_waits_for_room() {
    let mut f = Fixture::new();
    let w = f.held(SpawnOptions::new().bounded(1));
    w.tell(Job(1)).unwrap();
    assert_eq!(f.system.block_on(w.ask(Job(2))), Err(AskError::Full));
    let waiting = f
        .system
        .handle()
        .io()
        .spawn(w.ask_wait(Job(3)).timeout(GUARD));
    std::thread::sleep(Duration::from_millis(20));
    assert!(!waiting.is_finished(), "ask_wait did not wait for room");
    f.release();
    assert_eq!(guarded(waiting).unwrap(), Ok(3));
    assert_eq!(f.log(), vec![1, 3]);
}

#[test]
fn ask_wait_times_out_while_waiting_for_room_and_the_message_is_not_sent() {
    let mut f = Fixture::new();
    let w = f.held(SpawnOptions::new().bounded(1));
    w.tell(Job(1)).unwrap();
    let r = f
        .system
        .block_on(w.ask_wait(Job(2)).timeout(Duration::from_millis(30)));
    assert_eq!(r, Err(AskError::Timeout(Duration::from_millis(30))));
    f.release();
    assert_eq!(f.system.block_on(w.ask_wait(Job(3)).timeout(GUARD)), Ok(3));
    assert_eq!(f.log(), vec![1, 3], "the timed-out ask was delivered");
}

#[test]
fn ask_wait_fails_with_stopped_when_the_actor_stops_while_it_waits() {
    let mut f = Fixture::new();
    let w = f.held(SpawnOptions::new().bounded(1));
    w.tell(Job(1)).unwrap();
    let waiting = f
        .system
        .handle()
        .io()
        .spawn(w.ask_wait(Job(2)).timeout(GUARD));
    std::thread::sleep(Duration::from_millis(20));
    w.kill();
    assert_eq!(guarded(waiting).unwrap(), Err(AskError::Stopped));
}

#[test]
fn ask_wait_on_an_unbounded_mailbox_is_ask() {
    let mut f = Fixture::new();
    let worker = f.worker();
    let w = f.system.spawn(worker);
    assert_eq!(f.system.block_on(w.ask_wait(Job(5))), Ok(5));
}

#[tokio::test(flavor = "current_thread")]
async fn ask_wait_awaits_inside_a_current_thread_runtime() {
    let mut f = Fixture::new();
    let w = f.held(SpawnOptions::new().bounded(1));
    w.tell(Job(1)).unwrap();
    let ask = w.ask_wait(Job(2)).timeout(GUARD);
    f.release();
    assert_eq!(ask.await, Ok(2));
    assert!(f.system.shutdown_async().await);
}
