//! `stop` versus `kill` while an async handler awaits: a stop lets the handler finish
//! (its side effects happen, its reply is sent) and then stops; a kill drops the
//! handler's future at its `.await` and stops at once. Children follow their parent:
//! stopped by a stop, killed by a kill. Shutdown kills.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use odeon::{
    Actor, ActorRef, AskError, AsyncHandler, Context, Handler, Message, StopReason, System,
};
use tokio::sync::oneshot;

const HANG_GUARD: Duration = Duration::from_secs(10);

fn small_system() -> System {
    System::builder().workers(2).build()
}

/// Waits until `cond` holds; fails the test after `HANG_GUARD`.
fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < HANG_GUARD,
            "timed out waiting for: {what}"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// What the tests observe, in order.
#[derive(Debug, PartialEq)]
enum Event {
    Entered(&'static str),
    Done(&'static str),
    Stopped(&'static str, StopReason),
}

struct Worker {
    name: &'static str,
    events: mpsc::Sender<Event>,
    /// A child spawned in `started` when set, awaiting its own gate.
    child_gate: Option<oneshot::Receiver<()>>,
}
impl Actor for Worker {
    fn started(&mut self, cx: &mut Context<Self>) {
        if let Some(gate) = self.child_gate.take() {
            let child = cx.spawn(Worker {
                name: "child",
                events: self.events.clone(),
                child_gate: None,
            });
            child.tell(Await(gate)).unwrap();
        }
    }

    fn stopped(&mut self, reason: &StopReason) {
        let _ = self.events.send(Event::Stopped(self.name, reason.clone()));
    }
}

/// Awaits the gate, then records `Done` (the handler's side effect) and replies.
struct Await(oneshot::Receiver<()>);
impl Message for Await {
    type Reply = &'static str;
}
impl AsyncHandler<Await> for Worker {
    async fn handle(&mut self, msg: Await, _: &mut Context<Self>) -> &'static str {
        let _ = self.events.send(Event::Entered(self.name));
        let _ = msg.0.await;
        let _ = self.events.send(Event::Done(self.name));
        "finished"
    }
}

struct Ping;
impl Message for Ping {
    type Reply = ();
}
impl Handler<Ping> for Worker {
    fn handle(&mut self, _: Ping, _: &mut Context<Self>) {}
}

fn worker(name: &'static str, events: &mpsc::Sender<Event>) -> Worker {
    Worker {
        name,
        events: events.clone(),
        child_gate: None,
    }
}

fn next(events: &mpsc::Receiver<Event>) -> Event {
    events
        .recv_timeout(HANG_GUARD)
        .expect("an expected event never came")
}

#[test]
fn stop_during_an_await_lets_the_handler_finish_and_reply_then_stops() {
    let system = small_system();
    let (tx, events) = mpsc::channel();
    let r = system.spawn(worker("w", &tx));
    let (open, gate) = oneshot::channel();
    let reply = r.ask(Await(gate)).timeout(HANG_GUARD);
    assert_eq!(next(&events), Event::Entered("w"));
    // Parked in the handler: let the turn end before the stop comes.
    std::thread::sleep(Duration::from_millis(20));

    r.stop();
    let queued = r.ask(Ping);
    // Still waiting for its handler: the stop must not have cancelled it.
    std::thread::sleep(Duration::from_millis(50));
    assert!(r.is_alive(), "stopped before its handler finished");
    open.send(())
        .expect("the handler's future was dropped by stop()");

    assert_eq!(system.block_on(reply), Ok("finished"), "its reply is sent");
    assert_eq!(next(&events), Event::Done("w"));
    assert_eq!(next(&events), Event::Stopped("w", StopReason::Normal));
    assert_eq!(
        system.block_on(queued),
        Err(AskError::Stopped),
        "messages queued behind the stop are not handled"
    );
    assert!(!r.is_alive());
}

#[test]
fn kill_during_an_await_drops_the_handler_and_stops_at_once() {
    let system = small_system();
    let (tx, events) = mpsc::channel();
    let r = system.spawn(worker("w", &tx));
    let (open, gate) = oneshot::channel();
    let reply = r.ask(Await(gate)).timeout(HANG_GUARD);
    assert_eq!(next(&events), Event::Entered("w"));
    std::thread::sleep(Duration::from_millis(20));

    r.kill();
    assert_eq!(next(&events), Event::Stopped("w", StopReason::Killed));
    eventually("the killed actor is stopped", || !r.is_alive());
    assert_eq!(system.block_on(reply), Err(AskError::Stopped));
    assert!(
        open.send(()).is_err(),
        "the handler's future (which holds the gate) was not dropped"
    );
    std::thread::sleep(Duration::from_millis(50));
    assert!(
        events.try_recv().is_err(),
        "the killed handler must never complete"
    );
}

#[test]
fn kill_after_stop_still_cancels_the_awaiting_handler() {
    let system = small_system();
    let (tx, events) = mpsc::channel();
    let r = system.spawn(worker("w", &tx));
    let (open, gate) = oneshot::channel();
    r.tell(Await(gate)).unwrap();
    assert_eq!(next(&events), Event::Entered("w"));
    r.stop();
    r.kill();
    // The first request's reason is kept.
    assert_eq!(next(&events), Event::Stopped("w", StopReason::Normal));
    assert!(open.send(()).is_err());
    assert!(system.wait_quiescent(Some(HANG_GUARD)));
}

fn parent_with_awaiting_child(
    system: &System,
    tx: &mpsc::Sender<Event>,
) -> (ActorRef<Worker>, oneshot::Sender<()>) {
    let (open, gate) = oneshot::channel();
    let parent = system.spawn(Worker {
        name: "parent",
        events: tx.clone(),
        child_gate: Some(gate),
    });
    (parent, open)
}

#[test]
fn stopping_a_parent_lets_its_awaiting_child_finish() {
    let system = small_system();
    let (tx, events) = mpsc::channel();
    let (parent, open) = parent_with_awaiting_child(&system, &tx);
    assert_eq!(next(&events), Event::Entered("child"));
    parent.stop();
    assert_eq!(next(&events), Event::Stopped("parent", StopReason::Normal));
    open.send(()).expect("the child's handler was cancelled");
    assert_eq!(next(&events), Event::Done("child"));
    assert_eq!(
        next(&events),
        Event::Stopped("child", StopReason::ParentStopped)
    );
}

#[test]
fn killing_a_parent_kills_its_awaiting_child() {
    let system = small_system();
    let (tx, events) = mpsc::channel();
    let (parent, open) = parent_with_awaiting_child(&system, &tx);
    assert_eq!(next(&events), Event::Entered("child"));
    parent.kill();
    let mut stops = vec![next(&events), next(&events)];
    stops.sort_by_key(|e| format!("{e:?}"));
    assert_eq!(
        stops,
        [
            Event::Stopped("child", StopReason::ParentStopped),
            Event::Stopped("parent", StopReason::Killed),
        ]
    );
    assert!(
        open.send(()).is_err(),
        "the child's handler was not dropped"
    );
}

#[test]
fn shutdown_cancels_an_awaiting_handler_instead_of_timing_out() {
    let system = System::builder()
        .workers(2)
        .shutdown_timeout(Duration::from_secs(30))
        .build();
    let (tx, events) = mpsc::channel();
    let r = system.spawn(worker("w", &tx));
    let (open, gate) = oneshot::channel();
    r.tell(Await(gate)).unwrap();
    assert_eq!(next(&events), Event::Entered("w"));
    assert!(system.shutdown(), "every actor stopped");
    assert_eq!(next(&events), Event::Stopped("w", StopReason::Shutdown));
    assert!(open.send(()).is_err());
}
