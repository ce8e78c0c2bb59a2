//! `migration-rings`, `big-state` and `queued`: moves between three nodes in one
//! process, on loopback.
//!
//! A [`Rover`] moves itself: its `Hop` handler notes the time and calls
//! `cx.migrate_to(next node)`; its `migrated` hook, on the new node, records the
//! latency (asked to arrived: freeze, encode, offer, ready, commit, decode, install)
//! and hops again until it has made its moves. The nodes share the process's clock,
//! so the time travels in the state as microseconds since the benchmark started.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use odeon::{Actor, Context, Handler, Message, System};
use odeon_remote::wire::NodeId;
use odeon_remote::{MigrateFromHandler, Node, Secret};
use serde::{Deserialize, Serialize};

use crate::stats::quantile;

/// Give up after this long (a guard against a hang, not a measurement).
const PATIENCE: Duration = Duration::from_secs(300);

static START: OnceLock<Instant> = OnceLock::new();
/// Latencies of the moves so far, in microseconds.
static LATENCIES: Mutex<Vec<u64>> = Mutex::new(Vec::new());
/// Rovers that made all their moves.
static DONE: AtomicU64 = AtomicU64::new(0);
/// Moves that did not happen (each is tried again).
static FAILED: AtomicU64 = AtomicU64::new(0);
/// Holds `HoldThenGo` until opened (`queued`).
static GATE: (Mutex<bool>, Condvar) = (Mutex::new(false), Condvar::new());

fn now_us() -> u64 {
    START.get_or_init(Instant::now).elapsed().as_micros() as u64
}

/// An actor that moves itself round `route`.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Rover {
    route: Vec<NodeId>,
    /// Where in `route` it is.
    at: usize,
    moves_left: u32,
    /// When the current move was asked for (`now_us`).
    asked_us: u64,
    /// Dead weight that travels (`big-state`).
    payload: Vec<u8>,
    /// `Tick`s handled.
    ticks: u64,
}

impl Rover {
    fn go(&mut self, cx: &mut Context<Self>) {
        self.asked_us = now_us();
        crate::steps::note("asked");
        let next = (self.at + 1) % self.route.len();
        cx.migrate_to(&self.route[next]);
    }
}

impl Actor for Rover {
    fn migrated(&mut self, cx: &mut Context<Self>) {
        crate::steps::note("migrated");
        let took = now_us().saturating_sub(self.asked_us);
        if let Ok(mut l) = LATENCIES.lock() {
            l.push(took);
        }
        self.at = (self.at + 1) % self.route.len();
        self.moves_left = self.moves_left.saturating_sub(1);
        if self.moves_left == 0 {
            DONE.fetch_add(1, Ordering::AcqRel);
        } else {
            let _ = cx.myself().tell(Hop);
        }
    }

