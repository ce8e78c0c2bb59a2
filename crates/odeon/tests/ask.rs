//! Request–reply: an `ask` resolves to the reply or to an `AskError`, and never hangs
//! (guarantee 7: callers of a pending ask are told when the actor fails or stops).

use std::future::Future;
use std::pin::pin;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll, Waker};
use std::time::Duration;

use odeon::{
    Actor, AskError, AsyncHandler, Context, Handler, Message, Recipient, StopReason, System,
};
use tokio::sync::Notify;

/// Long enough never to be reached by a working runtime; only turns a hang into a
/// failure.
const GUARD: Duration = Duration::from_secs(10);

fn system() -> System {
    System::builder().workers(2).ask_timeout(GUARD).build()
}

struct Calc {
    total: u64,
    entered: mpsc::Sender<()>,
    gate: Arc<Notify>,
    reasons: Arc<Mutex<Vec<StopReason>>>,
    ack: mpsc::Receiver<()>,
}

impl Actor for Calc {
    fn stopped(&mut self, reason: &StopReason) {
        self.reasons.lock().unwrap().push(reason.clone());
    }
}

struct Add(u64);
impl Message for Add {
    type Reply = u64;
}
impl Handler<Add> for Calc {
    fn handle(&mut self, msg: Add, _cx: &mut Context<Self>) -> u64 {
        self.total += msg.0;
        self.total
    }
}

/// Blocks the actor until the test opens the gate.
struct Hold;
impl Message for Hold {
    type Reply = &'static str;
}
impl AsyncHandler<Hold> for Calc {
    async fn handle(&mut self, _: Hold, _cx: &mut Context<Self>) -> &'static str {
        let _ = self.entered.send(());
        self.gate.notified().await;
        "released"
    }
}

/// Like `Hold`, but before its first `.await` it also waits (on the worker) until the
/// test says it has done something: that puts the test's action exactly inside the
/// handler's first poll, before the turn parks.
struct HoldAfterAck;
impl Message for HoldAfterAck {
    type Reply = &'static str;
}
impl AsyncHandler<HoldAfterAck> for Calc {
    async fn handle(&mut self, _: HoldAfterAck, _cx: &mut Context<Self>) -> &'static str {
        let _ = self.entered.send(());
        let _ = self.ack.recv_timeout(GUARD);
        self.gate.notified().await;
        "released"
    }
}

struct Boom;
impl Message for Boom {
    type Reply = u64;
}
impl Handler<Boom> for Calc {
    fn handle(&mut self, _: Boom, _cx: &mut Context<Self>) -> u64 {
        panic!("boom (expected by the test)");
    }
}

struct AsyncBoom;
impl Message for AsyncBoom {
    type Reply = u64;
}
impl AsyncHandler<AsyncBoom> for Calc {
    async fn handle(&mut self, _: AsyncBoom, _cx: &mut Context<Self>) -> u64 {
        tokio::task::yield_now().await;
        panic!("async boom (expected by the test)");
    }
}

struct StopNow;
impl Message for StopNow {
    type Reply = ();
}
impl Handler<StopNow> for Calc {
    fn handle(&mut self, _: StopNow, cx: &mut Context<Self>) {
        cx.stop();
    }
}

struct Fixture {
    system: System,
    entered: mpsc::Receiver<()>,
    gate: Arc<Notify>,
    reasons: Arc<Mutex<Vec<StopReason>>>,
    ack: mpsc::Sender<()>,
}

fn fixture() -> (Fixture, Calc) {
    let (tx, rx) = mpsc::channel();
    let (ack_tx, ack_rx) = mpsc::channel();
    let gate = Arc::new(Notify::new());
    let reasons = Arc::new(Mutex::new(Vec::new()));
    let calc = Calc {
        total: 0,
        entered: tx,
        gate: gate.clone(),
        reasons: reasons.clone(),
        ack: ack_rx,
    };
    (
        Fixture {
            system: system(),
            entered: rx,
            gate,
            reasons,
            ack: ack_tx,
        },
        calc,
    )
}

