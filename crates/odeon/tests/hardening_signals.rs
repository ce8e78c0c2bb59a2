//! Runtime signals are never refused by a bounded mailbox (guarantee 7: failure is
//! visible). Each test fills an actor's bounded mailbox while its handler is blocked on
//! a gate, then makes the runtime send it a signal: a `Terminated` from a watch, a
//! linked actor's failure, a supervisor's restart, the GC's check.

use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use odeon::{
    Actor, ActorId, ActorRef, Context, Handler, Message, SpawnOptions, StopReason, Strategy,
    SupervisorSpec, System, TellError, Terminated,
};

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

/// A gate a handler blocks on until the test opens it.
#[derive(Clone)]
struct Gate {
    entered: mpsc::SyncSender<()>,
    open: Arc<Mutex<mpsc::Receiver<()>>>,
}

struct GateCtl {
    entered: mpsc::Receiver<()>,
    open: mpsc::Sender<()>,
}

fn gate() -> (Gate, GateCtl) {
    let (entered_tx, entered) = mpsc::sync_channel(16);
    let (open, open_rx) = mpsc::channel();
    (
        Gate {
            entered: entered_tx,
            open: Arc::new(Mutex::new(open_rx)),
        },
        GateCtl { entered, open },
    )
}

impl Gate {
    fn pass(&self) {
        let _ = self.entered.send(());
        let _ = self.open.lock().unwrap().recv_timeout(HANG_GUARD);
    }
}

impl GateCtl {
    fn wait_entered(&self) {
        self.entered
            .recv_timeout(HANG_GUARD)
            .expect("the handler never reached the gate");
    }

    fn open(&self) {
        self.open.send(()).unwrap();
    }
}

/// Blocks the actor on its gate.
struct Block;
impl Message for Block {
    type Reply = ();
}

/// Takes a mailbox slot; does nothing.
#[derive(Debug)]
struct Filler;
impl Message for Filler {
    type Reply = ();
}

/// Starts watching an actor.
struct WatchIt(ActorRef<Quiet>);
impl Message for WatchIt {
    type Reply = ();
}

/// An actor with nothing to do.
struct Quiet;
impl Actor for Quiet {}

/// Watches actors; reports every `Terminated` it handles. Bounded in the tests.
struct Watcher {
    gate: Gate,
    seen: mpsc::Sender<Terminated>,
}
impl Actor for Watcher {}
impl Handler<Block> for Watcher {
    fn handle(&mut self, _: Block, _: &mut Context<Self>) {
        self.gate.pass();
    }
}
impl Handler<Filler> for Watcher {
    fn handle(&mut self, _: Filler, _: &mut Context<Self>) {}
}
impl Handler<WatchIt> for Watcher {
    fn handle(&mut self, msg: WatchIt, cx: &mut Context<Self>) {
        cx.watch(&msg.0);
    }
}
impl Handler<Terminated> for Watcher {
    fn handle(&mut self, t: Terminated, _: &mut Context<Self>) {
        let _ = self.seen.send(t);
    }
}

/// Fills a bounded mailbox whose actor is blocked in a handler: tells until one is
/// refused as full (which proves the mailbox is full), within a sane number of tries.
fn fill<A: Handler<Filler>>(r: &ActorRef<A>) {
    for _ in 0..1024 {
        if let Err(TellError::Full(Filler)) = r.tell(Filler) {
            return;
        }
    }
    panic!("the bounded mailbox never filled up");
}

#[test]
fn a_watcher_with_a_full_bounded_mailbox_still_receives_terminated() {
    let system = small_system();
    let (g, ctl) = gate();
    let (seen_tx, seen) = mpsc::channel();
    let watcher = system.spawn_with(
        Watcher {
            gate: g.clone(),
            seen: seen_tx,
        },
        SpawnOptions::new().bounded(1),
    );
    // A second, unbounded watcher registered after the first: watchers are told in
    // registration order, so once it has heard, the first one's notice was sent.
    let (witness_gate, _witness_ctl) = gate();
    let (witness_tx, witness_seen) = mpsc::channel();
    let witness = system.spawn(Watcher {
        gate: witness_gate,
        seen: witness_tx,
    });

    let watched = system.spawn(Quiet);
    system
        .block_on(watcher.ask(WatchIt(watched.clone())))
        .unwrap();
    system
        .block_on(witness.ask(WatchIt(watched.clone())))
        .unwrap();

    watcher.tell(Block).unwrap();
    ctl.wait_entered();
    fill(&watcher);

    watched.stop();
    let t = witness_seen.recv_timeout(HANG_GUARD).expect("witness told");
    assert_eq!(t.id, watched.id());
    // The bounded watcher's notice was sent while its mailbox was full.
    ctl.open();
    let t = seen
        .recv_timeout(HANG_GUARD)
        .expect("the Terminated was dropped because the watcher's mailbox was full");
    assert_eq!((t.id, t.reason), (watched.id(), StopReason::Normal));

    // The notice took no slot and gave none back: the bound is still exactly 1.
    watcher.tell(Block).unwrap();
    ctl.wait_entered();
    assert!(watcher.tell(Filler).is_ok(), "one slot while blocked");
    assert!(
        matches!(watcher.tell(Filler), Err(TellError::Full(Filler))),
        "the notice inflated the mailbox's bound"
    );
    ctl.open();
    assert!(system.wait_quiescent(Some(HANG_GUARD)));
}

