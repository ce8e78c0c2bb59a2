//! Core performance benchmarks of odeon.
//!
//! Two jobs:
//! 1. **Guard against regressions** of the hot paths: `tell` into a busy actor, a turn,
//!    scheduling an idle actor (slot, injector, wake-up of a parked thread), `ask`,
//!    spawning, and moving a large message.
//! 2. **Compare against a physical floor measured in the same run** (`baseline/*`: a raw
//!    single-producer single-consumer queue between two threads), so that on a noisy
//!    machine the ratio `tell/counting : baseline/spsc` stays meaningful even when the
//!    absolute numbers drift.
//!
//! Every benchmark whose work is asynchronous uses `iter_custom` and stops the clock
//! only once the receiving actor has observably finished (it signals a std channel, or
//! an `ask` returns, or `run_until_quiescent` returns). Unless the name says otherwise,
//! systems are `System::new()` (one worker per core). One criterion iteration moves
//! `N`/`R` items and declares them as `Throughput::Elements`, so time per item is
//! `time / N` and criterion's `thrpt` is items per second.
//!
//! Groups:
//! - `tell/*`: Savina "Counting": one producer (the bench thread, or an actor that
//!   re-sends itself batches of 1000) tells `N` `u64`s to one counting actor.
//! - `baseline/*`: the floor: `N` `u64`s through `crossbeam_queue::ArrayQueue` between
//!   two spinning threads (`crossbeam_utils::Backoff`: spin, then yield, so that a
//!   descheduled peer on a busy 2-core machine does not turn into a spin storm) (also with one `Box` per item, which is what a mailbox node
//!   costs), and through `std::sync::mpsc` for reference.
//! - `mailbox/*`: one receiver, `N` tells from 1 and from 2 producer threads, for an
//!   actor on the pool, an actor on its own thread (`SpawnOptions::blocking`), and a
//!   hand-written `SegQueue` + `AtomicBool` "scheduled" flag + parker consumer thread,
//!   the protocol `crates/odeon/src/mailbox/mod.rs` says the intrusive queue avoids.
//!   The runtime's `Queue` itself is crate-private, so there is no raw queue-vs-queue
//!   comparison.
//! - `pingpong/*`: round trips between two actors on one worker, across threads, and
//!   through `ask` (from an async handler and from outside via `block_on`), plus a
//!   hand-made ask (tell + `tokio::sync::oneshot`, no deadline) to price `ask`'s timer.
//!   `cross_worker/blocking` gives both actors their own thread (`SpawnOptions::blocking`);
//!   `cross_worker/two_systems` puts them in two single-worker systems, so every hop
//!   crosses threads through the other pool's injector; `_no_linger` is the same with
//!   `linger_rounds(0)`, so an actor whose mailbox runs dry gives up its turn at once.
//! - `spawn/*`: spawning actors that each handle one message, from outside and from an
//!   actor.
//! - `large_message/*`: a 1 MiB `Vec<u8>` message costs what an 8-byte one does (32
//!   payloads circulate between two actors; one element = one hop there and one back).
//!
//! Run: `cargo bench -p odeon-microbench --bench core` (about 4 minutes on 2 cores).

// `criterion_group!` generates an undocumented `pub fn`.
#![allow(missing_docs)]

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use criterion::{
    BenchmarkGroup, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
    measurement::WallTime,
};
use crossbeam_queue::SegQueue;
use crossbeam_utils::sync::Parker;
use odeon::{Actor, ActorRef, AsyncHandler, Context, Handler, Message, SpawnOptions, System};

mod common;
use common::{Counter, Inc, counting, spsc_ring};

/// Messages per iteration of the throughput benchmarks.
const N: u64 = 1_000_000;
/// Round trips per iteration of the same-worker ping-pong benchmarks.
const R: u64 = 100_000;
/// Round trips per iteration where every hop wakes a parked thread (microseconds each).
const R_WAKE: u64 = 10_000;
/// Actors per iteration of the spawn benchmarks.
const SPAWNS: u64 = 100_000;
/// Hops (a tell there and a tell back) per iteration of the large-message benchmarks.
const LARGE_N: u64 = 100_000;
/// Batch a producing actor sends per message to itself.
const BATCH: u64 = 1_000;
/// A long ask deadline for asks that wrap a whole iteration.
const LONG: Duration = Duration::from_secs(600);

