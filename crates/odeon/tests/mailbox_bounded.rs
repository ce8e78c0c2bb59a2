//! Bounded mailboxes (backpressure): `tell` to a full mailbox fails and gives the
//! message back, `send(..).await` waits for room, and the default unbounded mailbox
//! never reports `Full`.
//!
//! Every test blocks the receiver deterministically with a gate: an async handler that
//! reports it has started and then awaits a `Notify` the test releases. While the gate
//! is closed the actor handles nothing else (macro-step), so its mailbox only fills.

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Wake, Waker};
use std::time::Duration;

use odeon::{
    Actor, AskError, AsyncHandler, Context, Handler, Message, SpawnOptions, Strategy,
    SupervisorSpec, System, TellError, TimerHandle,
};
use tokio::sync::Notify;

const GUARD: Duration = Duration::from_secs(10);
/// A shorter guard against waiting forever (a few 1 ms ticks; one stop), so that a
/// failing test does not hold the file up for long.
const TICK_GUARD: Duration = Duration::from_secs(3);

#[derive(Clone, Debug, PartialEq, Eq)]
enum Event {
    GateReleased,
    Handled(u32),
}

struct Gated {
    entered: mpsc::Sender<()>,
    gate: Arc<Notify>,
    log: Arc<Mutex<Vec<Event>>>,
    ticks: usize,
    tick_tx: mpsc::Sender<usize>,
    refused: Vec<u32>,
}
impl Actor for Gated {}

/// Which deferred items a full mailbox refused.
struct Refused;
impl Message for Refused {
    type Reply = Vec<u32>;
}
impl Handler<Refused> for Gated {
    fn handle(&mut self, _: Refused, _: &mut Context<Self>) -> Vec<u32> {
        self.refused.clone()
    }
}

/// Blocks the actor until the test calls `gate.notify_one()`.
struct Hold;
impl Message for Hold {
    type Reply = ();
}
impl AsyncHandler<Hold> for Gated {
    async fn handle(&mut self, _: Hold, _cx: &mut Context<Self>) {
        let _ = self.entered.send(());
        self.gate.notified().await;
    }
}

#[derive(Debug, PartialEq, Eq)]
struct Item(u32);
impl Message for Item {
    type Reply = u32;
}
impl Handler<Item> for Gated {
    fn handle(&mut self, msg: Item, _cx: &mut Context<Self>) -> u32 {
        self.log.lock().unwrap().push(Event::Handled(msg.0));
        msg.0
    }
}

struct Fixture {
    system: System,
    entered_tx: mpsc::Sender<()>,
    entered: mpsc::Receiver<()>,
    gate: Arc<Notify>,
    log: Arc<Mutex<Vec<Event>>>,
    tick_tx: mpsc::Sender<usize>,
    ticks: mpsc::Receiver<usize>,
}

impl Fixture {
    fn new() -> (Self, Gated) {
        let system = System::builder().workers(2).build();
        let (entered_tx, entered) = mpsc::channel();
        let (tick_tx, ticks) = mpsc::channel();
        let fx = Fixture {
            system,
            entered_tx,
            entered,
            gate: Arc::new(Notify::new()),
            log: Arc::new(Mutex::new(Vec::new())),
            tick_tx,
            ticks,
        };
        let actor = fx.actor();
        (fx, actor)
    }

    /// A fresh actor wired to this fixture (also a supervisor's factory).
    fn actor(&self) -> Gated {
        Gated {
            refused: Vec::new(),
            entered: self.entered_tx.clone(),
            gate: self.gate.clone(),
            log: self.log.clone(),
            ticks: 0,
            tick_tx: self.tick_tx.clone(),
        }
    }

    /// Waits until the actor is inside `Hold` (a condition, not a duration).
    fn wait_entered(&self) {
        self.entered
            .recv_timeout(GUARD)
            .expect("the gate handler never started");
    }

    fn release(&self) {
        self.log.lock().unwrap().push(Event::GateReleased);
        self.gate.notify_one();
    }

    fn log(&self) -> Vec<Event> {
        self.log.lock().unwrap().clone()
    }
}

