//! The tour: actors ping-ponging, a supervisor restarting a crashing child, and an async
//! handler awaiting another actor, all on one system.
//!
//! Run: `cargo run --release -p odeon --example demo`
//! (`RUST_LOG=odeon=debug` also shows the runtime's own log.)

use std::time::{Duration, Instant};

use odeon::{
    Actor, ActorRef, AsyncHandler, Context, Handler, Message, Strategy, SupervisorSpec, System,
};
use tokio::sync::oneshot;

/// Messages in the ping-pong game, pings and pongs together.
const MESSAGES: u64 = 1_000_000;
/// How long the async handler sleeps.
const NAP: Duration = Duration::from_millis(20);

fn main() {
    // A panicking handler fails its actor only: print the panic as one line.
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .map_or("(non-string payload)", String::as_str);
        println!("   ...its handler panicked: {msg:?}");
    }));
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .init();

    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let system = System::builder().workers(workers).build();
    println!("odeon demo: one system, {workers} worker threads\n");

    ping_pong(&system);
    supervision(&system);
    async_handler(&system);

    let clean = system.shutdown();
    println!("\nshutdown: every actor stopped and ran its hooks (clean: {clean})");
}

// ---------------------------------------------------------------------------------------
// 1. Ping-pong: two actors, `tell` only.

struct Pinger {
    ponger: ActorRef<Ponger>,
    messages: u64,
    started: Instant,
    done: Option<oneshot::Sender<Duration>>,
}
impl Actor for Pinger {}

struct Ponger {
    pinger: Option<ActorRef<Pinger>>,
}
impl Actor for Ponger {}

// `#[derive(Message)]` writes `impl Message`: the reply is `()` (tell only) unless
// `#[message(reply = T)]` names what an `ask` resolves to (see `Job` below).
#[derive(Message)]
struct Ping;

#[derive(Message)]
struct Pong;

#[derive(Message)]
struct Connect(ActorRef<Pinger>);

#[derive(Message)]
struct Start(oneshot::Sender<Duration>);

impl Handler<Connect> for Ponger {
    fn handle(&mut self, msg: Connect, _cx: &mut Context<Self>) {
        self.pinger = Some(msg.0);
    }
}

impl Handler<Ping> for Ponger {
    fn handle(&mut self, _: Ping, _cx: &mut Context<Self>) {
        if let Some(pinger) = &self.pinger {
            let _ = pinger.tell(Pong);
        }
    }
}

impl Handler<Start> for Pinger {
    fn handle(&mut self, msg: Start, _cx: &mut Context<Self>) {
        self.done = Some(msg.0);
        self.started = Instant::now();
        let _ = self.ponger.tell(Ping);
        self.messages += 1;
    }
}

impl Handler<Pong> for Pinger {
    fn handle(&mut self, _: Pong, cx: &mut Context<Self>) {
        self.messages += 1;
        if self.messages < MESSAGES {
            let _ = self.ponger.tell(Ping);
            self.messages += 1;
        } else if let Some(done) = self.done.take() {
            let _ = done.send(self.started.elapsed());
            // Stopping drops the pinger's ref to the ponger, which is then collected.
            cx.stop();
        }
    }
}

fn ping_pong(system: &System) {
    println!("1. ping-pong");
    let ponger = system.spawn(Ponger { pinger: None });
    let pinger = system.spawn(Pinger {
        ponger: ponger.clone(),
        messages: 0,
        started: Instant::now(),
        done: None,
    });
    ponger
        .tell(Connect(pinger.clone()))
        .expect("the ponger was just spawned");
    let (tx, rx) = oneshot::channel();
    pinger.tell(Start(tx)).expect("the pinger was just spawned");
    let elapsed = system.block_on(rx).expect("the pinger reports the end");
    println!(
        "   2 actors exchanged {} messages with `tell` in {:.0} ms: {:.0} ns per message",
        thousands(MESSAGES),
        elapsed.as_secs_f64() * 1e3,
        elapsed.as_nanos() as f64 / MESSAGES as f64
    );
}

// ---------------------------------------------------------------------------------------
// 2. Supervision: a crashing child is restarted in place.

