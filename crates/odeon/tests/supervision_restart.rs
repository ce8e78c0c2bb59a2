//! Supervision: restart strategies, in-place restarts with fresh state, restart limits.
//!
//! Every supervised child here is a `Worker` built by a factory that numbers its
//! instances (generation 1, 2, ...) and records its lifecycle into a shared `Probe`, so
//! the tests can tell which instance handled what and which hooks ran with which reason.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use odeon::{
    Actor, ActorRef, AskError, Context, Handler, Message, SpawnOptions, StopReason, Strategy,
    SupervisorSpec, System, TellError, Terminated,
};

const HANG_GUARD: Duration = Duration::from_secs(5);

/// What a family of instances (one supervised child across its restarts) recorded.
#[derive(Clone, Default)]
struct Probe {
    /// Instances built by the factory so far.
    built: Arc<AtomicUsize>,
    /// `started` hooks run so far.
    started: Arc<AtomicUsize>,
    /// Lifecycle events: `started#g`, `stopping#g`, `stopped#g <reason>`.
    log: Arc<Mutex<Vec<String>>>,
    /// Reasons seen by `stopped`, in order.
    stopped: Arc<Mutex<Vec<StopReason>>>,
    /// `(generation, value)` for every `Record` handled.
    records: Arc<Mutex<Vec<(usize, u32)>>>,
    /// How many of the first `started` hooks panic.
    panicking_starts: usize,
}

impl Probe {
    fn new() -> Self {
        Self::default()
    }

    /// A probe whose first `n` instances panic in `started`.
    fn panicking_starts(n: usize) -> Self {
        Self {
            panicking_starts: n,
            ..Self::default()
        }
    }

    fn factory(&self) -> impl FnMut() -> Worker + Send + 'static {
        let probe = self.clone();
        move || {
            let generation = probe.built.fetch_add(1, Ordering::SeqCst) + 1;
            Worker {
                generation,
                count: 0,
                probe: probe.clone(),
            }
        }
    }

    fn started(&self) -> usize {
        self.started.load(Ordering::SeqCst)
    }

    fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    fn stopped(&self) -> Vec<StopReason> {
        self.stopped.lock().unwrap().clone()
    }

    fn records(&self) -> Vec<(usize, u32)> {
        self.records.lock().unwrap().clone()
    }
}

struct Worker {
    generation: usize,
    count: u32,
    probe: Probe,
}

impl Actor for Worker {
    fn started(&mut self, _cx: &mut Context<Self>) {
        let n = self.probe.started.fetch_add(1, Ordering::SeqCst) + 1;
        self.probe
            .log
            .lock()
            .unwrap()
            .push(format!("started#{}", self.generation));
        if n <= self.probe.panicking_starts {
            panic!("bad start #{n}");
        }
    }

    fn stopping(&mut self, _cx: &mut Context<Self>) {
        self.probe
            .log
            .lock()
            .unwrap()
            .push(format!("stopping#{}", self.generation));
    }

    fn stopped(&mut self, reason: &StopReason) {
        self.probe
            .log
            .lock()
            .unwrap()
            .push(format!("stopped#{} {reason:?}", self.generation));
        self.probe.stopped.lock().unwrap().push(reason.clone());
    }
}

/// Adds one to the counter and returns it.
struct Inc;
impl Message for Inc {
    type Reply = u32;
}
impl Handler<Inc> for Worker {
    fn handle(&mut self, _: Inc, _: &mut Context<Self>) -> u32 {
        self.count += 1;
        self.count
    }
}

/// The counter.
struct Get;
impl Message for Get {
    type Reply = u32;
}
impl Handler<Get> for Worker {
    fn handle(&mut self, _: Get, _: &mut Context<Self>) -> u32 {
        self.count
    }
}

/// Which instance is answering.
struct Generation;
impl Message for Generation {
    type Reply = usize;
}
impl Handler<Generation> for Worker {
    fn handle(&mut self, _: Generation, _: &mut Context<Self>) -> usize {
        self.generation
    }
}

