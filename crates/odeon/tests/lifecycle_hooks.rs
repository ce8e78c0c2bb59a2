//! Lifecycle: hook order, stopping from inside and outside, children, shutdown,
//! blocking actors and quiescence.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use odeon::{
    Actor, ActorRef, AskError, AsyncHandler, Context, Handler, Message, SpawnOptions, StopReason,
    System, TellError,
};

const HANG_GUARD: Duration = Duration::from_secs(5);

type Log = Arc<Mutex<Vec<String>>>;

fn snapshot(log: &Log) -> Vec<String> {
    log.lock().unwrap().clone()
}

fn small_system() -> System {
    System::builder().workers(2).build()
}

/// Records its hooks and messages into a shared log, prefixed with its name.
struct Recorder {
    name: &'static str,
    log: Log,
}

impl Recorder {
    fn new(name: &'static str, log: &Log) -> Self {
        Self {
            name,
            log: log.clone(),
        }
    }

    fn push(&self, event: impl std::fmt::Display) {
        self.log
            .lock()
            .unwrap()
            .push(format!("{} {event}", self.name));
    }
}

impl Actor for Recorder {
    fn started(&mut self, _cx: &mut Context<Self>) {
        self.push("started");
    }

    fn stopping(&mut self, _cx: &mut Context<Self>) {
        self.push("stopping");
    }

    fn stopped(&mut self, reason: &StopReason) {
        self.push(format_args!("stopped {reason:?}"));
    }
}

/// Logged as `msg <n>`; replies with `n`.
struct Note(u32);
impl Message for Note {
    type Reply = u32;
}
impl Handler<Note> for Recorder {
    fn handle(&mut self, msg: Note, _: &mut Context<Self>) -> u32 {
        self.push(format_args!("msg {}", msg.0));
        msg.0
    }
}

/// Logged, then calls `cx.stop()`.
struct StopSelf;
impl Message for StopSelf {
    type Reply = ();
}
impl Handler<StopSelf> for Recorder {
    fn handle(&mut self, _: StopSelf, cx: &mut Context<Self>) {
        self.push("stop-self");
        cx.stop();
    }
}

/// Reports that the handler was entered, waits until released, then optionally stops.
struct Gate {
    entered: mpsc::Sender<()>,
    release: mpsc::Receiver<()>,
    stop_self: bool,
}
impl Message for Gate {
    type Reply = ();
}
impl Handler<Gate> for Recorder {
    fn handle(&mut self, msg: Gate, cx: &mut Context<Self>) {
        self.push("gate");
        msg.entered.send(()).unwrap();
        let _ = msg.release.recv_timeout(HANG_GUARD);
        if msg.stop_self {
            cx.stop();
        }
    }
}

#[test]
fn hooks_run_in_order_started_then_messages_then_stopping_then_stopped() {
    let system = small_system();
    let log = Log::default();
    let r = system.spawn(Recorder::new("r", &log));
    // Queued before the first turn: `started` still runs first.
    for i in 1..=3 {
        r.tell(Note(i)).unwrap();
    }
    assert_eq!(system.block_on(r.ask(Note(4))).unwrap(), 4);
    r.stop();
    system.run_until_quiescent();

    assert!(!r.is_alive());
    assert_eq!(
        snapshot(&log),
        [
            "r started",
            "r msg 1",
            "r msg 2",
            "r msg 3",
            "r msg 4",
            "r stopping",
            "r stopped Normal",
        ]
    );
}

#[test]
fn cx_stop_stops_after_the_current_message_and_queued_asks_fail_with_stopped() {
    let system = small_system();
    let log = Log::default();
    let r = system.spawn(Recorder::new("r", &log));
    let (entered_tx, entered) = mpsc::channel();
    let (release, release_rx) = mpsc::channel();

    let gate = r.ask(Gate {
        entered: entered_tx,
        release: release_rx,
        stop_self: true,
    });
    entered.recv_timeout(HANG_GUARD).expect("handler entered");
    let queued: Vec<_> = (1..=3).map(|i| r.ask(Note(i))).collect();
    r.tell(Note(99)).unwrap();
    release.send(()).unwrap();

    assert_eq!(
        system.block_on(gate),
        Ok(()),
        "the current message completes"
    );
    for q in queued {
        assert_eq!(system.block_on(q), Err(AskError::Stopped));
    }
    system.run_until_quiescent();
    assert!(!r.is_alive());
    assert!(matches!(r.tell(Note(5)), Err(TellError::Stopped(Note(5)))));
    assert_eq!(system.block_on(r.ask(Note(6))), Err(AskError::Stopped));
    assert_eq!(
        snapshot(&log),
        ["r started", "r gate", "r stopping", "r stopped Normal"],
        "no queued message was handled"
    );
}