impl Fixture {
    fn wait_entered(&self) {
        self.entered
            .recv_timeout(GUARD)
            .expect("the gate handler never started");
    }
}

#[test]
fn an_ask_resolves_to_the_handlers_reply() {
    let (fx, calc) = fixture();
    let r = fx.system.spawn(calc);
    assert_eq!(fx.system.block_on(r.ask(Add(40))), Ok(40));
    assert_eq!(fx.system.block_on(r.ask(Add(2))), Ok(42));
}

#[test]
fn asks_from_many_threads_each_get_their_own_reply() {
    let (fx, calc) = fixture();
    let r = fx.system.spawn(calc);
    let replies: Vec<Vec<u64>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let r = r.clone();
                let system = &fx.system;
                s.spawn(move || {
                    (0..250)
                        .map(|_| system.block_on(r.ask(Add(1))).unwrap())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut all: Vec<u64> = replies.iter().flatten().copied().collect();
    for per_thread in &replies {
        assert!(
            per_thread.windows(2).all(|w| w[0] < w[1]),
            "replies out of order"
        );
    }
    all.sort_unstable();
    assert_eq!(
        all,
        (1..=1000).collect::<Vec<_>>(),
        "every ask saw its own increment"
    );
}

#[test]
fn an_ask_to_a_busy_actor_times_out_with_the_deadline_it_was_given() {
    let (fx, calc) = fixture();
    let r = fx.system.spawn(calc);
    r.tell(Hold).unwrap();
    fx.wait_entered();

    let deadline = Duration::from_millis(30);
    let res = fx.system.block_on(r.ask(Add(1)).timeout(deadline));
    assert_eq!(res, Err(AskError::Timeout(deadline)));

    // The timed-out ask's message is still handled once the actor is free; its late
    // reply is dropped without harm and the actor keeps working.
    fx.gate.notify_one();
    assert_eq!(fx.system.block_on(r.ask(Add(10))), Ok(11));
}

/// Asks `Hold` of a calculator from inside its own async handler (so on a worker
/// thread) with a timeout, and reports what the ask came to and how long it took.
struct Asker {
    target: odeon::ActorRef<Calc>,
    report: mpsc::Sender<AskerReport>,
}

/// What an `Asker`'s ask came to, and how long it took.
type AskerReport = (Result<&'static str, AskError>, Duration);
impl Actor for Asker {}
struct AskWithin(Duration);
impl Message for AskWithin {
    type Reply = ();
}
impl AsyncHandler<AskWithin> for Asker {
    async fn handle(&mut self, AskWithin(timeout): AskWithin, _cx: &mut Context<Self>) {
        let start = std::time::Instant::now();
        let res = self.target.ask(Hold).timeout(timeout).await;
        let _ = self.report.send((res, start.elapsed()));
    }
}

/// An `Asker` of `target`, and where it reports.
fn spawn_asker(
    system: &System,
    target: &odeon::ActorRef<Calc>,
) -> (odeon::ActorRef<Asker>, mpsc::Receiver<AskerReport>) {
    let (tx, rx) = mpsc::channel();
    let asker = system.spawn(Asker {
        target: target.clone(),
        report: tx,
    });
    (asker, rx)
}

#[test]
fn long_timeouts_kept_by_the_monitor_fire_neither_early_nor_never() {
    // A second or more is kept by the system's monitor thread instead of a timer per
    // ask; the deadline still counts from the first poll and is never cut short.
    let deadline = Duration::from_secs(1);
    let (fx, calc) = fixture();
    let r = fx.system.spawn(calc);
    // From outside the pool.
    let start = std::time::Instant::now();
    let res = fx
        .system
        .block_on(async { tokio::time::timeout(GUARD, r.ask(Hold).timeout(deadline)).await })
        .expect("the deadline never fired");
    assert_eq!(res, Err(AskError::Timeout(deadline)));
    assert!(
        start.elapsed() >= deadline,
        "fired early: {:?}",
        start.elapsed()
    );
    fx.wait_entered();
    // From a worker, while the target is still held by the first ask's handler.
    let (asker, rx) = spawn_asker(&fx.system, &r);
    asker.tell(AskWithin(deadline)).unwrap();
    let (res, took) = rx.recv_timeout(GUARD).expect("the asker never reported");
    assert_eq!(res, Err(AskError::Timeout(deadline)));
    assert!(took >= deadline, "fired early: {took:?}");
    // Both held handlers are released in turn and the actor works on.
    fx.gate.notify_one();
    fx.wait_entered();
    fx.gate.notify_one();
    assert_eq!(fx.system.block_on(r.ask(Add(1))), Ok(1));
}

#[test]
fn a_watched_ask_answered_in_time_gets_its_reply() {
    let (fx, calc) = fixture();
    let r = fx.system.spawn(calc);
    let (asker, rx) = spawn_asker(&fx.system, &r);
    asker.tell(AskWithin(Duration::from_secs(5))).unwrap();
    fx.wait_entered();
    fx.gate.notify_one();
    let (res, _) = rx.recv_timeout(GUARD).expect("the asker never reported");
    assert_eq!(res, Ok("released"));
}

#[test]
fn an_ask_whose_async_handler_does_not_finish_in_time_times_out() {
    let (fx, calc) = fixture();
    let r = fx.system.spawn(calc);
    let deadline = Duration::from_millis(20);
    let res = fx.system.block_on(r.ask(Hold).timeout(deadline));
    assert_eq!(res, Err(AskError::Timeout(deadline)));
    fx.wait_entered();
    fx.gate.notify_one();
    // The suspended handler still completes once released, and the actor moves on.
    assert_eq!(fx.system.block_on(r.ask(Add(1))), Ok(1));
}

#[test]
fn an_ask_to_a_stopped_actor_fails_with_stopped_on_its_first_poll() {
    let (fx, calc) = fixture();
    let r = fx.system.spawn(calc);
    r.stop();
    fx.system.run_until_quiescent();
    assert!(!r.is_alive());

    let mut ask = pin!(r.ask(Add(1)));
    let mut cx = TaskContext::from_waker(Waker::noop());
    assert_eq!(
        ask.as_mut().poll(&mut cx),
        Poll::Ready(Err(AskError::Stopped))
    );
    assert_eq!(*fx.reasons.lock().unwrap(), vec![StopReason::Normal]);
}

#[test]
fn an_ask_whose_handler_panics_fails_with_panicked() {
    let (fx, calc) = fixture();
    let r = fx.system.spawn(calc);
    assert_eq!(fx.system.block_on(r.ask(Add(1))), Ok(1));
    assert_eq!(fx.system.block_on(r.ask(Boom)), Err(AskError::Panicked));
    fx.system.run_until_quiescent();
    assert!(!r.is_alive(), "a panic fails the actor");
    let reasons = fx.reasons.lock().unwrap().clone();
    assert!(
        matches!(reasons.as_slice(), [StopReason::Panicked(m)] if m.contains("boom")),
        "{reasons:?}"
    );
}

#[test]
fn an_ask_whose_async_handler_panics_fails_with_panicked() {
    let (fx, calc) = fixture();
    let r = fx.system.spawn(calc);
    assert_eq!(
        fx.system.block_on(r.ask(AsyncBoom)),
        Err(AskError::Panicked)
    );
    fx.system.run_until_quiescent();
    assert!(!r.is_alive());
    let reasons = fx.reasons.lock().unwrap().clone();
    assert!(
        matches!(reasons.as_slice(), [StopReason::Panicked(m)] if m.contains("async boom")),
        "{reasons:?}"
    );
}

#[test]
fn asks_queued_behind_a_message_that_stops_the_actor_fail_with_stopped() {
    let (fx, calc) = fixture();
    let r = fx.system.spawn(calc);
    r.tell(Hold).unwrap();
    fx.wait_entered();
    r.tell(StopNow).unwrap();
    let asks: Vec<_> = (0..10).map(|i| r.ask(Add(i))).collect();
    fx.gate.notify_one();
    for ask in asks {
        assert_eq!(fx.system.block_on(ask), Err(AskError::Stopped));
    }
    fx.system.run_until_quiescent();
    assert_eq!(*fx.reasons.lock().unwrap(), vec![StopReason::Normal]);
}

#[test]
fn pending_asks_fail_with_stopped_when_the_actor_is_killed_from_outside() {
    let (fx, calc) = fixture();
    let r = fx.system.spawn(calc);
    let held = r.ask(Hold).timeout(Duration::from_secs(3));
    fx.wait_entered();
    let asks: Vec<_> = (0..10)
        .map(|i| r.ask(Add(i)).timeout(Duration::from_secs(3)))
        .collect();
    r.kill();
    assert_eq!(
        fx.system.block_on(held),
        Err(AskError::Stopped),
        "the ask whose async handler was interrupted"
    );
    for ask in asks {
        assert_eq!(fx.system.block_on(ask), Err(AskError::Stopped));
    }
}

#[test]
fn a_kill_requested_while_an_async_handler_is_being_first_polled_is_not_lost() {
    let (fx, calc) = fixture();
    let r = fx.system.spawn(calc);
    // A shorter guard than usual: a lost kill only shows up as a missing reply.
    let held = r.ask(HoldAfterAck).timeout(Duration::from_secs(3));
    fx.wait_entered();
    // The handler is inside its first poll: the kill arrives before the turn parks.
    r.kill();
    let queued = r.ask(Add(1));
    fx.ack.send(()).unwrap();
    assert_eq!(
        fx.system.block_on(held),
        Err(AskError::Stopped),
        "the kill request was lost: the actor parked with its handler still pending"
    );
    assert_eq!(fx.system.block_on(queued), Err(AskError::Stopped));
    assert!(fx.system.wait_quiescent(Some(GUARD)));
    assert!(!r.is_alive());
    assert_eq!(*fx.reasons.lock().unwrap(), vec![StopReason::Killed]);
}

#[test]
fn an_ask_through_a_recipient_resolves_to_the_reply() {
    let (fx, calc) = fixture();
    let r = fx.system.spawn(calc);
    let rec: Recipient<Add> = r.recipient();
    assert_eq!(fx.system.block_on(rec.ask(Add(5))), Ok(5));
    let rec2 = rec.clone();
    assert_eq!(fx.system.block_on(rec2.ask(Add(5))), Ok(10));
    assert_eq!(rec.id(), r.id());
    r.stop();
    fx.system.run_until_quiescent();
    assert_eq!(fx.system.block_on(rec.ask(Add(1))), Err(AskError::Stopped));
}

/// An actor that asks another actor from an async handler.
struct Proxy {
    target: Recipient<Add>,
}
impl Actor for Proxy {}

struct Forward(u64);
impl Message for Forward {
    type Reply = Result<u64, AskError>;
}
impl AsyncHandler<Forward> for Proxy {
    async fn handle(&mut self, msg: Forward, _cx: &mut Context<Self>) -> Result<u64, AskError> {
        self.target.ask(Add(msg.0)).await
    }
}

#[test]
fn an_actor_can_ask_another_actor_and_relay_its_reply() {
    let (fx, calc) = fixture();
    let target = fx.system.spawn(calc);
    let proxy = fx.system.spawn(Proxy {
        target: target.recipient(),
    });
    assert_eq!(fx.system.block_on(proxy.ask(Forward(3))), Ok(Ok(3)));
    target.stop();
    fx.system.run_until_quiescent();
    assert_eq!(
        fx.system.block_on(proxy.ask(Forward(3))),
        Ok(Err(AskError::Stopped))
    );
}