/// Records `(generation, value)` into the probe.
struct Record(u32);
impl Message for Record {
    type Reply = ();
}
impl Handler<Record> for Worker {
    fn handle(&mut self, msg: Record, _: &mut Context<Self>) {
        self.probe
            .records
            .lock()
            .unwrap()
            .push((self.generation, msg.0));
    }
}

/// Panics with the given message.
struct Crash(&'static str);
impl Message for Crash {
    type Reply = ();
}
impl Handler<Crash> for Worker {
    fn handle(&mut self, msg: Crash, _: &mut Context<Self>) {
        panic!("{}", msg.0);
    }
}

/// Forwards every `Terminated` it receives to a channel.
struct Watcher {
    tx: mpsc::Sender<Terminated>,
}
impl Actor for Watcher {}

struct Watch<B: Actor>(ActorRef<B>);
impl<B: Actor> Message for Watch<B> {
    type Reply = ();
}
impl<B: Actor> Handler<Watch<B>> for Watcher {
    fn handle(&mut self, msg: Watch<B>, cx: &mut Context<Self>) {
        cx.watch(&msg.0);
    }
}
impl Handler<Terminated> for Watcher {
    fn handle(&mut self, msg: Terminated, _: &mut Context<Self>) {
        let _ = self.tx.send(msg);
    }
}

fn small_system() -> System {
    System::builder().workers(2).build()
}

fn spec(strategy: Strategy) -> SupervisorSpec {
    SupervisorSpec::new(strategy).max_restarts(10, Duration::from_secs(60))
}

/// Spawns a watcher of `target` and returns the channel its `Terminated`s arrive on.
fn watch<B: Actor>(
    system: &System,
    target: &ActorRef<B>,
) -> (ActorRef<Watcher>, mpsc::Receiver<Terminated>) {
    let (tx, rx) = mpsc::channel();
    let watcher = system.spawn(Watcher { tx });
    system.block_on(watcher.ask(Watch(target.clone()))).unwrap();
    (watcher, rx)
}

#[test]
fn one_for_one_restarts_only_the_failed_child_with_fresh_state() {
    let system = small_system();
    let (pa, pb) = (Probe::new(), Probe::new());
    let (_sup, (a, b)) = system.supervise(spec(Strategy::OneForOne), |c| {
        (c.spawn(pa.factory()), c.spawn(pb.factory()))
    });
    for _ in 0..3 {
        system.block_on(a.ask(Inc)).unwrap();
    }
    for _ in 0..2 {
        system.block_on(b.ask(Inc)).unwrap();
    }

    a.tell(Crash("boom")).unwrap();
    system.run_until_quiescent();

    assert_eq!(
        system.block_on(a.ask(Get)).unwrap(),
        0,
        "a restarted with fresh state"
    );
    assert_eq!(system.block_on(a.ask(Generation)).unwrap(), 2);
    assert_eq!(
        system.block_on(b.ask(Get)).unwrap(),
        2,
        "sibling kept its state"
    );
    assert_eq!(system.block_on(b.ask(Generation)).unwrap(), 1);
    assert_eq!(pa.started(), 2, "started ran again on the new instance");
    assert_eq!(pb.started(), 1, "sibling was not restarted");
    assert_eq!(pb.stopped(), vec![], "sibling's hooks did not run");
}

#[test]
fn the_failed_instance_runs_its_stop_hooks_with_the_panic_message_before_the_new_one_starts() {
    let system = small_system();
    let pa = Probe::new();
    let (_sup, a) = system.supervise(spec(Strategy::OneForOne), |c| c.spawn(pa.factory()));
    a.tell(Crash("worker exploded")).unwrap();
    system.run_until_quiescent();

    assert_eq!(
        pa.stopped(),
        vec![StopReason::Panicked("worker exploded".into())]
    );
    assert_eq!(
        pa.log(),
        vec![
            "started#1".to_string(),
            "stopping#1".into(),
            "stopped#1 Panicked(\"worker exploded\")".into(),
            "started#2".into(),
        ]
    );
}

#[test]
fn a_restarted_child_is_reached_through_the_same_actor_ref() {
    let system = small_system();
    let pa = Probe::new();
    let (_sup, a) = system.supervise(spec(Strategy::OneForOne), |c| c.spawn(pa.factory()));
    let before = a.clone();
    let id = a.id();
    system.block_on(a.ask(Inc)).unwrap();

    a.tell(Crash("boom")).unwrap();
    system.run_until_quiescent();

    assert!(a.is_alive());
    assert_eq!(a.id(), id, "restart keeps the actor id");
    assert_eq!(before, a);
    // Both the original ref and a clone taken before the crash reach the new instance.
    assert_eq!(system.block_on(before.ask(Inc)).unwrap(), 1);
    assert_eq!(system.block_on(a.ask(Inc)).unwrap(), 2);
    assert_eq!(system.block_on(a.ask(Generation)).unwrap(), 2);
}

#[test]
fn the_ask_that_crashed_fails_and_the_asks_queued_behind_it_are_answered_by_the_new_instance() {
    let system = small_system();
    let pa = Probe::new();
    let (_sup, a) = system.supervise(spec(Strategy::OneForOne), |c| c.spawn(pa.factory()));
    system.block_on(a.ask(Inc)).unwrap();

    let crash = a.ask(Crash("boom"));
    let queued: Vec<_> = (0..10).map(|_| a.ask(Inc)).collect();

    assert_eq!(system.block_on(crash), Err(AskError::Panicked));
    let replies: Vec<u32> = queued
        .into_iter()
        .map(|q| system.block_on(q).unwrap())
        .collect();
    assert_eq!(
        replies,
        (1..=10).collect::<Vec<_>>(),
        "fresh counter, none lost"
    );
}

#[test]
fn messages_sent_after_the_crash_message_are_all_handled_by_the_new_instance_in_order() {
    let system = small_system();
    let pa = Probe::new();
    let (_sup, a) = system.supervise(spec(Strategy::OneForOne), |c| c.spawn(pa.factory()));
    for i in 0..5 {
        a.tell(Record(i)).unwrap();
    }
    a.tell(Crash("boom")).unwrap();
    for i in 5..500 {
        a.tell(Record(i)).unwrap();
    }
    // The ask is queued behind every record, so its reply means they were all handled.
    assert_eq!(system.block_on(a.ask(Generation)).unwrap(), 2);

    let records = pa.records();
    let expected: Vec<(usize, u32)> = (0..5)
        .map(|i| (1, i))
        .chain((5..500).map(|i| (2, i)))
        .collect();
    assert_eq!(records, expected);
}

#[test]
fn one_for_all_restarts_every_child_when_one_fails() {
    let system = small_system();
    let probes = [Probe::new(), Probe::new(), Probe::new()];
    let (_sup, kids) = system.supervise(spec(Strategy::OneForAll), |c| {
        probes
            .iter()
            .map(|p| c.spawn(p.factory()))
            .collect::<Vec<_>>()
    });
    for (i, k) in kids.iter().enumerate() {
        for _ in 0..=i {
            system.block_on(k.ask(Inc)).unwrap();
        }
    }

    kids[1].tell(Crash("middle failed")).unwrap();
    system.run_until_quiescent();

    for (i, (k, p)) in kids.iter().zip(&probes).enumerate() {
        assert_eq!(
            system.block_on(k.ask(Get)).unwrap(),
            0,
            "child {i} state reset"
        );
        assert_eq!(system.block_on(k.ask(Generation)).unwrap(), 2, "child {i}");
        assert_eq!(p.started(), 2, "child {i} started again");
    }
    assert_eq!(
        probes[1].stopped(),
        vec![StopReason::Panicked("middle failed".into())]
    );
    assert_eq!(probes[0].stopped(), vec![StopReason::Restarting]);
    assert_eq!(probes[2].stopped(), vec![StopReason::Restarting]);
}

#[test]
fn rest_for_one_restarts_the_failed_child_and_those_started_after_it_only() {
    let system = small_system();
    let probes = [Probe::new(), Probe::new(), Probe::new(), Probe::new()];
    let (_sup, kids) = system.supervise(spec(Strategy::RestForOne), |c| {
        probes
            .iter()
            .map(|p| c.spawn(p.factory()))
            .collect::<Vec<_>>()
    });
    for k in &kids {
        for _ in 0..5 {
            system.block_on(k.ask(Inc)).unwrap();
        }
    }

    kids[1].tell(Crash("second failed")).unwrap();
    system.run_until_quiescent();

    let counts: Vec<u32> = kids
        .iter()
        .map(|k| system.block_on(k.ask(Get)).unwrap())
        .collect();
    assert_eq!(counts, vec![5, 0, 0, 0]);
    let generations: Vec<usize> = kids
        .iter()
        .map(|k| system.block_on(k.ask(Generation)).unwrap())
        .collect();
    assert_eq!(generations, vec![1, 2, 2, 2]);
    let started: Vec<usize> = probes.iter().map(Probe::started).collect();
    assert_eq!(started, vec![1, 2, 2, 2]);
    assert_eq!(probes[0].stopped(), vec![]);
    assert_eq!(probes[3].stopped(), vec![StopReason::Restarting]);
}

#[test]
fn exceeding_the_restart_limit_stops_the_supervisor_with_restart_limit_and_all_its_children() {
    let system = small_system();
    let (pa, pb) = (Probe::new(), Probe::new());
    let spec = SupervisorSpec::new(Strategy::OneForOne).max_restarts(2, Duration::from_secs(60));
    let (sup, (a, b)) = system.supervise(spec, |c| (c.spawn(pa.factory()), c.spawn(pb.factory())));
    let (_watcher, terminated) = watch(&system, &sup);
    system.block_on(b.ask(Inc)).unwrap();

    a.tell(Crash("first")).unwrap();
    a.tell(Crash("second")).unwrap();
    system.run_until_quiescent();
    // Two restarts are within the limit.
    assert!(sup.is_alive() && a.is_alive() && b.is_alive());
    assert_eq!(pa.started(), 3);
    assert!(terminated.try_recv().is_err(), "supervisor still running");

    a.tell(Crash("third")).unwrap();
    let t = terminated
        .recv_timeout(HANG_GUARD)
        .expect("supervisor gave up");
    assert_eq!(
        t,
        Terminated {
            id: sup.id(),
            reason: StopReason::RestartLimit
        }
    );
    system.run_until_quiescent();

    assert!(!sup.is_alive());
    assert!(!a.is_alive(), "failed child stopped");
    assert!(!b.is_alive(), "sibling stopped");
    assert_eq!(pa.started(), 3, "no restart after the limit");
    assert_eq!(
        pa.stopped(),
        vec![
            StopReason::Panicked("first".into()),
            StopReason::Panicked("second".into()),
            StopReason::Panicked("third".into()),
        ]
    );
    assert_eq!(pb.stopped(), vec![StopReason::ParentStopped]);
    assert_eq!(system.block_on(a.ask(Get)), Err(AskError::Stopped));
    assert_eq!(system.block_on(b.ask(Get)), Err(AskError::Stopped));
}

#[test]
fn restarts_older_than_the_window_do_not_count_toward_the_limit() {
    let system = small_system();
    let pa = Probe::new();
    // Wide enough that two failures handled back to back fall inside it even on a
    // loaded machine; the sleeps below only need to last at least one window.
    let window = Duration::from_millis(250);
    let spec = SupervisorSpec::new(Strategy::OneForOne).max_restarts(1, window);
    let (sup, a) = system.supervise(spec, |c| c.spawn(pa.factory()));

    for round in 0..3 {
        a.tell(Crash("boom")).unwrap();
        system.run_until_quiescent();
        assert!(sup.is_alive(), "round {round}");
        // The previous restart leaves the window before the next failure.
        std::thread::sleep(window + window / 5);
    }
    assert_eq!(system.block_on(a.ask(Generation)).unwrap(), 4);

    // Two failures inside one window exceed a limit of one. Both are handled between
    // `start` and quiescence; if that took a whole window (this thread or the pool
    // descheduled on a loaded machine), they may rightly fall in two windows: then
    // the pair is sent again, and the check made on a pair that fit in one window.
    for _ in 0..20 {
        let start = Instant::now();
        a.tell(Crash("boom")).unwrap();
        a.tell(Crash("boom")).unwrap();
        system.run_until_quiescent();
        if start.elapsed() < window {
            assert!(!sup.is_alive());
            assert!(!a.is_alive());
            return;
        }
        if !sup.is_alive() {
            assert!(!a.is_alive());
            return;
        }
        std::thread::sleep(window + window / 5);
    }
    panic!("no two failures were handled within one window in 20 tries");
}

#[test]
fn a_child_that_panics_in_started_is_restarted_and_then_works() {
    let system = small_system();
    let pa = Probe::panicking_starts(1);
    let (sup, a) = system.supervise(spec(Strategy::OneForOne), |c| c.spawn(pa.factory()));

    // Queued while the first instance fails in `started`: handled by the second.
    assert_eq!(system.block_on(a.ask(Inc)).unwrap(), 1);
    assert_eq!(system.block_on(a.ask(Generation)).unwrap(), 2);
    assert!(sup.is_alive());
    assert_eq!(pa.started(), 2);
    assert_eq!(
        pa.stopped(),
        vec![StopReason::Panicked("bad start #1".into())]
    );
}

#[test]
fn a_panic_in_started_counts_toward_the_restart_limit() {
    let system = small_system();
    let pa = Probe::panicking_starts(1);
    let spec = SupervisorSpec::new(Strategy::OneForOne).max_restarts(1, Duration::from_secs(60));
    let (sup, a) = system.supervise(spec, |c| c.spawn(pa.factory()));
    let (_watcher, terminated) = watch(&system, &sup);
    assert_eq!(system.block_on(a.ask(Generation)).unwrap(), 2);

    // The failed start used the only restart allowed: this failure exceeds the limit.
    a.tell(Crash("boom")).unwrap();
    let t = terminated
        .recv_timeout(HANG_GUARD)
        .expect("supervisor gave up");
    assert_eq!(t.reason, StopReason::RestartLimit);
    system.run_until_quiescent();
    assert!(!a.is_alive());
    assert_eq!(pa.started(), 2);
}

#[test]
fn a_child_that_always_panics_in_started_is_restarted_until_the_limit() {
    let system = small_system();
    let pa = Probe::panicking_starts(usize::MAX);
    let spec = SupervisorSpec::new(Strategy::OneForOne).max_restarts(3, Duration::from_secs(60));
    let (sup, a) = system.supervise(spec, |c| c.spawn(pa.factory()));
    let (_watcher, terminated) = watch(&system, &sup);

    let t = terminated
        .recv_timeout(HANG_GUARD)
        .expect("supervisor gave up");
    assert_eq!(t.reason, StopReason::RestartLimit);
    system.run_until_quiescent();
    assert!(!a.is_alive());
    assert_eq!(pa.started(), 4, "the first start and three restarts");
    assert_eq!(
        pa.stopped(),
        (1..=4)
            .map(|n| StopReason::Panicked(format!("bad start #{n}")))
            .collect::<Vec<_>>()
    );
    assert_eq!(system.block_on(a.ask(Get)), Err(AskError::Stopped));
}

#[test]
fn asks_held_by_a_failed_child_fail_with_stopped_when_the_supervisor_gives_up() {
    let system = small_system();
    let pa = Probe::new();
    let spec = SupervisorSpec::new(Strategy::OneForOne).max_restarts(0, Duration::from_secs(60));
    let (sup, a) = system.supervise(spec, |c| c.spawn(pa.factory()));

    let crash = a.ask(Crash("no restarts allowed"));
    let held: Vec<_> = (0..5).map(|_| a.ask(Inc)).collect();

    assert_eq!(system.block_on(crash), Err(AskError::Panicked));
    for q in held {
        assert_eq!(system.block_on(q), Err(AskError::Stopped));
    }
    system.run_until_quiescent();
    assert!(!sup.is_alive());
    assert!(!a.is_alive());
    assert_eq!(pa.started(), 1);
}

#[test]
fn stopping_a_supervisor_stops_its_children_with_parent_stopped() {
    let system = small_system();
    let (pa, pb) = (Probe::new(), Probe::new());
    let (sup, (a, b)) = system.supervise(spec(Strategy::OneForOne), |c| {
        (c.spawn(pa.factory()), c.spawn(pb.factory()))
    });
    let (_watcher, terminated) = watch(&system, &sup);
    system.block_on(a.ask(Inc)).unwrap();
    system.block_on(b.ask(Inc)).unwrap();

    sup.stop();
    let t = terminated
        .recv_timeout(HANG_GUARD)
        .expect("supervisor stopped");
    assert_eq!(t.reason, StopReason::Normal);
    system.run_until_quiescent();

    assert!(!a.is_alive() && !b.is_alive());
    assert_eq!(pa.stopped(), vec![StopReason::ParentStopped]);
    assert_eq!(pb.stopped(), vec![StopReason::ParentStopped]);
}

/// Stops itself normally.
struct Quit;
impl Message for Quit {
    type Reply = ();
}
impl Handler<Quit> for Worker {
    fn handle(&mut self, _: Quit, cx: &mut Context<Self>) {
        cx.stop();
    }
}

#[test]
fn a_child_that_stops_normally_is_not_restarted_even_by_one_for_all() {
    let system = small_system();
    let (pa, pb) = (Probe::new(), Probe::new());
    let (sup, (a, b)) = system.supervise(spec(Strategy::OneForAll), |c| {
        (c.spawn(pa.factory()), c.spawn(pb.factory()))
    });

    a.tell(Quit).unwrap();
    system.run_until_quiescent();
    assert!(!a.is_alive());
    assert!(sup.is_alive(), "a normal stop is not a failure");
    assert_eq!(pa.stopped(), vec![StopReason::Normal]);

    b.tell(Crash("boom")).unwrap();
    system.run_until_quiescent();
    assert_eq!(system.block_on(b.ask(Generation)).unwrap(), 2);
    assert!(!a.is_alive(), "the stopped child stays stopped");
    assert_eq!(pa.started(), 1);
}

#[test]
fn a_supervisor_started_from_an_actor_restarts_its_children_and_stops_with_its_parent() {
    struct Parent {
        probe: Probe,
        child: Option<ActorRef<Worker>>,
    }
    impl Actor for Parent {
        fn started(&mut self, cx: &mut Context<Self>) {
            let factory = self.probe.factory();
            let (_sup, child) = cx.supervise(spec(Strategy::OneForOne), |c| c.spawn(factory));
            self.child = Some(child);
        }
    }
    struct Child;
    impl Message for Child {
        type Reply = ActorRef<Worker>;
    }
    impl Handler<Child> for Parent {
        fn handle(&mut self, _: Child, _: &mut Context<Self>) -> ActorRef<Worker> {
            self.child.clone().unwrap()
        }
    }

    let system = small_system();
    let probe = Probe::new();
    let parent = system.spawn(Parent {
        probe: probe.clone(),
        child: None,
    });
    let child = system.block_on(parent.ask(Child)).unwrap();
    child.tell(Crash("nested")).unwrap();
    assert_eq!(system.block_on(child.ask(Generation)).unwrap(), 2);

    parent.stop();
    system.run_until_quiescent();
    assert!(
        !child.is_alive(),
        "supervisor and child stop with the parent"
    );
    assert_eq!(
        probe.stopped(),
        vec![
            StopReason::Panicked("nested".into()),
            StopReason::ParentStopped
        ]
    );
}

#[test]
fn watchers_of_a_supervised_child_are_not_told_about_restarts_only_about_its_final_stop() {
    let system = small_system();
    let pa = Probe::new();
    let spec = SupervisorSpec::new(Strategy::OneForOne).max_restarts(1, Duration::from_secs(60));
    let (_sup, a) = system.supervise(spec, |c| c.spawn(pa.factory()));
    let (_watcher, terminated) = watch(&system, &a);

    a.tell(Crash("restarted")).unwrap();
    assert_eq!(system.block_on(a.ask(Generation)).unwrap(), 2);
    system.run_until_quiescent();
    assert!(
        terminated.try_recv().is_err(),
        "a restart is not a termination"
    );

    a.tell(Crash("gives up")).unwrap();
    let t = terminated.recv_timeout(HANG_GUARD).expect("child stopped");
    assert_eq!(
        t,
        Terminated {
            id: a.id(),
            reason: StopReason::ParentStopped
        }
    );
}

/// Reports that the handler was entered and waits until released.
struct Gate {
    entered: mpsc::Sender<()>,
    release: mpsc::Receiver<()>,
}
impl Message for Gate {
    type Reply = ();
}
impl Handler<Gate> for Worker {
    fn handle(&mut self, msg: Gate, _: &mut Context<Self>) {
        msg.entered.send(()).unwrap();
        let _ = msg.release.recv_timeout(HANG_GUARD);
    }
}

/// Holds `child` inside a `Gate` handler (its mailbox empty) and returns the release.
fn hold(child: &ActorRef<Worker>) -> mpsc::Sender<()> {
    let (entered_tx, entered) = mpsc::channel();
    let (release, release_rx) = mpsc::channel();
    child
        .tell(Gate {
            entered: entered_tx,
            release: release_rx,
        })
        .unwrap();
    entered.recv_timeout(HANG_GUARD).expect("handler entered");
    release
}

#[test]
fn a_bounded_supervised_child_has_its_full_capacity_again_after_a_restart() {
    const CAPACITY: u32 = 4;
    let system = small_system();
    let pa = Probe::new();
    let (_sup, a) = system.supervise(spec(Strategy::OneForOne), |c| {
        c.spawn_with(pa.factory(), SpawnOptions::new().bounded(CAPACITY as usize))
    });

    // While the child is busy, fill its mailbox: a crash and messages behind it, which
    // the failed child holds until the restart.
    let release = hold(&a);
    a.tell(Crash("boom")).unwrap();
    for i in 1..CAPACITY {
        a.tell(Record(i)).unwrap();
    }
    assert!(matches!(a.tell(Record(99)), Err(TellError::Full(_))));
    release.send(()).unwrap();
    system.run_until_quiescent();
    assert_eq!(pa.records(), vec![(2, 1), (2, 2), (2, 3)]);
    assert_eq!(pa.started(), 2);

    // Everything was handled: the (empty) mailbox takes `CAPACITY` messages again.
    let release = hold(&a);
    let accepted: Vec<bool> = (0..CAPACITY).map(|i| a.tell(Record(i)).is_ok()).collect();
    release.send(()).unwrap();
    assert_eq!(
        accepted,
        vec![true; CAPACITY as usize],
        "mailbox capacity after restart"
    );
}

#[test]
fn a_child_that_panics_after_calling_stop_is_restarted_like_any_failed_child() {
    struct StopThenCrash;
    impl Message for StopThenCrash {
        type Reply = ();
    }
    impl Handler<StopThenCrash> for Worker {
        fn handle(&mut self, _: StopThenCrash, cx: &mut Context<Self>) {
            cx.stop();
            panic!("crash after stop");
        }
    }

    let system = small_system();
    let pa = Probe::new();
    let (sup, a) = system.supervise(spec(Strategy::OneForOne), |c| c.spawn(pa.factory()));
    let (_watcher, terminated) = watch(&system, &a);

    a.tell(StopThenCrash).unwrap();
    system.run_until_quiescent();

    assert!(sup.is_alive());
    // The panic wins over the stop request: the child fails and is restarted; the
    // stop request belonged to the old instance.
    let early = terminated.try_recv().ok();
    assert_eq!(early, None, "the child stopped instead of being restarted");
    assert!(a.is_alive());
    assert_eq!(system.block_on(a.ask(Generation)).unwrap(), 2);
}