#[derive(Default)]
struct Worker {
    jobs: u32,
}
impl Actor for Worker {}

#[derive(Message)]
#[message(reply = u32)]
struct Job;

#[derive(Message)]
struct Crash;

impl Handler<Job> for Worker {
    fn handle(&mut self, _: Job, _cx: &mut Context<Self>) -> u32 {
        self.jobs += 1;
        self.jobs
    }
}

impl Handler<Crash> for Worker {
    fn handle(&mut self, _: Crash, _cx: &mut Context<Self>) {
        panic!("asked to crash after {} jobs", self.jobs);
    }
}

fn supervision(system: &System) {
    println!("2. supervision (one-for-one, at most 3 restarts within 5 s)");
    let spec = SupervisorSpec::new(Strategy::OneForOne).max_restarts(3, Duration::from_secs(5));
    let (_supervisor, worker) = system.supervise(spec, |c| c.spawn(Worker::default));
    let mut jobs = 0;
    for _ in 0..3 {
        jobs = system
            .block_on(worker.ask(Job))
            .expect("the worker is healthy");
    }
    println!(
        "   worker {} did {jobs} jobs; then it is told to crash",
        worker.id()
    );
    worker.tell(Crash).expect("the worker is alive");
    let jobs = system
        .block_on(worker.ask(Job))
        .expect("the supervisor restarted the worker");
    println!(
        "   restarted in place: the same ref ({}) now reports {jobs} job (fresh state)",
        worker.id()
    );
}

// ---------------------------------------------------------------------------------------
// 3. Async handler: await another actor and a timer without holding a worker.

struct Db;
impl Actor for Db {}

#[derive(Message)]
#[message(reply = u32)]
struct Query(u32);

impl Handler<Query> for Db {
    fn handle(&mut self, msg: Query, _cx: &mut Context<Self>) -> u32 {
        msg.0 * 2
    }
}

struct Service {
    db: ActorRef<Db>,
}
impl Actor for Service {}

#[derive(Message)]
#[message(reply = u32)]
struct Lookup(u32);

impl AsyncHandler<Lookup> for Service {
    async fn handle(&mut self, msg: Lookup, _cx: &mut Context<Self>) -> u32 {
        let value = self.db.ask(Query(msg.0)).await.unwrap_or(0);
        tokio::time::sleep(NAP).await;
        value
    }
}

#[derive(Default)]
struct Ticker {
    ticks: u64,
}
impl Actor for Ticker {}

#[derive(Message)]
#[message(reply = u64)]
struct Tick;

impl Handler<Tick> for Ticker {
    fn handle(&mut self, _: Tick, _cx: &mut Context<Self>) -> u64 {
        self.ticks += 1;
        self.ticks
    }
}

fn async_handler(system: &System) {
    println!("3. async handler");
    let db = system.spawn(Db);
    let service = system.spawn(Service { db });
    let ticker = system.spawn(Ticker::default());
    let start = Instant::now();
    let (value, ticks) = system.block_on(async {
        let mut lookup = std::pin::pin!(service.ask(Lookup(21)));
        let mut ticks = 0;
        // Poll the lookup and keep the ticker busy until the lookup completes.
        loop {
            tokio::select! {
                reply = &mut lookup => return (reply.expect("the service replies"), ticks),
                tick = ticker.ask(Tick) => ticks = tick.expect("the ticker is alive"),
            }
        }
    });
    println!(
        "   `Service` asked `Db` and slept {} ms, holding no worker thread",
        NAP.as_millis()
    );
    println!(
        "   meanwhile `Ticker` answered {} asks; the service replied {value} after {:.0} ms",
        thousands(ticks),
        start.elapsed().as_secs_f64() * 1e3
    );
}

/// `1234567` as `1,234,567`.
fn thousands(mut n: u64) -> String {
    let mut groups = Vec::new();
    while n >= 1000 {
        groups.push(n % 1000);
        n /= 1000;
    }
    let mut out = n.to_string();
    for g in groups.iter().rev() {
        out.push_str(&format!(",{g:03}"));
    }
    out
}
