//! After shutdown: spawning gives a dead ref (never a zombie that swallows messages),
//! and an ask never panics in the caller's thread, whatever executor awaits it and
//! whether it was made before, during or after the system's I/O runtime shut down.

use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use odeon::{
    Actor, AskError, Context, Handler, Message, SpawnOptions, StopReason, Strategy, SupervisorSpec,
    System, TellError,
};

const HANG_GUARD: Duration = Duration::from_secs(10);

type Log = Arc<Mutex<Vec<String>>>;

/// Records its hooks.
struct Probe {
    log: Log,
}
impl Actor for Probe {
    fn started(&mut self, _: &mut Context<Self>) {
        self.log.lock().unwrap().push("started".into());
    }
    fn stopping(&mut self, _: &mut Context<Self>) {
        self.log.lock().unwrap().push("stopping".into());
    }
    fn stopped(&mut self, reason: &StopReason) {
        self.log.lock().unwrap().push(format!("stopped {reason:?}"));
    }
}

#[derive(Debug, PartialEq)]
struct Ping(u32);
impl Message for Ping {
    type Reply = u32;
}
impl Handler<Ping> for Probe {
    fn handle(&mut self, msg: Ping, _: &mut Context<Self>) -> u32 {
        msg.0
    }
}

fn probe() -> (Probe, Log) {
    let log = Log::default();
    (Probe { log: log.clone() }, log)
}

#[test]
fn an_actor_spawned_after_shutdown_is_stopped_before_spawn_returns() {
    let system = System::builder().workers(2).build();
    let handle = system.handle();
    assert!(system.shutdown());

    let (p, log) = probe();
    let r = handle.spawn(p);
    assert!(!r.is_alive(), "a zombie: spawned after shutdown but alive");
    assert_eq!(*log.lock().unwrap(), ["stopped Shutdown"]);
    assert!(matches!(r.tell(Ping(1)), Err(TellError::Stopped(Ping(1)))));
    assert_eq!(
        futures_executor::block_on(r.ask(Ping(2))),
        Err(AskError::Stopped)
    );
    // Through another executor and a later poll too.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    assert_eq!(rt.block_on(r.ask(Ping(3))), Err(AskError::Stopped));
    assert!(r.downgrade().upgrade().is_none());
}

#[test]
fn every_way_of_spawning_after_shutdown_gives_a_stopped_actor() {
    let system = System::builder().workers(2).build();
    let handle = system.handle();
    assert!(system.shutdown());

    let (p, bounded_log) = probe();
    let bounded = handle.spawn_with(p, SpawnOptions::new().bounded(4));
    let (p, blocking_log) = probe();
    let blocking = handle.spawn_with(p, SpawnOptions::new().blocking());
    let child_log = Log::default();
    let child_log2 = child_log.clone();
    let (sup, child) = handle.supervise(SupervisorSpec::new(Strategy::OneForOne), |c| {
        c.spawn(move || Probe {
            log: child_log2.clone(),
        })
    });
    for (alive, log) in [
        (bounded.is_alive(), &bounded_log),
        (blocking.is_alive(), &blocking_log),
        (child.is_alive(), &child_log),
    ] {
        assert!(!alive);
        assert_eq!(*log.lock().unwrap(), ["stopped Shutdown"]);
    }
    assert!(!sup.is_alive());
    assert!(matches!(bounded.tell(Ping(1)), Err(TellError::Stopped(_))));
    assert!(matches!(blocking.tell(Ping(1)), Err(TellError::Stopped(_))));
    assert_eq!(
        futures_executor::block_on(child.ask(Ping(1))),
        Err(AskError::Stopped)
    );
}

/// Spawns a child from a handler: shows that a `Context` spawn after shutdown (from an
/// actor stuck past the shutdown timeout) also gives a stopped actor.
struct Spawner {
    gate: Arc<Mutex<mpsc::Receiver<()>>>,
    entered: mpsc::Sender<()>,
    child: mpsc::Sender<(bool, Log)>,
}
impl Actor for Spawner {}
struct SpawnLater;
impl Message for SpawnLater {
    type Reply = ();
}
impl Handler<SpawnLater> for Spawner {
    fn handle(&mut self, _: SpawnLater, cx: &mut Context<Self>) {
        let _ = self.entered.send(());
        let _ = self.gate.lock().unwrap().recv_timeout(HANG_GUARD);
        let (p, log) = probe();
        let child = cx.spawn(p);
        let _ = self.child.send((child.is_alive(), log));
    }
}

#[test]
fn a_child_spawned_by_an_actor_stuck_past_shutdown_is_stopped_too() {
    let system = System::builder()
        .workers(2)
        .shutdown_timeout(Duration::from_millis(100))
        .build();
    let (open, gate) = mpsc::channel();
    let (entered_tx, entered) = mpsc::channel();
    let (child_tx, child) = mpsc::channel();
    let r = system.spawn(Spawner {
        gate: Arc::new(Mutex::new(gate)),
        entered: entered_tx,
        child: child_tx,
    });
    r.tell(SpawnLater).unwrap();
    entered.recv_timeout(HANG_GUARD).unwrap();
    assert!(!system.shutdown(), "the stuck actor did not stop in time");
    open.send(()).unwrap();
    let (alive, log) = child.recv_timeout(HANG_GUARD).unwrap();
    assert!(!alive);
    assert_eq!(*log.lock().unwrap(), ["stopped Shutdown"]);
}