/// A waker that remembers whether it was woken.
struct Flag(AtomicBool);
impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
}

fn handled(log: &[Event]) -> Vec<u32> {
    log.iter()
        .filter_map(|e| match e {
            Event::Handled(n) => Some(*n),
            Event::GateReleased => None,
        })
        .collect()
}

#[test]
fn a_full_bounded_mailbox_refuses_a_tell_and_gives_the_message_back() {
    let (fx, actor) = Fixture::new();
    let r = fx.system.spawn_with(actor, SpawnOptions::new().bounded(4));
    r.tell(Hold).unwrap();
    fx.wait_entered();

    for n in 0..4 {
        assert!(r.tell(Item(n)).is_ok(), "tell {n} of 4 must fit");
    }
    match r.tell(Item(4)) {
        Err(TellError::Full(Item(4))) => {}
        other => panic!("expected Full(Item(4)), got {other:?}"),
    }
    // Still full: a second attempt fails the same way and nothing was queued.
    assert_eq!(r.tell(Item(5)).unwrap_err().into_inner(), Item(5));

    fx.release();
    fx.system.run_until_quiescent();
    assert_eq!(
        handled(&fx.log()),
        vec![0, 1, 2, 3],
        "refused messages were not queued"
    );
}

#[test]
fn a_tell_succeeds_again_once_the_actor_has_drained_its_bounded_mailbox() {
    let (fx, actor) = Fixture::new();
    let r = fx.system.spawn_with(actor, SpawnOptions::new().bounded(4));
    r.tell(Hold).unwrap();
    fx.wait_entered();
    for n in 0..4 {
        r.tell(Item(n)).unwrap();
    }
    assert!(matches!(r.tell(Item(99)), Err(TellError::Full(_))));

    fx.release();
    fx.system.run_until_quiescent();

    // Room for a full mailbox's worth again, and after draining, again.
    for round in 0..3u32 {
        r.tell(Hold).unwrap();
        fx.wait_entered();
        for n in 0..4 {
            assert!(r.tell(Item(100 * (round + 1) + n)).is_ok());
        }
        assert!(matches!(r.tell(Item(0)), Err(TellError::Full(Item(0)))));
        fx.release();
        fx.system.run_until_quiescent();
    }
    let got = handled(&fx.log());
    assert_eq!(got.len(), 16);
    assert_eq!(&got[..4], &[0, 1, 2, 3]);
    assert_eq!(&got[12..], &[300, 301, 302, 303]);
}

#[test]
fn an_ask_to_a_full_bounded_mailbox_fails_with_full() {
    let (fx, actor) = Fixture::new();
    let r = fx.system.spawn_with(actor, SpawnOptions::new().bounded(1));
    r.tell(Hold).unwrap();
    fx.wait_entered();
    r.tell(Item(1)).unwrap();
    let res = fx.system.block_on(r.ask(Item(2)));
    assert_eq!(res, Err(AskError::Full));
    fx.release();
    fx.system.run_until_quiescent();
    assert_eq!(fx.system.block_on(r.ask(Item(3))), Ok(3));
    assert_eq!(
        handled(&fx.log()),
        vec![1, 3],
        "the refused ask was not queued"
    );
}

