//! `Actor::on_start`: an awaitable start that runs before any message, and a failed
//! start (`StopReason::StartFailed`) that watchers, waiters and asks see.

use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use odeon::{
    Actor, ActorRef, AskError, Context, Handler, Message, StartError, StopReason, Strategy,
    SupervisorSpec, System, Terminated,
};
use tokio::sync::oneshot;

const HANG_GUARD: Duration = Duration::from_secs(10);

type Log = Arc<Mutex<Vec<String>>>;

fn small_system() -> System {
    System::builder().workers(2).build()
}

fn wait_stopped<A: Actor>(system: &System, actor: &ActorRef<A>) -> StopReason {
    let done = actor.wait_stopped();
    system.block_on(async {
        tokio::time::timeout(HANG_GUARD, done)
            .await
            .expect("the actor stopped")
    })
}

/// Starts once the test says so (or fails, if told to), logging every step.
struct Gated {
    gate: Option<oneshot::Receiver<Result<(), String>>>,
    log: Log,
}

impl Gated {
    fn push(&self, event: impl Into<String>) {
        self.log.lock().unwrap().push(event.into());
    }
}

impl Actor for Gated {
    fn started(&mut self, _cx: &mut Context<Self>) {
        self.push("started");
    }

    async fn on_start(&mut self, _cx: &mut Context<Self>) -> Result<(), StartError> {
        self.push("on_start begins");
        let gate = self.gate.take().expect("on_start runs once");
        let verdict = gate.await.unwrap_or(Err("gate dropped".into()));
        self.push("on_start ends");
        verdict.map_err(StartError::from)
    }

    fn stopped(&mut self, reason: &StopReason) {
        self.push(format!("stopped: {reason}"));
    }
}

struct Note(u32);
impl Message for Note {
    type Reply = u32;
}
impl Handler<Note> for Gated {
    fn handle(&mut self, n: Note, _: &mut Context<Self>) -> u32 {
        self.push(format!("note {}", n.0));
        n.0
    }
}