#[test]
fn cx_stop_in_a_handler_takes_effect_right_after_that_handler() {
    let system = small_system();
    let log = Log::default();
    let r = system.spawn(Recorder::new("r", &log));
    r.tell(Note(1)).unwrap();
    r.tell(StopSelf).unwrap();
    r.tell(Note(2)).unwrap();
    system.run_until_quiescent();

    assert!(!r.is_alive());
    assert_eq!(
        snapshot(&log),
        [
            "r started",
            "r msg 1",
            "r stop-self",
            "r stopping",
            "r stopped Normal",
        ]
    );
}

#[test]
fn actor_ref_stop_from_outside_stops_after_the_current_message() {
    let system = small_system();
    let log = Log::default();
    let r = system.spawn(Recorder::new("r", &log));
    let (entered_tx, entered) = mpsc::channel();
    let (release, release_rx) = mpsc::channel();

    r.tell(Gate {
        entered: entered_tx,
        release: release_rx,
        stop_self: false,
    })
    .unwrap();
    entered.recv_timeout(HANG_GUARD).expect("handler entered");
    let queued = r.ask(Note(1));
    r.stop();
    assert!(r.is_alive(), "stop waits for the current message");
    release.send(()).unwrap();

    assert_eq!(system.block_on(queued), Err(AskError::Stopped));
    system.run_until_quiescent();
    assert!(!r.is_alive());
    assert_eq!(
        snapshot(&log),
        ["r started", "r gate", "r stopping", "r stopped Normal"]
    );
}

/// Spawns `depth` generations of descendants with `cx.spawn`, keeping each child's ref.
struct Parent {
    rec: Recorder,
    depth: u32,
    child: Option<ActorRef<Parent>>,
}

const NAMES: [&str; 4] = ["parent", "child", "grandchild", "great-grandchild"];

impl Parent {
    fn new(level: usize, depth: u32, log: &Log) -> Self {
        Self {
            rec: Recorder::new(NAMES[level], log),
            depth,
            child: None,
        }
    }
}

impl Actor for Parent {
    fn started(&mut self, cx: &mut Context<Self>) {
        self.rec.push("started");
        if self.depth > 0 {
            let level = NAMES.iter().position(|n| *n == self.rec.name).unwrap() + 1;
            self.child = Some(cx.spawn(Parent::new(level, self.depth - 1, &self.rec.log)));
        }
    }

    fn stopping(&mut self, _cx: &mut Context<Self>) {
        self.rec.push("stopping");
    }

    fn stopped(&mut self, reason: &StopReason) {
        self.rec.push(format_args!("stopped {reason:?}"));
    }
}

struct Boom;
impl Message for Boom {
    type Reply = ();
}
impl Handler<Boom> for Parent {
    fn handle(&mut self, _: Boom, _: &mut Context<Self>) {
        panic!("parent panicked");
    }
}

fn events_of(log: &[String], name: &str) -> Vec<String> {
    log.iter()
        .filter_map(|e| e.strip_prefix(name)?.strip_prefix(' '))
        .map(str::to_owned)
        .collect()
}

fn position(log: &[String], event: &str) -> usize {
    log.iter()
        .position(|e| e == event)
        .unwrap_or_else(|| panic!("{event:?} missing from {log:?}"))
}

#[test]
fn children_spawned_with_cx_spawn_are_stopped_with_parent_stopped_when_the_parent_stops() {
    let system = small_system();
    let log = Log::default();
    let parent = system.spawn(Parent::new(0, 2, &log));
    system.run_until_quiescent();
    assert_eq!(system.live_actors(), 3);

    parent.stop();
    system.run_until_quiescent();

    assert_eq!(system.live_actors(), 0);
    let log = snapshot(&log);
    assert_eq!(
        events_of(&log, "parent"),
        ["started", "stopping", "stopped Normal"]
    );
    for name in ["child", "grandchild"] {
        assert_eq!(
            events_of(&log, name),
            ["started", "stopping", "stopped ParentStopped"],
            "{name}"
        );
    }
    // Each generation is asked to stop only once its parent is stopping.
    assert!(position(&log, "parent stopping") < position(&log, "child stopping"));
    assert!(position(&log, "child stopping") < position(&log, "grandchild stopping"));
}

