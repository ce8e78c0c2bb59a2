//! What a handler can do through its `Context`: timers (`send_after`, `send_interval`,
//! cancelling), stashing (`stash`, `unstash_all`, `stashed`) and `notify`.
//!
//! Timers are checked by counts and by event order, never by how long anything took:
//! an armed timer counts as work in flight, so `run_until_quiescent` returns only once
//! it has fired (or was cancelled) and its message was handled.

use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use odeon::{Actor, AsyncHandler, Context, Handler, Message, System, TimerHandle};
use tokio::sync::Notify;

/// Only turns a hang into a failure; a working runtime never gets near it.
const GUARD: Duration = Duration::from_secs(10);

fn system() -> System {
    System::builder().workers(2).build()
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Ev {
    Tick,
    Probe,
    Item(u32),
    Opened { stashed: usize },
    Deferred(u32),
}

type Log = Arc<Mutex<Vec<Ev>>>;

fn count(log: &Log, ev: &Ev) -> usize {
    log.lock().unwrap().iter().filter(|e| *e == ev).count()
}

struct Clock {
    log: Log,
    /// Told once the actor has seen `notify_at` ticks.
    reached: Option<(usize, mpsc::Sender<()>)>,
    ticks: usize,
}

impl Clock {
    fn new(log: &Log) -> Self {
        Clock {
            log: log.clone(),
            reached: None,
            ticks: 0,
        }
    }
}
impl Actor for Clock {}

#[derive(Clone)]
struct Tick;
impl Message for Tick {
    type Reply = ();
}
impl Handler<Tick> for Clock {
    fn handle(&mut self, _: Tick, _cx: &mut Context<Self>) {
        self.log.lock().unwrap().push(Ev::Tick);
        self.ticks += 1;
        if let Some((at, tx)) = &self.reached {
            if self.ticks == *at {
                let _ = tx.send(());
            }
        }
    }
}

struct Probe;
impl Message for Probe {
    type Reply = ();
}
impl Handler<Probe> for Clock {
    fn handle(&mut self, _: Probe, _cx: &mut Context<Self>) {
        self.log.lock().unwrap().push(Ev::Probe);
    }
}

/// Arms a one-shot `Tick` after the given delay, optionally cancelling it at once and
/// arming a `Probe` after a later delay.
struct After {
    tick_in: Duration,
    cancel: bool,
    probe_in: Option<Duration>,
}
impl Message for After {
    type Reply = TimerHandle;
}
impl Handler<After> for Clock {
    fn handle(&mut self, msg: After, cx: &mut Context<Self>) -> TimerHandle {
        let h = cx.send_after(msg.tick_in, Tick);
        if msg.cancel {
            h.cancel();
        }
        if let Some(d) = msg.probe_in {
            cx.send_after(d, Probe);
        }
        h
    }
}

struct Every(Duration);
impl Message for Every {
    type Reply = TimerHandle;
}
impl Handler<Every> for Clock {
    fn handle(&mut self, Every(period): Every, cx: &mut Context<Self>) -> TimerHandle {
        cx.send_interval(period, Tick)
    }
}

struct ProbeAfter(Duration);
impl Message for ProbeAfter {
    type Reply = ();
}
impl Handler<ProbeAfter> for Clock {
    fn handle(&mut self, ProbeAfter(d): ProbeAfter, cx: &mut Context<Self>) {
        cx.send_after(d, Probe);
    }
}

#[test]
fn send_after_delivers_its_message_exactly_once() {
    let system = system();
    let log: Log = Log::default();
    let clock = system.spawn(Clock::new(&log));
    let h = system
        .block_on(clock.ask(After {
            tick_in: Duration::from_millis(5),
            cancel: false,
            probe_in: None,
        }))
        .unwrap();
    assert!(
        system.wait_quiescent(Some(GUARD)),
        "the timer never finished"
    );
    assert!(h.is_finished());
    assert_eq!(*log.lock().unwrap(), vec![Ev::Tick]);

    // Much later (another timer fired in between) there is still exactly one tick.
    system
        .block_on(clock.ask(ProbeAfter(Duration::from_millis(20))))
        .unwrap();
    assert!(system.wait_quiescent(Some(GUARD)));
    assert_eq!(*log.lock().unwrap(), vec![Ev::Tick, Ev::Probe]);
}

#[test]
fn a_pending_timer_keeps_an_otherwise_unreferenced_actor_alive_until_it_fires() {
    let system = system();
    let log: Log = Log::default();
    let clock = system.spawn(Clock::new(&log));
    clock
        .tell(After {
            tick_in: Duration::from_millis(10),
            cancel: false,
            probe_in: None,
        })
        .unwrap();
    drop(clock);
    assert!(system.wait_quiescent(Some(GUARD)));
    assert_eq!(*log.lock().unwrap(), vec![Ev::Tick]);
    assert_eq!(
        system.live_actors(),
        0,
        "collected once the timer released it"
    );
}

#[test]
fn send_interval_delivers_repeatedly_until_cancelled_and_then_stops() {
    let system = system();
    let log: Log = Log::default();
    let (tx, rx) = mpsc::channel();
    let mut clock = Clock::new(&log);
    clock.reached = Some((3, tx));
    let clock = system.spawn(clock);

    let h = system
        .block_on(clock.ask(Every(Duration::from_millis(2))))
        .unwrap();
    rx.recv_timeout(GUARD)
        .expect("the interval did not deliver three ticks");
    assert!(
        !h.is_finished(),
        "an interval keeps running until cancelled"
    );
    h.cancel();
    // Quiescence is only reached once the cancelled interval is gone.
    assert!(
        system.wait_quiescent(Some(GUARD)),
        "the cancelled interval still counts as armed"
    );
    let after_cancel = count(&log, &Ev::Tick);
    assert!(after_cancel >= 3, "only {after_cancel} ticks");

    // Let many periods pass (measured by another timer, not by the test's clock):
    // no further tick arrives.
    system
        .block_on(clock.ask(ProbeAfter(Duration::from_millis(30))))
        .unwrap();
    assert!(system.wait_quiescent(Some(GUARD)));
    assert_eq!(count(&log, &Ev::Probe), 1);
    assert_eq!(count(&log, &Ev::Tick), after_cancel, "ticks after cancel");
    assert_eq!(log.lock().unwrap().last(), Some(&Ev::Probe));
}

#[test]
fn a_timer_cancelled_before_it_fires_delivers_nothing_and_no_longer_counts_as_armed() {
    let system = system();
    let log: Log = Log::default();
    let clock = system.spawn(Clock::new(&log));
    // The tick is due far in the future, so the cancel certainly comes first; had the
    // cancel not worked, the armed timer would keep the system from quiescence.
    let h = system
        .block_on(clock.ask(After {
            tick_in: Duration::from_secs(3600),
            cancel: true,
            probe_in: Some(Duration::from_millis(10)),
        }))
        .unwrap();
    assert!(
        system.wait_quiescent(Some(GUARD)),
        "a cancelled timer still counted as armed"
    );
    assert!(h.is_finished());
    assert_eq!(
        *log.lock().unwrap(),
        vec![Ev::Probe],
        "only the probe arrived"
    );
}

#[test]
fn stopping_an_actor_cancels_its_interval() {
    let system = system();
    let log: Log = Log::default();
    let (tx, rx) = mpsc::channel();
    let mut clock = Clock::new(&log);
    clock.reached = Some((2, tx));
    let clock = system.spawn(clock);
    let h = system
        .block_on(clock.ask(Every(Duration::from_millis(2))))
        .unwrap();
    rx.recv_timeout(GUARD).expect("no ticks");
    clock.stop();
    assert!(
        system.wait_quiescent(Some(GUARD)),
        "the interval outlived its actor"
    );
    assert!(h.is_finished());
    assert!(!clock.is_alive());
}

// ---------------------------------------------------------------------------------------
// Stash and notify. A gate holds the actor while the test fills its mailbox, so that
// "newer mail" is really queued when the stash is replayed.

struct Door {
    open: bool,
    log: Log,
    gate: Arc<Notify>,
    entered: mpsc::Sender<()>,
}
impl Actor for Door {}

struct Hold;
impl Message for Hold {
    type Reply = ();
}
impl AsyncHandler<Hold> for Door {
    async fn handle(&mut self, _: Hold, _cx: &mut Context<Self>) {
        let _ = self.entered.send(());
        self.gate.notified().await;
    }
}

struct Item(u32);
impl Message for Item {
    type Reply = ();
}
impl Handler<Item> for Door {
    fn handle(&mut self, Item(n): Item, cx: &mut Context<Self>) {
        if self.open {
            self.log.lock().unwrap().push(Ev::Item(n));
        } else {
            cx.stash(Item(n));
        }
    }
}

struct Open;
impl Message for Open {
    type Reply = ();
}
impl Handler<Open> for Door {
    fn handle(&mut self, _: Open, cx: &mut Context<Self>) {
        self.open = true;
        self.log.lock().unwrap().push(Ev::Opened {
            stashed: cx.stashed(),
        });
        cx.unstash_all();
        assert_eq!(cx.stashed(), 0);
    }
}

struct Close;
impl Message for Close {
    type Reply = ();
}
impl Handler<Close> for Door {
    fn handle(&mut self, _: Close, _cx: &mut Context<Self>) {
        self.open = false;
    }
}

/// Logs `Item(n)` now and defers `Deferred(n)` behind the mailbox.
struct DeferMe(u32);
impl Message for DeferMe {
    type Reply = ();
}
impl Handler<DeferMe> for Door {
    fn handle(&mut self, DeferMe(n): DeferMe, cx: &mut Context<Self>) {
        self.log.lock().unwrap().push(Ev::Item(n));
        cx.notify(Deferred(n)).expect("the mailbox is unbounded");
    }
}

struct Deferred(u32);
impl Message for Deferred {
    type Reply = ();
}
impl Handler<Deferred> for Door {
    fn handle(&mut self, Deferred(n): Deferred, _cx: &mut Context<Self>) {
        self.log.lock().unwrap().push(Ev::Deferred(n));
    }
}

struct DoorFixture {
    system: System,
    log: Log,
    gate: Arc<Notify>,
    entered: mpsc::Receiver<()>,
    door: odeon::ActorRef<Door>,
}

fn door(open: bool) -> DoorFixture {
    let system = system();
    let log = Log::default();
    let gate = Arc::new(Notify::new());
    let (tx, rx) = mpsc::channel();
    let door = system.spawn(Door {
        open,
        log: log.clone(),
        gate: gate.clone(),
        entered: tx,
    });
    DoorFixture {
        system,
        log,
        gate,
        entered: rx,
        door,
    }
}

impl DoorFixture {
    fn hold(&self) {
        self.door.tell(Hold).unwrap();
        self.entered
            .recv_timeout(GUARD)
            .expect("gate never entered");
    }
    fn release(&self) {
        self.gate.notify_one();
    }
}

#[test]
fn unstash_all_replays_stashed_messages_in_order_before_newer_mail() {
    let fx = door(false);
    fx.hold();
    for n in 1..=3 {
        fx.door.tell(Item(n)).unwrap();
    }
    fx.door.tell(Open).unwrap();
    for n in 4..=5 {
        fx.door.tell(Item(n)).unwrap();
    }
    fx.release();
    fx.system.run_until_quiescent();
    assert_eq!(
        *fx.log.lock().unwrap(),
        vec![
            Ev::Opened { stashed: 3 },
            Ev::Item(1),
            Ev::Item(2),
            Ev::Item(3),
            Ev::Item(4),
            Ev::Item(5),
        ]
    );
}

#[test]
fn a_message_stashed_again_after_unstashing_waits_for_the_next_unstash() {
    let fx = door(false);
    fx.hold();
    fx.door.tell(Item(1)).unwrap();
    fx.door.tell(Item(2)).unwrap();
    fx.door.tell(Open).unwrap();
    fx.door.tell(Close).unwrap(); // handled only after the replayed 1, 2
    fx.door.tell(Item(3)).unwrap();
    fx.door.tell(Item(4)).unwrap();
    fx.door.tell(Open).unwrap();
    fx.door.tell(Item(5)).unwrap();
    fx.release();
    fx.system.run_until_quiescent();
    assert_eq!(
        *fx.log.lock().unwrap(),
        vec![
            Ev::Opened { stashed: 2 },
            Ev::Item(1),
            Ev::Item(2),
            Ev::Opened { stashed: 2 },
            Ev::Item(3),
            Ev::Item(4),
            Ev::Item(5),
        ]
    );
}

#[test]
fn stashed_messages_are_dropped_when_the_actor_stops_without_unstashing() {
    let fx = door(false);
    fx.door.tell(Item(1)).unwrap();
    fx.door.tell(Item(2)).unwrap();
    fx.system.run_until_quiescent();
    fx.door.stop();
    fx.system.run_until_quiescent();
    assert!(!fx.door.is_alive());
    assert!(fx.log.lock().unwrap().is_empty());
}

#[test]
fn defer_puts_a_message_behind_everything_already_in_the_mailbox() {
    let fx = door(true);
    fx.hold();
    fx.door.tell(DeferMe(1)).unwrap();
    fx.door.tell(Item(2)).unwrap();
    fx.door.tell(DeferMe(3)).unwrap();
    fx.door.tell(Item(4)).unwrap();
    fx.release();
    fx.system.run_until_quiescent();
    assert_eq!(
        *fx.log.lock().unwrap(),
        vec![
            Ev::Item(1),
            Ev::Item(2),
            Ev::Item(3),
            Ev::Item(4),
            Ev::Deferred(1),
            Ev::Deferred(3),
        ]
    );
}

#[test]
fn a_deferred_message_does_not_keep_an_unreferenced_actor_alive_forever() {
    let fx = door(true);
    fx.door.tell(DeferMe(1)).unwrap();
    drop(fx.door);
    assert!(fx.system.wait_quiescent(Some(GUARD)));
    assert_eq!(
        *fx.log.lock().unwrap(),
        vec![Ev::Item(1), Ev::Deferred(1)],
        "the deferred message is still handled before collection"
    );
    assert_eq!(fx.system.live_actors(), 0);
}