#[test]
fn send_waits_for_room_in_a_full_mailbox_instead_of_failing() {
    let (fx, actor) = Fixture::new();
    let r = fx.system.spawn_with(actor, SpawnOptions::new().bounded(2));
    r.tell(Hold).unwrap();
    fx.wait_entered();
    r.tell(Item(1)).unwrap();
    r.tell(Item(2)).unwrap();

    let flag = Arc::new(Flag(AtomicBool::new(false)));
    let waker = Waker::from(flag.clone());
    let mut cx = TaskContext::from_waker(&waker);
    let mut send = pin!(r.send(Item(3)));

    // The gate is closed, so the actor cannot make room: the send must keep waiting.
    for _ in 0..100 {
        assert!(
            send.as_mut().poll(&mut cx).is_pending(),
            "send completed while the mailbox was full"
        );
        std::thread::yield_now();
    }
    assert!(
        !flag.0.load(Ordering::SeqCst),
        "woken before any room was made"
    );
    assert_eq!(handled(&fx.log()), Vec::<u32>::new());

    fx.release();
    let res = fx.system.block_on(send);
    assert!(res.is_ok(), "send failed: {res:?}");
    fx.log.lock().unwrap().push(Event::Handled(1000)); // marks "send returned"
    fx.system.run_until_quiescent();

    let log = fx.log();
    let released = log.iter().position(|e| *e == Event::GateReleased).unwrap();
    let returned = log.iter().position(|e| *e == Event::Handled(1000)).unwrap();
    assert!(
        released < returned,
        "send returned before the gate opened: {log:?}"
    );
    assert_eq!(
        handled(&log)
            .into_iter()
            .filter(|n| *n != 1000)
            .collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
}

#[test]
fn a_send_waiting_for_room_fails_with_stopped_when_the_actor_stops() {
    let (fx, actor) = Fixture::new();
    let r = fx.system.spawn_with(actor, SpawnOptions::new().bounded(1));
    r.tell(Hold).unwrap();
    fx.wait_entered();
    r.tell(Item(1)).unwrap();

    let waker = Waker::from(Arc::new(Flag(AtomicBool::new(false))));
    let mut cx = TaskContext::from_waker(&waker);
    let mut send = pin!(r.send(Item(2)));
    assert!(send.as_mut().poll(&mut cx).is_pending());

    // A kill: a stop would wait for the awaiting `Hold` handler to finish.
    r.kill();
    let res = fx
        .system
        .block_on(async { tokio::time::timeout(TICK_GUARD, send).await });
    match res {
        Ok(Err(TellError::Stopped(Item(2)))) => {}
        other => panic!("expected Stopped(Item(2)), got {other:?}"),
    }
    assert!(matches!(r.tell(Item(3)), Err(TellError::Stopped(Item(3)))));
}

#[test]
fn the_default_unbounded_mailbox_never_reports_full() {
    let (fx, actor) = Fixture::new();
    let r = fx.system.spawn(actor);
    r.tell(Hold).unwrap();
    fx.wait_entered();
    for n in 0..100_000 {
        if let Err(e) = r.tell(Item(n)) {
            panic!("tell {n} to an unbounded mailbox failed: {e:?}");
        }
    }
    // `send` on an unbounded mailbox is a tell: it completes at once.
    fx.system.block_on(r.send(Item(100_000))).unwrap();
    fx.release();
    fx.system.run_until_quiescent();
    let got = handled(&fx.log());
    assert_eq!(got.len(), 100_001);
    assert!(got.iter().copied().eq(0..=100_000), "handled out of order");
}

// ---------------------------------------------------------------------------------------
// Bounded mailboxes together with the runtime's own sends (notify, timers) and restarts.

/// Tells itself one `Item` (taking the last free slot), then defers another, and
/// re-defers it later if the mailbox was full.
struct FillThenDefer;
impl Message for FillThenDefer {
    type Reply = ();
}
impl Handler<FillThenDefer> for Gated {
    fn handle(&mut self, _: FillThenDefer, cx: &mut Context<Self>) {
        cx.myself().tell(Item(1)).unwrap();
        match cx.notify(Item(2)) {
            Err(TellError::Full(Item(2))) => self.refused.push(2),
            other => panic!("a full bounded mailbox must refuse the deferred message: {other:?}"),
        }
    }
}

#[test]
fn a_deferred_message_to_a_full_bounded_mailbox_comes_back_instead_of_being_lost() {
    let (fx, actor) = Fixture::new();
    let r = fx.system.spawn_with(actor, SpawnOptions::new().bounded(1));
    r.tell(FillThenDefer).unwrap();
    fx.system.run_until_quiescent();
    assert_eq!(handled(&fx.log()), vec![1]);
    assert_eq!(fx.system.block_on(r.ask(Refused)).unwrap(), vec![2]);
}

struct Crash;
impl Message for Crash {
    type Reply = ();
}
impl Handler<Crash> for Gated {
    fn handle(&mut self, _: Crash, _cx: &mut Context<Self>) {
        panic!("crash (expected by the test)");
    }
}

#[test]
fn a_restarted_actor_gets_its_full_bounded_capacity_back() {
    let (fx, _) = Fixture::new();
    let factory_fx = (
        fx.entered_tx.clone(),
        fx.gate.clone(),
        fx.log.clone(),
        fx.tick_tx.clone(),
    );
    let (_sup, r) = fx
        .system
        .supervise(SupervisorSpec::new(Strategy::OneForOne), move |c| {
            c.spawn_with(
                move || Gated {
                    refused: Vec::new(),
                    entered: factory_fx.0.clone(),
                    gate: factory_fx.1.clone(),
                    log: factory_fx.2.clone(),
                    ticks: 0,
                    tick_tx: factory_fx.3.clone(),
                },
                SpawnOptions::new().bounded(3),
            )
        });
    r.tell(Hold).unwrap();
    fx.wait_entered();
    // Queued behind the crash, so they are held while the actor waits for its restart.
    r.tell(Crash).unwrap();
    r.tell(Item(1)).unwrap();
    r.tell(Item(2)).unwrap();
    fx.release();
    fx.system.run_until_quiescent();
    assert_eq!(
        handled(&fx.log()),
        vec![1, 2],
        "held messages handled after restart"
    );

    r.tell(Hold).unwrap();
    fx.wait_entered();
    for n in 10..13 {
        assert!(
            r.tell(Item(n)).is_ok(),
            "tell {} of 3 refused: the capacity shrank after the restart",
            n - 9
        );
    }
    assert!(matches!(r.tell(Item(99)), Err(TellError::Full(_))));
    fx.release();
    fx.system.run_until_quiescent();
}

/// A tick that counts its own drops: a tick dropped but never handled was refused.
struct Tick(Arc<AtomicUsize>);
impl Clone for Tick {
    fn clone(&self) -> Self {
        Tick(self.0.clone())
    }
}
impl Drop for Tick {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}
impl Message for Tick {
    type Reply = ();
}
impl Handler<Tick> for Gated {
    fn handle(&mut self, _: Tick, _cx: &mut Context<Self>) {
        self.ticks += 1;
        let _ = self.tick_tx.send(self.ticks);
    }
}

struct Every(Duration, Tick);
impl Message for Every {
    type Reply = TimerHandle;
}
impl Handler<Every> for Gated {
    fn handle(&mut self, Every(period, tick): Every, cx: &mut Context<Self>) -> TimerHandle {
        cx.send_interval(period, tick)
    }
}

#[test]
fn an_interval_timer_keeps_ticking_after_meeting_a_full_bounded_mailbox() {
    let (fx, actor) = Fixture::new();
    let r = fx.system.spawn_with(actor, SpawnOptions::new().bounded(2));
    let drops = Arc::new(AtomicUsize::new(0));
    let timer = fx
        .system
        .block_on(r.ask(Every(Duration::from_millis(1), Tick(drops.clone()))))
        .unwrap();

    r.tell(Hold).unwrap();
    fx.wait_entered();
    let mut handled_at_gate = 0;
    while let Ok(n) = fx.ticks.try_recv() {
        handled_at_gate = n;
    }
    // The gated actor's mailbox fills up (with ticks, or with our items).
    let waiting_since = std::time::Instant::now();
    while r.tell(Item(7)).is_ok() {
        assert!(
            waiting_since.elapsed() < GUARD,
            "the mailbox never filled up"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    fx.release();

    // The interval waited for room instead of giving up: ticks keep coming.
    let want = handled_at_gate + 3;
    loop {
        match fx.ticks.recv_timeout(TICK_GUARD) {
            Ok(n) if n >= want => break,
            Ok(_) => {}
            Err(_) => {
                panic!(
                    "the interval stopped for good after meeting a full mailbox (wanted {want} ticks)"
                )
            }
        }
    }
    timer.cancel();
    assert!(fx.system.wait_quiescent(Some(GUARD)));
}
