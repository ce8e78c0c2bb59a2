//! The fixture of `supervision_tree.rs`: a `Worker` built by a factory that numbers its
//! instances (generation 1, 2, ...) and records its lifecycle into a shared `Probe`,
//! the messages it handles, and a `Watcher` that forwards `Terminated`s.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use odeon::{
    Actor, ActorRef, Context, Handler, Message, StopReason, Strategy, SupervisorSpec, System,
    Terminated,
};

pub(crate) const HANG_GUARD: Duration = Duration::from_secs(10);

/// What one supervised child recorded across its restarts.
#[derive(Clone, Default)]
pub(crate) struct Probe {
    built: Arc<AtomicUsize>,
    started: Arc<AtomicUsize>,
    stopped: Arc<Mutex<Vec<StopReason>>>,
    records: Arc<Mutex<Vec<(usize, u32)>>>,
    /// Every instance panics in `started`.
    panics_in_started: bool,
}

impl Probe {
    /// A probe whose every instance panics in `started`.
    pub(crate) fn panicking_in_started() -> Self {
        Self {
            panics_in_started: true,
            ..Self::default()
        }
    }

    pub(crate) fn factory(&self) -> impl FnMut() -> Worker + Send + 'static {
        let probe = self.clone();
        move || Worker {
            generation: probe.built.fetch_add(1, Ordering::SeqCst) + 1,
            count: 0,
            probe: probe.clone(),
        }
    }

    pub(crate) fn started(&self) -> usize {
        self.started.load(Ordering::SeqCst)
    }

    pub(crate) fn stopped(&self) -> Vec<StopReason> {
        self.stopped.lock().unwrap().clone()
    }

    pub(crate) fn records(&self) -> Vec<(usize, u32)> {
        self.records.lock().unwrap().clone()
    }
}

pub(crate) struct Worker {
    generation: usize,
    count: u32,
    probe: Probe,
}

impl Actor for Worker {
    fn started(&mut self, _: &mut Context<Self>) {
        self.probe.started.fetch_add(1, Ordering::SeqCst);
        if self.probe.panics_in_started {
            panic!("bad start");
        }
    }

    fn stopped(&mut self, reason: &StopReason) {
        self.probe.stopped.lock().unwrap().push(reason.clone());
    }
}

/// Adds one to the counter and returns it.
pub(crate) struct Inc;
impl Message for Inc {
    type Reply = u32;
}
impl Handler<Inc> for Worker {
    fn handle(&mut self, _: Inc, _: &mut Context<Self>) -> u32 {
        self.count += 1;
        self.count
    }
}

/// Which instance is answering.
pub(crate) struct Generation;
impl Message for Generation {
    type Reply = usize;
}
impl Handler<Generation> for Worker {
    fn handle(&mut self, _: Generation, _: &mut Context<Self>) -> usize {
        self.generation
    }
}

/// Records `(generation, value)` into the probe.
pub(crate) struct Record(pub(crate) u32);
impl Message for Record {
    type Reply = ();
}
impl Handler<Record> for Worker {
    fn handle(&mut self, msg: Record, _: &mut Context<Self>) {
        let entry = (self.generation, msg.0);
        self.probe.records.lock().unwrap().push(entry);
    }
}

/// Panics.
pub(crate) struct Crash;
impl Message for Crash {
    type Reply = ();
}
impl Handler<Crash> for Worker {
    fn handle(&mut self, _: Crash, _: &mut Context<Self>) {
        panic!("crash");
    }
}

/// Fails with `cx.fail`, and still replies.
pub(crate) struct Fail(pub(crate) &'static str);
impl Message for Fail {
    type Reply = &'static str;
}
impl Handler<Fail> for Worker {
    fn handle(&mut self, msg: Fail, cx: &mut Context<Self>) -> &'static str {
        cx.fail(msg.0);
        "replied"
    }
}

/// Stops normally.
pub(crate) struct Quit;
impl Message for Quit {
    type Reply = ();
}
impl Handler<Quit> for Worker {
    fn handle(&mut self, _: Quit, cx: &mut Context<Self>) {
        cx.stop();
    }
}

/// Blocks the handler until released (to hold a restart signal in the mailbox).
pub(crate) struct Gate {
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

/// Holds `child` inside a `Gate` handler and returns the release.
pub(crate) fn hold(child: &ActorRef<Worker>) -> mpsc::Sender<()> {
    let (entered_tx, entered) = mpsc::channel();
    let (release, release_rx) = mpsc::channel();
    let gate = Gate {
        entered: entered_tx,
        release: release_rx,
    };
    child.tell(gate).unwrap();
    entered.recv_timeout(HANG_GUARD).expect("handler entered");
    release
}

/// Forwards every `Terminated` it receives to a channel.
pub(crate) struct Watcher {
    tx: mpsc::Sender<Terminated>,
}
impl Actor for Watcher {}
pub(crate) struct Watch<B: Actor>(pub(crate) ActorRef<B>);
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

pub(crate) fn watch<B: Actor>(
    system: &System,
    target: &ActorRef<B>,
) -> (ActorRef<Watcher>, mpsc::Receiver<Terminated>) {
    let (tx, rx) = mpsc::channel();
    let watcher = system.spawn(Watcher { tx });
    system.block_on(watcher.ask(Watch(target.clone()))).unwrap();
    (watcher, rx)
}

pub(crate) fn small_system() -> System {
    System::builder().workers(2).build()
}

pub(crate) fn spec(strategy: Strategy) -> SupervisorSpec {
    SupervisorSpec::new(strategy).max_restarts(10, Duration::from_secs(60))
}

/// Waits until `cond` holds; fails the test after `HANG_GUARD`.
pub(crate) fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < HANG_GUARD,
            "timed out waiting for: {what}"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}
