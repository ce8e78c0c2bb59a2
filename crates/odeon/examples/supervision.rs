//! A supervisor restarts a crashing worker in place (same `ActorRef`, fresh state) until
//! its restart limit is hit; a watcher actor sees the supervisor give up.
//!
//! Run: `cargo run --release -p odeon --example supervision`
//! (`RUST_LOG=odeon=debug` also shows the runtime's own log.)

use std::time::Duration;

use odeon::{
    Actor, ActorRef, AskError, Context, Handler, Message, StopReason, Strategy, Supervisor,
    SupervisorSpec, System, Terminated,
};
use tokio::sync::oneshot;

/// A worker whose only state is how many jobs this instance has done.
#[derive(Default)]
struct Worker {
    jobs: u32,
}

impl Actor for Worker {
    fn started(&mut self, cx: &mut Context<Self>) {
        println!("  worker {} started with jobs = {}", cx.id(), self.jobs);
    }
}

/// Does a job; replies with the number of jobs this instance has done.
struct Job;
impl Message for Job {
    type Reply = u32;
}

/// Makes the worker's handler panic.
struct Crash;
impl Message for Crash {
    type Reply = ();
}

impl Handler<Job> for Worker {
    fn handle(&mut self, _: Job, _cx: &mut Context<Self>) -> u32 {
        self.jobs += 1;
        self.jobs
    }
}

impl Handler<Crash> for Worker {
    fn handle(&mut self, _: Crash, _cx: &mut Context<Self>) {
        panic!("asked to crash (jobs done: {})", self.jobs);
    }
}

/// Watches an actor and reports how it stopped.
struct Watcher {
    report: Option<oneshot::Sender<Terminated>>,
}
impl Actor for Watcher {}

/// Starts watching the supervisor.
struct Watch(ActorRef<Supervisor>);
impl Message for Watch {
    type Reply = ();
}

impl Handler<Watch> for Watcher {
    fn handle(&mut self, msg: Watch, cx: &mut Context<Self>) {
        cx.watch(&msg.0);
    }
}

impl Handler<Terminated> for Watcher {
    fn handle(&mut self, msg: Terminated, _cx: &mut Context<Self>) {
        println!("  watcher: {} terminated: {}", msg.id, msg.reason);
        if let Some(report) = self.report.take() {
            let _ = report.send(msg);
        }
    }
}

fn main() {
    // A panic in a handler fails that actor only; print it as one line instead of the
    // default message with a backtrace hint.
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .map_or("(non-string payload)", String::as_str);
        println!("  worker panicked: {msg:?}");
    }));
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .init();

    let system = System::new();
    let spec = SupervisorSpec::new(Strategy::OneForOne).max_restarts(3, Duration::from_secs(5));
    println!("supervisor: one-for-one, at most 3 restarts within 5 s");
    let (supervisor, worker) = system.supervise(spec, |children| children.spawn(Worker::default));

    let (report_tx, report_rx) = oneshot::channel();
    let watcher = system.spawn(Watcher {
        report: Some(report_tx),
    });
    // `ask` so the watch is in place before anything crashes.
    system
        .block_on(watcher.ask(Watch(supervisor.clone())))
        .expect("the watcher is alive");

    let job = |worker: &ActorRef<Worker>| system.block_on(worker.ask(Job));
    let id = worker.id();
    for _ in 0..3 {
        job(&worker).expect("the worker is healthy");
    }
    println!(
        "worker {id} (child of supervisor {}) did 3 jobs",
        supervisor.id()
    );

    for crash in 1..=3 {
        println!("crash #{crash}:");
        worker.tell(Crash).expect("the worker is alive");
        // Same ref, same id, fresh state: the first job after a restart is job 1.
        let jobs = job(&worker).expect("the supervisor restarted the worker");
        println!("  same ref ({}), fresh state: jobs = {jobs}", worker.id());
        assert_eq!((worker.id(), jobs), (id, 1));
    }

    println!("crash #4: over the limit");
    worker.tell(Crash).expect("the worker is alive");
    let terminated = system
        .block_on(report_rx)
        .expect("the watcher reports the supervisor's end");
    assert_eq!(terminated.id, supervisor.id());
    assert_eq!(terminated.reason, StopReason::RestartLimit);

    match job(&worker) {
        Err(AskError::Stopped) => println!("asking the worker now fails: it was stopped too"),
        other => println!("unexpected: asking the worker returned {other:?}"),
    }
    println!(
        "supervisor alive: {}, worker alive: {}",
        supervisor.is_alive(),
        worker.is_alive()
    );
    system.shutdown();
}