fn group<'a>(c: &'a mut Criterion, name: &str, items: u64) -> BenchmarkGroup<'a, WallTime> {
    let mut g = c.benchmark_group(name);
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sampling_mode(SamplingMode::Flat)
        .throughput(Throughput::Elements(items));
    g
}

// ---------------------------------------------------------------------------------------
// Counting actor (shared by tell/*, mailbox/*)

/// Tells its target `remaining` `Inc`s, `BATCH` per message to itself (so that it
/// yields between batches like any fair producer).
struct Producer {
    target: ActorRef<Counter>,
}
impl Actor for Producer {}

struct Produce(u64);
impl Message for Produce {
    type Reply = ();
}

impl Handler<Produce> for Producer {
    fn handle(&mut self, msg: Produce, cx: &mut Context<Self>) {
        let n = msg.0.min(BATCH);
        for i in 0..n {
            let _ = self.target.tell(Inc(i));
        }
        if msg.0 > n {
            let _ = cx.notify(Produce(msg.0 - n));
        }
    }
}

fn tell(c: &mut Criterion) {
    let mut g = group(c, "tell", N);
    let system = System::new();

    let (counter, done) = Counter::new(N);
    let counter = system.spawn(counter);
    g.bench_function("counting", |b| {
        b.iter_custom(|iters| counting(&counter, &done, N, iters));
    });

    let (counter, done) = Counter::new(N);
    let counter = system.spawn(counter);
    let producer = system.spawn(Producer { target: counter });
    g.bench_function("counting_from_actor", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                let _ = producer.tell(Produce(N));
                black_box(done.recv().unwrap());
            }
            start.elapsed()
        });
    });
    g.finish();
}

// ---------------------------------------------------------------------------------------
// baseline/*

fn mpsc_channel(n: u64) -> Duration {
    let (tx, rx) = mpsc::channel::<u64>();
    let start = Instant::now();
    let consumer = thread::spawn(move || {
        let mut sum = 0u64;
        for _ in 0..n {
            sum = sum.wrapping_add(rx.recv().unwrap());
        }
        sum
    });
    for i in 0..n {
        tx.send(i).unwrap();
    }
    black_box(consumer.join().unwrap());
    start.elapsed()
}

fn baseline(c: &mut Criterion) {
    let mut g = group(c, "baseline", N);
    g.bench_function("spsc", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| spsc_ring(N, |i| i, |v| v)).sum());
    });
    g.bench_function("spsc_boxed", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| spsc_ring(N, Box::new, |v| *v)).sum());
    });
    g.bench_function("std_mpsc", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| mpsc_channel(N)).sum());
    });
    g.finish();
}

// ---------------------------------------------------------------------------------------
// mailbox/*

/// Runs `producers` threads, each calling `send` for its share of `n` values, and
/// returns once `wait` does.
fn fan_in(n: u64, producers: u64, send: impl Fn(u64) + Sync, wait: impl FnOnce()) -> Duration {
    let start = Instant::now();
    thread::scope(|s| {
        for p in 0..producers {
            let send = &send;
            s.spawn(move || {
                let share = n / producers + u64::from(p < n % producers);
                for i in 0..share {
                    send(i);
                }
            });
        }
        wait();
    });
    start.elapsed()
}

/// The protocol a runtime needs on top of a queue that cannot report "was empty":
/// push, then swap a "scheduled" flag; the producer that flips it schedules (here:
/// unparks) the consumer. The consumer drains, clears the flag, and re-checks the queue
/// to close the race with a concurrent push.
struct FlagMailbox {
    queue: SegQueue<u64>,
    scheduled: AtomicBool,
    ready: AtomicBool,
    unparker: crossbeam_utils::sync::Unparker,
}

impl FlagMailbox {
    fn push(&self, v: u64) {
        self.queue.push(v);
        if !self.scheduled.swap(true, Ordering::AcqRel) {
            self.ready.store(true, Ordering::Release);
            self.unparker.unpark();
        }
    }
}