#[test]
fn terminated_notices_to_a_full_watcher_of_many_actors_are_all_delivered() {
    const N: usize = 50;
    let system = small_system();
    let (g, ctl) = gate();
    let (seen_tx, seen) = mpsc::channel();
    let watcher = system.spawn_with(
        Watcher {
            gate: g,
            seen: seen_tx,
        },
        SpawnOptions::new().bounded(2),
    );
    let watched: Vec<ActorRef<Quiet>> = (0..N).map(|_| system.spawn(Quiet)).collect();
    for w in &watched {
        system.block_on(watcher.ask(WatchIt(w.clone()))).unwrap();
    }
    watcher.tell(Block).unwrap();
    ctl.wait_entered();
    fill(&watcher);
    for w in &watched {
        w.stop();
    }
    eventually("every watched actor stopped", || {
        watched.iter().all(|w| !w.is_alive())
    });
    ctl.open();
    let mut ids: Vec<ActorId> = (0..N)
        .map(|_| {
            seen.recv_timeout(HANG_GUARD)
                .expect("a Terminated was lost")
                .id
        })
        .collect();
    let mut expected: Vec<ActorId> = watched.iter().map(|w| w.id()).collect();
    ids.sort_by_key(|id| id.as_u64());
    expected.sort_by_key(|id| id.as_u64());
    assert_eq!(ids, expected);
}

/// Linked actors: records why it stopped; can crash.
struct Linked {
    gate: Gate,
    stopped: mpsc::Sender<StopReason>,
}
impl Actor for Linked {
    fn stopped(&mut self, reason: &StopReason) {
        let _ = self.stopped.send(reason.clone());
    }
}
impl Handler<Block> for Linked {
    fn handle(&mut self, _: Block, _: &mut Context<Self>) {
        self.gate.pass();
    }
}
impl Handler<Filler> for Linked {
    fn handle(&mut self, _: Filler, _: &mut Context<Self>) {}
}
struct LinkTo(ActorRef<Linked>);
impl Message for LinkTo {
    type Reply = ();
}
impl Handler<LinkTo> for Linked {
    fn handle(&mut self, msg: LinkTo, cx: &mut Context<Self>) {
        cx.link(&msg.0);
    }
}
struct Crash;
impl Message for Crash {
    type Reply = ();
}
impl Handler<Crash> for Linked {
    fn handle(&mut self, _: Crash, _: &mut Context<Self>) {
        panic!("crash on purpose");
    }
}

#[test]
fn a_linked_actor_with_a_full_bounded_mailbox_still_stops_when_its_peer_fails() {
    let system = small_system();
    let (g, ctl) = gate();
    let (stopped_tx, stopped) = mpsc::channel();
    let full = system.spawn_with(
        Linked {
            gate: g.clone(),
            stopped: stopped_tx.clone(),
        },
        SpawnOptions::new().bounded(1),
    );
    let crasher = system.spawn(Linked {
        gate: g,
        stopped: stopped_tx,
    });
    system.block_on(full.ask(LinkTo(crasher.clone()))).unwrap();

    full.tell(Block).unwrap();
    ctl.wait_entered();
    fill(&full);
    crasher.tell(Crash).unwrap();
    let first = stopped.recv_timeout(HANG_GUARD).expect("crasher stopped");
    assert!(matches!(first, StopReason::Panicked(_)), "{first:?}");
    ctl.open();
    let second = stopped
        .recv_timeout(HANG_GUARD)
        .expect("the link failure was lost on a full mailbox");
    assert_eq!(second, StopReason::LinkFailed(crasher.id()));
    // The `stopped` hook runs just before the actor is marked stopped.
    eventually("the linked actor is stopped", || !full.is_alive());
}

/// A supervised child that counts the messages its current instance handled.
struct Child {
    gate: Gate,
    handled: u32,
}
impl Actor for Child {}
impl Handler<Block> for Child {
    fn handle(&mut self, _: Block, _: &mut Context<Self>) {
        self.gate.pass();
        panic!("fails after the gate");
    }
}
impl Handler<Filler> for Child {
    fn handle(&mut self, _: Filler, _: &mut Context<Self>) {
        self.handled += 1;
    }
}
struct Count;
impl Message for Count {
    type Reply = u32;
}
impl Handler<Count> for Child {
    fn handle(&mut self, _: Count, _: &mut Context<Self>) -> u32 {
        self.handled
    }
}

#[test]
fn a_supervised_child_with_a_full_bounded_mailbox_is_still_restarted() {
    let system = small_system();
    let (g, ctl) = gate();
    let (_sup, child) = system.supervise(SupervisorSpec::new(Strategy::OneForOne), |c| {
        c.spawn_with(
            move || Child {
                gate: g.clone(),
                handled: 0,
            },
            SpawnOptions::new().bounded(1),
        )
    });
    child.tell(Block).unwrap();
    ctl.wait_entered();
    fill(&child);
    // The handler panics once released, with the mailbox full: the supervisor's
    // restart signal must still get in.
    ctl.open();
    eventually("the child handled its held message after a restart", || {
        matches!(
            system.block_on(child.ask(Count).timeout(Duration::from_secs(5))),
            Ok(1)
        )
    });
    assert!(child.is_alive());
}

#[test]
fn an_unreferenced_actor_with_a_full_bounded_mailbox_is_still_collected() {
    let system = small_system();
    let (g, ctl) = gate();
    let (seen_tx, _seen) = mpsc::channel();
    let r = system.spawn_with(
        Watcher {
            gate: g,
            seen: seen_tx,
        },
        SpawnOptions::new().bounded(1),
    );
    r.tell(Block).unwrap();
    ctl.wait_entered();
    fill(&r);
    let weak = r.downgrade();
    drop(r);
    ctl.open();
    eventually("the actor was collected", || weak.upgrade().is_none());
}