/// Blocks its worker until released: an actor that shutdown has to abandon.
struct Stuck {
    gate: Arc<Mutex<mpsc::Receiver<()>>>,
    entered: mpsc::Sender<()>,
}
impl Actor for Stuck {}
struct Block;
impl Message for Block {
    type Reply = ();
}
impl Handler<Block> for Stuck {
    fn handle(&mut self, _: Block, _: &mut Context<Self>) {
        let _ = self.entered.send(());
        let _ = self.gate.lock().unwrap().recv_timeout(HANG_GUARD);
    }
}
impl Handler<Ping> for Stuck {
    fn handle(&mut self, msg: Ping, _: &mut Context<Self>) -> u32 {
        msg.0
    }
}

/// A system whose only actor is stuck in a handler, so that shutdown abandons it and the
/// actor outlives the system's I/O runtime. Returns the ref, the gate's key and the
/// system (not yet shut down).
fn stuck_system() -> (System, odeon::ActorRef<Stuck>, mpsc::Sender<()>) {
    let system = System::builder()
        .workers(2)
        .shutdown_timeout(Duration::from_millis(100))
        .build();
    let (open, gate) = mpsc::channel();
    let (entered_tx, entered) = mpsc::channel();
    let r = system.spawn(Stuck {
        gate: Arc::new(Mutex::new(gate)),
        entered: entered_tx,
    });
    r.tell(Block).unwrap();
    entered.recv_timeout(HANG_GUARD).unwrap();
    (system, r, open)
}

#[test]
fn an_ask_made_after_shutdown_to_an_abandoned_actor_times_out_on_any_executor() {
    let (system, r, open) = stuck_system();
    assert!(!system.shutdown(), "the stuck actor was abandoned");
    assert!(r.is_alive());

    // A short timeout (a timer of the ask's own) and a long one (the deadline watch,
    // which has stopped): neither may need the dead I/O runtime.
    let short = Duration::from_millis(50);
    assert_eq!(
        futures_executor::block_on(r.ask(Ping(1)).timeout(short)),
        Err(AskError::Timeout(short))
    );
    let long = Duration::from_secs(1);
    assert_eq!(
        futures_executor::block_on(r.ask(Ping(2)).timeout(long)),
        Err(AskError::Timeout(long))
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    assert_eq!(
        rt.block_on(r.ask(Ping(3)).timeout(short)),
        Err(AskError::Timeout(short))
    );
    // On a thread of its own, to show the panic (if any) would be the caller's.
    let r2 = r.clone();
    let on_thread =
        std::thread::spawn(move || futures_executor::block_on(r2.ask(Ping(4)).timeout(short)));
    assert_eq!(
        on_thread
            .join()
            .expect("the ask panicked in its caller's thread"),
        Err(AskError::Timeout(short))
    );
    open.send(()).unwrap();
}

#[test]
fn an_ask_pending_while_the_system_shuts_down_completes_without_panicking() {
    let (system, r, open) = stuck_system();
    // Long enough to still be pending when the I/O runtime is gone: first kept by the
    // deadline watch, then (once the watch stops at shutdown) by a timer of its own.
    let watched = r.ask(Ping(1)).timeout(Duration::from_secs(30));
    // First polled after the shutdown: its deadline starts then, with the watch
    // already stopped, so it gets a timer of its own from the start.
    let own = r.ask(Ping(2)).timeout(Duration::from_secs(20));
    let (polled_tx, polled) = mpsc::channel();
    let asker = std::thread::spawn(move || {
        let _ = polled_tx.send(());
        let a = futures_executor::block_on(watched);
        let b = futures_executor::block_on(own);
        (a, b)
    });
    polled.recv_timeout(HANG_GUARD).unwrap();
    std::thread::sleep(Duration::from_millis(20));
    assert!(!system.shutdown(), "the stuck actor was abandoned");
    // The I/O runtime is gone now. Releasing the actor lets it finish stopping (the
    // shutdown asked it to), which fails both asks.
    std::thread::sleep(Duration::from_millis(50));
    open.send(()).unwrap();
    let (a, b) = asker
        .join()
        .expect("a pending ask panicked when the system shut down");
    assert_eq!(a, Err(AskError::Stopped));
    assert_eq!(b, Err(AskError::Stopped));
}

#[test]
fn a_short_ask_awaited_on_another_runtime_while_the_system_lives_still_times_out() {
    let (system, r, open) = stuck_system();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let short = Duration::from_millis(30);
    assert_eq!(
        rt.block_on(r.ask(Ping(1)).timeout(short)),
        Err(AskError::Timeout(short))
    );
    open.send(()).unwrap();
    drop(system);
}