/// A consumer thread for a `FlagMailbox` that signals `done` every `every` items.
fn flag_mailbox(every: u64) -> (Arc<FlagMailbox>, mpsc::Receiver<u64>, Arc<AtomicBool>) {
    let parker = Parker::new();
    let mb = Arc::new(FlagMailbox {
        queue: SegQueue::new(),
        scheduled: AtomicBool::new(false),
        ready: AtomicBool::new(false),
        unparker: parker.unparker().clone(),
    });
    let stop = Arc::new(AtomicBool::new(false));
    let (mut counter, rx) = Counter::new(every);
    {
        let mb = mb.clone();
        let stop = stop.clone();
        thread::spawn(move || {
            loop {
                while !mb.ready.swap(false, Ordering::Acquire) {
                    if stop.load(Ordering::Acquire) {
                        return;
                    }
                    parker.park();
                }
                loop {
                    while let Some(v) = mb.queue.pop() {
                        counter.count(v);
                    }
                    mb.scheduled.store(false, Ordering::SeqCst);
                    if mb.queue.is_empty() || mb.scheduled.swap(true, Ordering::AcqRel) {
                        break;
                    }
                }
            }
        });
    }
    (mb, rx, stop)
}

fn mailbox(c: &mut Criterion) {
    let mut g = group(c, "mailbox", N);
    let system = System::new();
    for producers in [1u64, 2] {
        let (counter, done) = Counter::new(N);
        let pool = system.spawn(counter);
        g.bench_function(format!("odeon_pool/{producers}p"), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| {
                        fan_in(
                            N,
                            producers,
                            |i| drop(pool.tell(Inc(i))),
                            || {
                                black_box(done.recv().unwrap());
                            },
                        )
                    })
                    .sum()
            });
        });

        let (counter, done) = Counter::new(N);
        let own = system.spawn_with(counter, SpawnOptions::new().blocking());
        g.bench_function(format!("odeon_blocking/{producers}p"), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| {
                        fan_in(
                            N,
                            producers,
                            |i| drop(own.tell(Inc(i))),
                            || {
                                black_box(done.recv().unwrap());
                            },
                        )
                    })
                    .sum()
            });
        });

        let (mb, done, stop) = flag_mailbox(N);
        g.bench_function(format!("segqueue_flag/{producers}p"), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| {
                        fan_in(
                            N,
                            producers,
                            |i| mb.push(i),
                            || {
                                black_box(done.recv().unwrap());
                            },
                        )
                    })
                    .sum()
            });
        });
        stop.store(true, Ordering::Release);
        mb.unparker.unpark();
    }
    g.finish();
}

// ---------------------------------------------------------------------------------------
// pingpong/*

struct Ponger {
    peer: Option<ActorRef<Pinger>>,
}
impl Actor for Ponger {}

struct Pinger {
    peer: ActorRef<Ponger>,
    left: u64,
    done: mpsc::Sender<()>,
}
impl Actor for Pinger {}

struct Ping;
impl Message for Ping {
    type Reply = ();
}
struct Pong;
impl Message for Pong {
    type Reply = ();
}
struct SetPeer(ActorRef<Pinger>);
impl Message for SetPeer {
    type Reply = ();
}
struct Start(u64);
impl Message for Start {
    type Reply = ();
}

impl Handler<SetPeer> for Ponger {
    fn handle(&mut self, msg: SetPeer, _: &mut Context<Self>) {
        self.peer = Some(msg.0);
    }
}

impl Handler<Ping> for Ponger {
    fn handle(&mut self, _: Ping, _: &mut Context<Self>) {
        if let Some(p) = &self.peer {
            let _ = p.tell(Pong);
        }
    }
}

impl Handler<Start> for Pinger {
    fn handle(&mut self, msg: Start, _: &mut Context<Self>) {
        self.left = msg.0;
        let _ = self.peer.tell(Ping);
    }
}

impl Handler<Pong> for Pinger {
    fn handle(&mut self, _: Pong, _: &mut Context<Self>) {
        self.left -= 1;
        if self.left == 0 {
            let _ = self.done.send(());
        } else {
            let _ = self.peer.tell(Ping);
        }
    }
}