/// Waits until the start is awaiting its gate. (Not `run_until_quiescent`: a pending
/// start, like a pending async handler, keeps the system from being quiescent.)
fn await_start_begun(log: &Log) {
    let deadline = std::time::Instant::now() + HANG_GUARD;
    while !log.lock().unwrap().iter().any(|e| e == "on_start begins") {
        assert!(std::time::Instant::now() < deadline, "on_start never began");
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn gated(system: &System) -> (ActorRef<Gated>, oneshot::Sender<Result<(), String>>, Log) {
    let (tx, rx) = oneshot::channel();
    let log = Log::default();
    let actor = system.spawn(Gated {
        gate: Some(rx),
        log: log.clone(),
    });
    (actor, tx, log)
}

#[test]
fn messages_wait_in_order_until_the_start_completes() {
    let system = small_system();
    let (actor, gate, log) = gated(&system);
    for n in 0..5 {
        actor.tell(Note(n)).unwrap();
    }
    let last = actor.ask(Note(5));
    // Everything is queued behind the pending start.
    await_start_begun(&log);
    std::thread::sleep(Duration::from_millis(20)); // room for a wrong delivery to show
    assert_eq!(
        log.lock().unwrap().clone(),
        vec!["started", "on_start begins"]
    );
    gate.send(Ok(())).unwrap();
    assert_eq!(system.block_on(last.timeout(HANG_GUARD)), Ok(5));
    let seen = log.lock().unwrap().clone();
    assert_eq!(
        seen,
        vec![
            "started",
            "on_start begins",
            "on_start ends",
            "note 0",
            "note 1",
            "note 2",
            "note 3",
            "note 4",
            "note 5",
        ]
    );
}

#[test]
fn an_error_stops_the_actor_with_start_failed_before_any_message() {
    let system = small_system();
    let (actor, gate, log) = gated(&system);
    actor.tell(Note(1)).unwrap();
    let pending = actor.ask(Note(2));
    gate.send(Err("database unreachable".into())).unwrap();
    let expected = StopReason::StartFailed("database unreachable".into());
    assert_eq!(wait_stopped(&system, &actor), expected);
    assert!(expected.is_failure());
    assert_eq!(
        system.block_on(pending.timeout(HANG_GUARD)),
        Err(AskError::Stopped)
    );
    let seen = log.lock().unwrap().clone();
    assert!(!seen.iter().any(|e| e.starts_with("note")), "{seen:?}");
    assert_eq!(
        seen.last().map(String::as_str),
        Some("stopped: failed to start: database unreachable")
    );
}

/// Watches an actor and forwards its `Terminated`.
struct Watcher {
    target: ActorRef<Gated>,
    seen: mpsc::Sender<Terminated>,
}
impl Actor for Watcher {
    fn started(&mut self, cx: &mut Context<Self>) {
        cx.watch(&self.target);
    }
}
impl Handler<Terminated> for Watcher {
    fn handle(&mut self, t: Terminated, _: &mut Context<Self>) {
        let _ = self.seen.send(t);
    }
}

#[test]
fn watchers_see_start_failed() {
    let system = small_system();
    let (actor, gate, _log) = gated(&system);
    let (tx, rx) = mpsc::channel();
    let _watcher = system.spawn(Watcher {
        target: actor.clone(),
        seen: tx,
    });
    // The watch is in place once the watcher has started; a stop that came first
    // would still be reported (a watch on a stopped actor fires at once).
    gate.send(Err("no config".into())).unwrap();
    let t = rx.recv_timeout(HANG_GUARD).expect("Terminated delivered");
    assert_eq!(t.id, actor.id());
    assert_eq!(t.reason, StopReason::StartFailed("no config".into()));
}

#[test]
fn a_kill_cancels_a_pending_start() {
    let system = small_system();
    let (actor, gate, log) = gated(&system);
    actor.tell(Note(1)).unwrap();
    await_start_begun(&log);
    actor.kill();
    assert_eq!(wait_stopped(&system, &actor), StopReason::Killed);
    // The gate's receiver was dropped with the cancelled start.
    assert!(gate.send(Ok(())).is_err());
    let seen = log.lock().unwrap().clone();
    assert!(!seen.contains(&"on_start ends".to_string()), "{seen:?}");
    assert!(!seen.iter().any(|e| e.starts_with("note")), "{seen:?}");
}

#[test]
fn a_stop_lets_the_start_finish_then_stops() {
    let system = small_system();
    let (actor, gate, log) = gated(&system);
    await_start_begun(&log);
    actor.stop();
    gate.send(Ok(())).unwrap();
    assert_eq!(wait_stopped(&system, &actor), StopReason::Normal);
    let seen = log.lock().unwrap().clone();
    assert!(seen.contains(&"on_start ends".to_string()), "{seen:?}");
}

#[test]
fn a_panic_in_on_start_fails_the_actor() {
    struct Fragile;
    impl Actor for Fragile {
        async fn on_start(&mut self, _cx: &mut Context<Self>) -> Result<(), StartError> {
            tokio::task::yield_now().await;
            panic!("cannot start");
        }
    }
    let system = small_system();
    let fragile = system.spawn(Fragile);
    assert_eq!(
        wait_stopped(&system, &fragile),
        StopReason::Panicked("cannot start".into())
    );
}

#[test]
fn a_start_that_is_ready_at_once_needs_no_extra_turn_to_fail() {
    struct Refuses;
    impl Actor for Refuses {
        async fn on_start(&mut self, _cx: &mut Context<Self>) -> Result<(), StartError> {
            Err(std::io::Error::other("refused").into())
        }
    }
    let system = small_system();
    let actor = system.spawn(Refuses);
    assert_eq!(
        wait_stopped(&system, &actor),
        StopReason::StartFailed("refused".into())
    );
}

/// The start uses its context: it asks another actor and spawns a child.
struct Dependent {
    config: ActorRef<Config>,
    value: u32,
}
struct Config;
impl Actor for Config {}
struct GetValue;
impl Message for GetValue {
    type Reply = u32;
}
impl Handler<GetValue> for Config {
    fn handle(&mut self, _: GetValue, _: &mut Context<Self>) -> u32 {
        41
    }
}
impl Actor for Dependent {
    async fn on_start(&mut self, cx: &mut Context<Self>) -> Result<(), StartError> {
        self.value = self.config.ask(GetValue).await? + 1;
        let _child = cx.spawn(Config);
        Ok(())
    }
}
impl Handler<GetValue> for Dependent {
    fn handle(&mut self, _: GetValue, _: &mut Context<Self>) -> u32 {
        self.value
    }
}

#[test]
fn the_start_can_ask_other_actors() {
    let system = small_system();
    let config = system.spawn(Config);
    let dependent = system.spawn(Dependent { config, value: 0 });
    assert_eq!(
        system.block_on(dependent.ask(GetValue).timeout(HANG_GUARD)),
        Ok(42)
    );
}

#[test]
fn actors_without_on_start_are_unaffected() {
    let system = small_system();
    let config = system.spawn(Config);
    assert_eq!(system.block_on(config.ask(GetValue)), Ok(41));
    config.stop();
    assert_eq!(wait_stopped(&system, &config), StopReason::Normal);
}

/// Counts its starts in a shared counter; its state is only valid once started.
struct Connection {
    starts: Arc<Mutex<u32>>,
    connected: bool,
}
impl Actor for Connection {
    async fn on_start(&mut self, _cx: &mut Context<Self>) -> Result<(), StartError> {
        tokio::task::yield_now().await; // really awaits: the turn parks here
        *self.starts.lock().unwrap() += 1;
        self.connected = true;
        Ok(())
    }
}
struct Query;
impl Message for Query {
    type Reply = bool;
}
impl Handler<Query> for Connection {
    fn handle(&mut self, _: Query, _: &mut Context<Self>) -> bool {
        self.connected
    }
}
struct Break;
impl Message for Break {
    type Reply = ();
}
impl Handler<Break> for Connection {
    fn handle(&mut self, _: Break, _: &mut Context<Self>) {
        panic!("connection broke");
    }
}

#[test]
fn a_supervisor_restart_runs_on_start_again_before_held_messages() {
    let system = small_system();
    let starts = Arc::new(Mutex::new(0));
    let counter = starts.clone();
    let (_sup, conn) = system.supervise(SupervisorSpec::new(Strategy::OneForOne), |c| {
        c.spawn(move || Connection {
            starts: counter.clone(),
            connected: false,
        })
    });
    assert_eq!(
        system.block_on(conn.ask(Query).timeout(HANG_GUARD)),
        Ok(true)
    );
    assert_eq!(*starts.lock().unwrap(), 1);
    conn.tell(Break).unwrap();
    // Sent while the child is failed or restarting: handled by the fresh state only
    // after its `on_start` completed.
    let after = conn.ask(Query);
    assert_eq!(system.block_on(after.timeout(HANG_GUARD)), Ok(true));
    assert_eq!(*starts.lock().unwrap(), 2);
}