    fn migration_failed(&mut self, cx: &mut Context<Self>, _: &(dyn std::error::Error + 'static)) {
        FAILED.fetch_add(1, Ordering::AcqRel);
        let _ = cx.myself().tell(Hop);
    }
}

/// Make the next move.
#[derive(Debug, Serialize, Deserialize)]
pub struct Hop;
impl Message for Hop {
    type Reply = ();
}
impl Handler<Hop> for Rover {
    fn handle(&mut self, _: Hop, cx: &mut Context<Self>) {
        self.go(cx);
    }
}

/// Wait for the gate, then move (the messages queued meanwhile go with the actor).
#[derive(Debug, Serialize, Deserialize)]
pub struct HoldThenGo;
impl Message for HoldThenGo {
    type Reply = ();
}
impl Handler<HoldThenGo> for Rover {
    fn handle(&mut self, _: HoldThenGo, cx: &mut Context<Self>) {
        let (lock, open) = &GATE;
        if let Ok(g) = lock.lock() {
            let _ = open.wait_timeout_while(g, PATIENCE, |opened| !*opened);
        }
        self.go(cx);
    }
}

/// One unit of queued work.
#[derive(Debug, Serialize, Deserialize)]
pub struct Tick;
impl Message for Tick {
    type Reply = ();
}
impl Handler<Tick> for Rover {
    fn handle(&mut self, _: Tick, _: &mut Context<Self>) {
        self.ticks += 1;
    }
}

/// How many `Tick`s it handled.
#[derive(Debug, Serialize, Deserialize)]
pub struct Ticks;
impl Message for Ticks {
    type Reply = u64;
}
impl Handler<Ticks> for Rover {
    fn handle(&mut self, _: Ticks, _: &mut Context<Self>) -> u64 {
        self.ticks
    }
}

odeon_remote::mobile_actor!(Rover = "bench.Rover" {
    Hop = "bench.Hop",
    HoldThenGo = "bench.HoldThenGo",
    Tick = "bench.Tick",
    Ticks = "bench.Ticks",
});

/// Three linked nodes in this process, each on its own system.
pub(crate) struct Cluster {
    members: Vec<(System, Node)>,
}

impl Cluster {
    pub(crate) fn start() -> Result<Cluster, String> {
        let mut members: Vec<(System, Node)> = Vec::new();
        for name in ["a", "b", "c"] {
            let system = System::new();
            let secret =
                Secret::new("odeon mobility benchmark secret").map_err(|e| e.to_string())?;
            let mut b = Node::builder(name)
                .secret(secret)
                .gossip_interval(Duration::from_millis(100))
                .lost_after(Duration::from_secs(5))
                .mobile::<Rover>();
            if let Some((_, first)) = members.first() {
                b = b.seed(first.listen_addr());
            }
            let node = system
                .block_on(b.start(&system.handle()))
                .map_err(|e| format!("node {name}: {e}"))?;
            members.push((system, node));
        }
        let deadline = Instant::now() + PATIENCE;
        while members.iter().any(|(_, n)| n.peers().len() < 2) {
            if Instant::now() > deadline {
                return Err("the three nodes did not link".into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(Cluster { members })
    }

    fn ids(&self) -> Vec<NodeId> {
        self.members.iter().map(|(_, n)| n.id().clone()).collect()
    }

    /// The mean freeze-to-commit the sources measured (`Metrics::migrations`), and the
    /// moves they counted.
    fn source_mean(&self) -> (Duration, u64) {
        let (mut total, mut n) = (Duration::ZERO, 0);
        for (_, node) in &self.members {
            let h = node.metrics().migrations().durations();
            if let Some(m) = h.mean() {
                total += m * h.count() as u32;
                n += h.count();
            }
        }
        (total / (n.max(1) as u32), n)
    }

    pub(crate) fn shutdown(self) {
        for (system, node) in self.members {
            system.block_on(node.leave());
            system.shutdown();
        }
    }
}

fn reset() {
    DONE.store(0, Ordering::Release);
    FAILED.store(0, Ordering::Release);
    if let Ok(mut l) = LATENCIES.lock() {
        l.clear();
    }
}

fn wait_done(n: u64) -> Result<(), String> {
    let deadline = Instant::now() + PATIENCE;
    while DONE.load(Ordering::Acquire) < n {
        if Instant::now() > deadline {
            return Err(format!(
                "{} of {n} rovers finished in {PATIENCE:?}",
                DONE.load(Ordering::Acquire)
            ));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(())
}

/// Latencies so far, in microseconds.
fn latencies() -> Vec<f64> {
    LATENCIES
        .lock()
        .map(|l| l.iter().map(|&us| us as f64).collect())
        .unwrap_or_default()
}

/// `actors` rovers of `payload` bytes each make `moves` moves round the three nodes,
/// all at once. Returns (moves per second, latencies in µs).
pub(crate) fn rings(
    cluster: &Cluster,
    actors: usize,
    moves: u32,
    payload: usize,
) -> Result<(f64, Vec<f64>), String> {
    reset();
    let (system, _) = &cluster.members[0];
    let route = cluster.ids();
    let rovers: Vec<_> = (0..actors)
        .map(|_| {
            system.spawn(Rover {
                route: route.clone(),
                moves_left: moves,
                payload: vec![0x5a; payload],
                ..Rover::default()
            })
        })
        .collect();
    let t = Instant::now();
    for r in &rovers {
        r.tell(Hop).map_err(|e| e.to_string())?;
    }
    wait_done(actors as u64)?;
    let secs = t.elapsed().as_secs_f64();
    for r in &rovers {
        r.stop();
    }
    Ok((f64::from(moves) * actors as f64 / secs, latencies()))
}

fn print_latency(what: &str, l: &[f64]) {
    println!(
        "  {what}: p50 {:.0} µs, p99 {:.0} µs, max {:.0} µs over {} moves; {} failed and retried",
        quantile(l, 0.5),
        quantile(l, 0.99),
        quantile(l, 1.0),
        l.len(),
        FAILED.load(Ordering::Acquire)
    );
}

/// `migration-rings`: for each count in `actors`, that many rovers × `moves` moves.
pub fn migration_rings(actors: &[usize], moves: u32) -> Result<(), String> {
    let cluster = Cluster::start()?;
    println!(
        "migration-rings: rovers moving a -> b -> c -> a, {moves} moves each \
         (targets: p50 < 200 µs on loopback, >= 10,000 moves/s in aggregate)"
    );
    for &n in actors {
        let (rate, l) = rings(&cluster, n, moves, 0)?;
        println!("  {n} actors: {rate:.0} moves/s");
        print_latency("asked to arrived", &l);
    }
    let (mean, counted) = cluster.source_mean();
    println!("  sources' freeze to commit (Metrics): mean {mean:?} over {counted} moves");
    cluster.shutdown();
    Ok(())
}

/// `big-state`: one rover with `bytes` of state makes `moves` moves.
pub fn big_state(bytes: usize, moves: u32) -> Result<(), String> {
    let cluster = Cluster::start()?;
    println!("big-state: one actor with {bytes} bytes of state, {moves} moves round a, b, c");
    let (rate, l) = rings(&cluster, 1, moves, bytes)?;
    println!("  {rate:.1} moves/s");
    print_latency("asked to arrived", &l);
    cluster.shutdown();
    Ok(())
}

/// `queued`: a rover with `queued` messages in its mailbox moves a -> b, `repeat`
/// times (a new rover each time); every message is handled on b.
pub fn queued(queued: u64, repeat: u32) -> Result<(), String> {
    let cluster = Cluster::start()?;
    println!("queued: one actor with {queued} queued messages moves a -> b, {repeat} times");
    let (system, _) = &cluster.members[0];
    let ids = cluster.ids();
    let mut all = Vec::new();
    for _ in 0..repeat {
        reset();
        *GATE.0.lock().map_err(|e| e.to_string())? = false;
        let rover = system.spawn(Rover {
            route: ids[..2].to_vec(),
            moves_left: 1,
            ..Rover::default()
        });
        rover.tell(HoldThenGo).map_err(|e| e.to_string())?;
        for _ in 0..queued {
            rover.tell(Tick).map_err(|e| e.to_string())?;
        }
        *GATE.0.lock().map_err(|e| e.to_string())? = true;
        GATE.1.notify_all();
        wait_done(1)?;
        // Through the stub left on a: after every Tick (same sender, in order).
        let ticks = system
            .block_on(rover.ask(Ticks))
            .map_err(|e| format!("ask: {e}"))?;
        if ticks != queued {
            return Err(format!("{ticks} of {queued} queued messages handled"));
        }
        all.extend(latencies());
        rover.stop();
    }
    print_latency("asked to arrived", &all);
    cluster.shutdown();
    Ok(())
}