/// A ping-pong pair; `ponger_sys` and `pinger_sys` may be different systems.
struct Pair {
    pinger: ActorRef<Pinger>,
    done: mpsc::Receiver<()>,
}

impl Pair {
    fn new(pinger_sys: &System, ponger_sys: &System, opts: SpawnOptions) -> Self {
        let ponger = ponger_sys.spawn_with(Ponger { peer: None }, opts.clone());
        let (tx, done) = mpsc::channel();
        let pinger = pinger_sys.spawn_with(
            Pinger {
                peer: ponger.clone(),
                left: 0,
                done: tx,
            },
            opts,
        );
        ponger_sys
            .block_on(ponger.ask(SetPeer(pinger.clone())))
            .unwrap();
        Pair { pinger, done }
    }

    fn run(&self, iters: u64, rounds: u64) -> Duration {
        let start = Instant::now();
        for _ in 0..iters {
            let _ = self.pinger.tell(Start(rounds));
            self.done.recv().unwrap();
        }
        start.elapsed()
    }
}

struct Echo;
impl Actor for Echo {}
impl Handler<Ping> for Echo {
    fn handle(&mut self, _: Ping, _: &mut Context<Self>) {}
}

struct Asker {
    echo: ActorRef<Echo>,
}
impl Actor for Asker {}

impl AsyncHandler<Start> for Asker {
    async fn handle(&mut self, msg: Start, _: &mut Context<Self>) {
        for _ in 0..msg.0 {
            self.echo.ask(Ping).await.unwrap();
        }
    }
}

/// A hand-made ask: a tell carrying a `tokio::sync::oneshot` sender, awaited without a
/// deadline. The difference to `ask` is the cost of `ask`'s timeout timer.
struct ReplyVia(tokio::sync::oneshot::Sender<()>);
impl Message for ReplyVia {
    type Reply = ();
}
impl Handler<ReplyVia> for Echo {
    fn handle(&mut self, msg: ReplyVia, _: &mut Context<Self>) {
        let _ = msg.0.send(());
    }
}

struct StartOneshot(u64);
impl Message for StartOneshot {
    type Reply = ();
}
impl AsyncHandler<StartOneshot> for Asker {
    async fn handle(&mut self, msg: StartOneshot, _: &mut Context<Self>) {
        for _ in 0..msg.0 {
            let (tx, rx) = tokio::sync::oneshot::channel();
            let _ = self.echo.tell(ReplyVia(tx));
            rx.await.unwrap();
        }
    }
}

fn pingpong(c: &mut Criterion) {
    let mut g = group(c, "pingpong", R);
    {
        let one = System::builder().workers(1).build();
        let pair = Pair::new(&one, &one, SpawnOptions::new());
        g.bench_function("same_worker/workers1", |b| {
            b.iter_custom(|i| pair.run(i, R))
        });
    }
    let system = System::new();
    {
        let pair = Pair::new(&system, &system, SpawnOptions::new());
        g.bench_function("same_worker/default", |b| b.iter_custom(|i| pair.run(i, R)));
    }
    {
        let echo = system.spawn(Echo);
        let asker = system.spawn(Asker { echo });
        g.bench_function("ask/from_async_handler", |b| {
            b.iter_custom(|iters| {
                let start = Instant::now();
                for _ in 0..iters {
                    system.block_on(asker.ask(Start(R)).timeout(LONG)).unwrap();
                }
                start.elapsed()
            });
        });
        g.bench_function("ask/from_async_handler_oneshot_no_timeout", |b| {
            b.iter_custom(|iters| {
                let start = Instant::now();
                for _ in 0..iters {
                    system
                        .block_on(asker.ask(StartOneshot(R)).timeout(LONG))
                        .unwrap();
                }
                start.elapsed()
            });
        });
    }

    g.throughput(Throughput::Elements(R_WAKE));
    {
        let pair = Pair::new(&system, &system, SpawnOptions::new().blocking());
        g.bench_function("cross_worker/blocking", |b| {
            b.iter_custom(|i| pair.run(i, R_WAKE));
        });
    }
    // With and without lingering (`SystemBuilder::linger_rounds`), side by side.
    for (name, linger) in [
        ("cross_worker/two_systems", odeon::defaults::LINGER_ROUNDS),
        ("cross_worker/two_systems_no_linger", 0),
    ] {
        let one_worker = || System::builder().workers(1).linger_rounds(linger).build();
        let (a, b_sys) = (one_worker(), one_worker());
        let pair = Pair::new(&a, &b_sys, SpawnOptions::new());
        g.bench_function(name, |b| {
            b.iter_custom(|i| pair.run(i, R_WAKE));
        });
    }
    {
        let echo = system.spawn(Echo);
        g.bench_function("ask/from_outside_block_on", |b| {
            b.iter_custom(|iters| {
                let start = Instant::now();
                for _ in 0..iters * R_WAKE {
                    system.block_on(echo.ask(Ping)).unwrap();
                }
                start.elapsed()
            });
        });
    }
    g.finish();
}