#[test]
fn children_are_stopped_with_parent_stopped_when_an_unsupervised_parent_panics() {
    let system = small_system();
    let log = Log::default();
    let parent = system.spawn(Parent::new(0, 1, &log));
    assert_eq!(system.block_on(parent.ask(Boom)), Err(AskError::Panicked));
    system.run_until_quiescent();

    assert_eq!(system.live_actors(), 0);
    let log = snapshot(&log);
    assert_eq!(
        events_of(&log, "parent"),
        [
            "started",
            "stopping",
            "stopped Panicked(\"parent panicked\")"
        ]
    );
    assert_eq!(
        events_of(&log, "child"),
        ["started", "stopping", "stopped ParentStopped"]
    );
}

/// Counts its hooks into shared counters; optionally spawns one child in `started`.
struct Counted {
    hooks: Arc<Hooks>,
    spawn_child: bool,
    child: Option<ActorRef<Counted>>,
}

#[derive(Default)]
struct Hooks {
    started: AtomicUsize,
    stopping: AtomicUsize,
    reasons: Mutex<Vec<StopReason>>,
}

impl Actor for Counted {
    fn started(&mut self, cx: &mut Context<Self>) {
        self.hooks.started.fetch_add(1, Ordering::SeqCst);
        if self.spawn_child {
            self.child = Some(cx.spawn(Counted {
                hooks: self.hooks.clone(),
                spawn_child: false,
                child: None,
            }));
        }
    }

    fn stopping(&mut self, _cx: &mut Context<Self>) {
        self.hooks.stopping.fetch_add(1, Ordering::SeqCst);
    }

    fn stopped(&mut self, reason: &StopReason) {
        self.hooks.reasons.lock().unwrap().push(reason.clone());
    }
}

#[test]
fn shutdown_runs_stopping_and_stopped_for_every_actor_and_returns_true() {
    let system = small_system();
    let hooks = Arc::new(Hooks::default());
    let top: Vec<_> = (0..100)
        .map(|_| {
            system.spawn(Counted {
                hooks: hooks.clone(),
                spawn_child: true,
                child: None,
            })
        })
        .collect();
    system.run_until_quiescent();
    assert_eq!(hooks.started.load(Ordering::SeqCst), 200);
    assert_eq!(system.live_actors(), 200);

    assert!(system.shutdown(), "every actor stopped");

    assert_eq!(hooks.stopping.load(Ordering::SeqCst), 200);
    let reasons = hooks.reasons.lock().unwrap().clone();
    assert_eq!(reasons.len(), 200);
    let shutdown = reasons
        .iter()
        .filter(|r| **r == StopReason::Shutdown)
        .count();
    let parent_stopped = reasons
        .iter()
        .filter(|r| **r == StopReason::ParentStopped)
        .count();
    assert_eq!((shutdown, parent_stopped), (100, 100));
    assert!(top.iter().all(|a| !a.is_alive()));
}

/// Blocks its (own) thread in its handler until released.
struct Blocker {
    pool_handled: Arc<AtomicUsize>,
    entered: mpsc::Sender<String>,
}
impl Actor for Blocker {}

/// Sleeps in a loop until `release` fires; replies with how many pool messages had
/// been handled by then.
struct Block {
    release: mpsc::Receiver<()>,
}
impl Message for Block {
    type Reply = usize;
}
impl Handler<Block> for Blocker {
    fn handle(&mut self, msg: Block, _: &mut Context<Self>) -> usize {
        let thread = std::thread::current().name().unwrap_or("").to_owned();
        self.entered.send(thread).unwrap();
        loop {
            std::thread::sleep(Duration::from_millis(1));
            match msg.release.try_recv() {
                Err(mpsc::TryRecvError::Empty) => continue,
                Ok(()) | Err(mpsc::TryRecvError::Disconnected) => break,
            }
        }
        self.pool_handled.load(Ordering::SeqCst)
    }
}

struct Echo(u32);
impl Message for Echo {
    type Reply = u32;
}
impl Handler<Echo> for Blocker {
    fn handle(&mut self, msg: Echo, _: &mut Context<Self>) -> u32 {
        msg.0
    }
}

struct PoolActor {
    handled: Arc<AtomicUsize>,
}
impl Actor for PoolActor {}
impl Handler<Echo> for PoolActor {
    fn handle(&mut self, msg: Echo, _: &mut Context<Self>) -> u32 {
        self.handled.fetch_add(1, Ordering::SeqCst);
        msg.0
    }
}