// ---------------------------------------------------------------------------------------
// spawn/*

struct Empty;
impl Actor for Empty {}
impl Handler<Ping> for Empty {
    fn handle(&mut self, _: Ping, _: &mut Context<Self>) {}
}

struct Parent {
    kids: Vec<ActorRef<Empty>>,
}
impl Actor for Parent {}

struct SpawnKids(u64);
impl Message for SpawnKids {
    type Reply = ();
}
struct DropKids;
impl Message for DropKids {
    type Reply = ();
}

impl Handler<SpawnKids> for Parent {
    fn handle(&mut self, msg: SpawnKids, cx: &mut Context<Self>) {
        self.kids.reserve(msg.0 as usize);
        for _ in 0..msg.0 {
            let kid = cx.spawn(Empty);
            let _ = kid.tell(Ping);
            self.kids.push(kid);
        }
    }
}

impl Handler<DropKids> for Parent {
    fn handle(&mut self, _: DropKids, _: &mut Context<Self>) {
        self.kids = Vec::new();
    }
}

fn spawn(c: &mut Criterion) {
    let mut g = group(c, "spawn", SPAWNS);
    let system = System::new();
    g.bench_function("cost/top_level", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let mut refs = Vec::with_capacity(SPAWNS as usize);
                let start = Instant::now();
                for _ in 0..SPAWNS {
                    let a = system.spawn(Empty);
                    let _ = a.tell(Ping);
                    refs.push(a);
                }
                system.run_until_quiescent();
                total += start.elapsed();
                drop(refs); // collected (Unreferenced) off the clock
                system.run_until_quiescent();
            }
            total
        });
    });
    g.bench_function("cost/top_level_spawn_drop", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                for _ in 0..SPAWNS {
                    drop(system.spawn(Empty));
                }
                system.run_until_quiescent();
            }
            start.elapsed()
        });
    });
    let parent = system.spawn(Parent { kids: Vec::new() });
    g.bench_function("cost/children", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let start = Instant::now();
                system
                    .block_on(parent.ask(SpawnKids(SPAWNS)).timeout(LONG))
                    .unwrap();
                system.run_until_quiescent();
                total += start.elapsed();
                let _ = parent.tell(DropKids);
                system.run_until_quiescent();
            }
            total
        });
    });
    g.finish();
}

// ---------------------------------------------------------------------------------------
// large_message/*

/// `POOL` payloads circulate between a `Source` and a `Sink` on the pool: the source
/// tells a payload to the sink, the sink tells it back, and the source sends it out
/// again until `left` reaches 0. Nothing is allocated on the clock except the mailbox
/// nodes, and the 1 MiB buffers are reused, so the only difference between the
/// variants is the payload's type.
struct Source<T: Send + 'static> {
    sink: ActorRef<Sink<T>>,
    pool: Vec<T>,
    left: u64,
    done: mpsc::Sender<()>,
}
impl<T: Send + 'static> Actor for Source<T> {}

struct Sink<T: Send + 'static> {
    source: Option<ActorRef<Source<T>>>,
}
impl<T: Send + 'static> Actor for Sink<T> {}