#[test]
fn blocking_actors_run_on_their_own_threads_while_pool_actors_keep_answering() {
    // Two workers, no spare threads: if blocking actors held pool workers, nothing
    // else could run while they block.
    let system = System::builder().workers(2).max_spare_workers(0).build();
    let pool_handled = Arc::new(AtomicUsize::new(0));
    let (entered_tx, entered) = mpsc::channel();
    let blockers: Vec<_> = (0..2)
        .map(|_| {
            system.spawn_with(
                Blocker {
                    pool_handled: pool_handled.clone(),
                    entered: entered_tx.clone(),
                },
                SpawnOptions::new().blocking(),
            )
        })
        .collect();
    let mut releases = Vec::new();
    let mut blocked = Vec::new();
    for b in &blockers {
        let (tx, rx) = mpsc::channel();
        releases.push(tx);
        blocked.push(b.ask(Block { release: rx }));
    }
    let mut threads: Vec<String> = (0..2)
        .map(|_| entered.recv_timeout(HANG_GUARD).expect("blocker entered"))
        .collect();
    threads.sort();
    threads.dedup();
    assert_eq!(
        threads.len(),
        2,
        "one thread per blocking actor: {threads:?}"
    );
    assert!(
        threads.iter().all(|t| t.starts_with("odeon-blocking-")),
        "{threads:?}"
    );

    // Both blocking actors are inside their handlers until released below.
    let pool: Vec<_> = (0..8)
        .map(|_| {
            system.spawn(PoolActor {
                handled: pool_handled.clone(),
            })
        })
        .collect();
    for round in 0..25 {
        let asks: Vec<_> = pool.iter().map(|p| p.ask(Echo(round))).collect();
        for a in asks {
            assert_eq!(system.block_on(a).unwrap(), round);
        }
    }

    for r in &releases {
        r.send(()).unwrap();
    }
    for b in blocked {
        assert_eq!(
            system.block_on(b).unwrap(),
            200,
            "all pool asks completed while the blocking actor was blocked"
        );
    }
    // The blocking actors still handle messages afterwards.
    for (i, b) in (0..).zip(&blockers) {
        assert_eq!(system.block_on(b.ask(Echo(i))).unwrap(), i);
    }
    assert!(system.shutdown());
}

/// Forwards `Hop` to `next`, or records the hop count if it is the last.
struct Link {
    next: Option<ActorRef<Link>>,
    seen: Arc<AtomicUsize>,
}
impl Actor for Link {}

struct Hop(usize);
impl Message for Hop {
    type Reply = ();
}
impl Handler<Hop> for Link {
    fn handle(&mut self, msg: Hop, _: &mut Context<Self>) {
        match &self.next {
            Some(next) => next.tell(Hop(msg.0 + 1)).unwrap(),
            None => self.seen.store(msg.0, Ordering::SeqCst),
        }
    }
}

#[test]
fn run_until_quiescent_returns_only_after_a_message_crossed_a_chain_of_1000_actors() {
    let system = small_system();
    let seen = Arc::new(AtomicUsize::new(0));
    let mut head = system.spawn(Link {
        next: None,
        seen: seen.clone(),
    });
    for _ in 1..1000 {
        head = system.spawn(Link {
            next: Some(head),
            seen: seen.clone(),
        });
    }
    system.run_until_quiescent();

    for round in 1..=3 {
        head.tell(Hop(round * 1000)).unwrap();
        system.run_until_quiescent();
        assert_eq!(
            seen.load(Ordering::SeqCst),
            round * 1000 + 999,
            "the last actor saw the message after 999 hops"
        );
    }
    assert_eq!(system.live_actors(), 1000);
}

/// Stops itself in `started` or panics in its stop hooks, as configured.
struct Odd {
    rec: Recorder,
    stop_in_started: bool,
    panic_in_stopping: bool,
}
impl Actor for Odd {
    fn started(&mut self, cx: &mut Context<Self>) {
        self.rec.push("started");
        if self.stop_in_started {
            cx.stop();
        }
    }

    fn stopping(&mut self, _cx: &mut Context<Self>) {
        self.rec.push("stopping");
        if self.panic_in_stopping {
            panic!("stopping hook panicked");
        }
    }

    fn stopped(&mut self, reason: &StopReason) {
        self.rec.push(format_args!("stopped {reason:?}"));
    }
}
impl Handler<Note> for Odd {
    fn handle(&mut self, msg: Note, _: &mut Context<Self>) -> u32 {
        self.rec.push(format_args!("msg {}", msg.0));
        msg.0
    }
}