struct Carry<T>(T);
impl<T: Send + 'static> Message for Carry<T> {
    type Reply = ();
}
struct Back<T>(T);
impl<T: Send + 'static> Message for Back<T> {
    type Reply = ();
}
struct SetSource<T: Send + 'static>(ActorRef<Source<T>>);
impl<T: Send + 'static> Message for SetSource<T> {
    type Reply = ();
}
impl<T: Send + 'static> Handler<SetSource<T>> for Sink<T> {
    fn handle(&mut self, msg: SetSource<T>, _: &mut Context<Self>) {
        self.source = Some(msg.0);
    }
}

impl<T: Send + 'static> Handler<Carry<T>> for Sink<T> {
    fn handle(&mut self, msg: Carry<T>, _: &mut Context<Self>) {
        if let Some(s) = &self.source {
            let _ = s.tell(Back(msg.0));
        }
    }
}

impl<T: Send + 'static> Handler<Start> for Source<T> {
    fn handle(&mut self, msg: Start, _: &mut Context<Self>) {
        self.left = msg.0;
        while self.left > 0 {
            let Some(p) = self.pool.pop() else { break };
            self.left -= 1;
            let _ = self.sink.tell(Carry(p));
        }
    }
}

impl<T: Send + 'static> Handler<Back<T>> for Source<T> {
    fn handle(&mut self, msg: Back<T>, _: &mut Context<Self>) {
        if self.left > 0 {
            self.left -= 1;
            let _ = self.sink.tell(Carry(msg.0));
        } else {
            self.pool.push(msg.0);
            if self.pool.len() == POOL {
                let _ = self.done.send(());
            }
        }
    }
}

const POOL: usize = 32;

/// Spawns a circulating pair holding `pool`; `Start(n)` runs `n` hops, then the
/// receiver gets one `()`.
fn circulate<T: Send + 'static>(
    system: &System,
    pool: Vec<T>,
) -> (ActorRef<Source<T>>, mpsc::Receiver<()>) {
    assert_eq!(pool.len(), POOL);
    let sink = system.spawn(Sink { source: None });
    let (done, rx) = mpsc::channel();
    let source = system.spawn(Source {
        sink: sink.clone(),
        pool,
        left: 0,
        done,
    });
    system
        .block_on(sink.ask(SetSource(source.clone())))
        .unwrap();
    (source, rx)
}

struct Peek;
impl Message for Peek {
    type Reply = Vec<usize>;
}
impl Handler<Peek> for Source<Vec<u8>> {
    fn handle(&mut self, _: Peek, _: &mut Context<Self>) -> Vec<usize> {
        self.pool.iter().map(|b| b.as_ptr() as usize).collect()
    }
}

fn laps<T: Send + 'static>(
    source: &ActorRef<Source<T>>,
    done: &mpsc::Receiver<()>,
    iters: u64,
) -> Duration {
    let start = Instant::now();
    for _ in 0..iters {
        let _ = source.tell(Start(LARGE_N));
        done.recv().unwrap();
    }
    start.elapsed()
}

fn large_message(c: &mut Criterion) {
    let mut g = group(c, "large_message", LARGE_N);
    let system = System::new();
    let bufs: Vec<Vec<u8>> = (0..POOL).map(|i| vec![i as u8; 1 << 20]).collect();
    let mut before: Vec<usize> = bufs.iter().map(|b| b.as_ptr() as usize).collect();
    let (source, done) = circulate(&system, bufs);
    // One lap first: moved, not copied, means the very same buffers come back.
    let _ = source.tell(Start(10 * POOL as u64));
    done.recv().unwrap();
    let mut after = system.block_on(source.ask(Peek)).unwrap();
    before.sort_unstable();
    after.sort_unstable();
    assert_eq!(before, after, "a 1 MiB payload was copied");
    g.bench_function("vec_1mib", |b| b.iter_custom(|i| laps(&source, &done, i)));

    let (source, done) = circulate(&system, (0..POOL as u64).collect());
    g.bench_function("u64", |b| b.iter_custom(|i| laps(&source, &done, i)));
    g.finish();
}

// ---------------------------------------------------------------------------------------

criterion_group!(
    benches,
    tell,
    baseline,
    mailbox,
    pingpong,
    spawn,
    large_message
);
criterion_main!(benches);