#[test]
fn an_actor_that_stops_itself_in_started_runs_its_stop_hooks_and_handles_no_message() {
    let system = small_system();
    let log = Log::default();
    let a = system.spawn(Odd {
        rec: Recorder::new("a", &log),
        stop_in_started: true,
        panic_in_stopping: false,
    });
    let queued = a.ask(Note(1));
    assert_eq!(system.block_on(queued), Err(AskError::Stopped));
    system.run_until_quiescent();
    assert!(!a.is_alive());
    assert_eq!(
        snapshot(&log),
        ["a started", "a stopping", "a stopped Normal"]
    );
}

#[test]
fn a_panic_in_the_stopping_hook_still_runs_stopped_and_keeps_the_stop_reason() {
    let system = small_system();
    let log = Log::default();
    let a = system.spawn(Odd {
        rec: Recorder::new("a", &log),
        stop_in_started: false,
        panic_in_stopping: true,
    });
    assert_eq!(system.block_on(a.ask(Note(1))).unwrap(), 1);
    a.stop();
    system.run_until_quiescent();

    assert!(!a.is_alive());
    assert_eq!(
        snapshot(&log),
        ["a started", "a msg 1", "a stopping", "a stopped Normal"]
    );
    // The runtime is unaffected.
    let b = system.spawn(Recorder::new("b", &log));
    assert_eq!(system.block_on(b.ask(Note(2))).unwrap(), 2);
}

/// A future that is never ready. On its first poll it reports that it was entered and,
/// if given a `release`, blocks inside that poll until released.
struct NeverReady {
    entered: Option<mpsc::Sender<()>>,
    release: Option<mpsc::Receiver<()>>,
}
impl std::future::Future for NeverReady {
    type Output = ();
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        if let Some(entered) = self.entered.take() {
            entered.send(()).unwrap();
            if let Some(release) = self.release.take() {
                let _ = release.recv_timeout(HANG_GUARD);
            }
        }
        std::task::Poll::Pending
    }
}

/// Awaits a `NeverReady`.
struct Forever(NeverReady);
impl Message for Forever {
    type Reply = ();
}
impl AsyncHandler<Forever> for Recorder {
    fn handle(
        &mut self,
        msg: Forever,
        _: &mut Context<Self>,
    ) -> impl std::future::Future<Output = ()> + Send {
        self.push("awaiting");
        msg.0
    }
}

#[test]
fn actor_ref_kill_cancels_an_actor_parked_in_an_async_handler() {
    let system = small_system();
    let log = Log::default();
    let r = system.spawn(Recorder::new("r", &log));
    let (entered_tx, entered) = mpsc::channel();
    let parked = r
        .ask(Forever(NeverReady {
            entered: Some(entered_tx),
            release: None,
        }))
        .timeout(Duration::from_secs(2));
    let queued = r.ask(Note(1));
    entered.recv_timeout(HANG_GUARD).expect("future polled");
    // Lets the turn park after the poll returned, so this covers the parked path (the
    // next test covers a kill mid-poll). The expected outcome is the same either way.
    std::thread::sleep(Duration::from_millis(20));

    r.kill();
    assert_eq!(system.block_on(parked), Err(AskError::Stopped));
    assert_eq!(system.block_on(queued), Err(AskError::Stopped));
    system.run_until_quiescent();
    assert!(!r.is_alive());
    assert_eq!(
        snapshot(&log),
        ["r started", "r awaiting", "r stopping", "r stopped Killed"]
    );
}

#[test]
fn actor_ref_kill_requested_while_an_async_handler_is_being_polled_still_stops_the_actor() {
    let system = small_system();
    let log = Log::default();
    let r = system.spawn(Recorder::new("r", &log));
    let (entered_tx, entered) = mpsc::channel();
    let (release, release_rx) = mpsc::channel();
    let pending = r
        .ask(Forever(NeverReady {
            entered: Some(entered_tx),
            release: Some(release_rx),
        }))
        .timeout(Duration::from_secs(2));
    entered.recv_timeout(HANG_GUARD).expect("future polled");

    // The turn is inside `poll`: the kill request arrives while the handler runs.
    r.kill();
    release.send(()).unwrap();

    assert_eq!(
        system.block_on(pending),
        Err(AskError::Stopped),
        "the kill request was lost: the actor stayed parked"
    );
    assert!(system.wait_quiescent(Some(HANG_GUARD)));
    assert!(!r.is_alive());
    assert_eq!(
        snapshot(&log),
        ["r started", "r awaiting", "r stopping", "r stopped Killed"]
    );
}
