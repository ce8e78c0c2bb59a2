//! Memory cost of idle actors.
//!
//! ```text
//! cargo run --release -p odeon --example memory -- <N>      (default N = 1000000)
//! ```
//!
//! 1. Spawns `N` idle actors whose state is a unit struct, keeping every `ActorRef` in
//!    a `Vec` (8 bytes each, subtracted below), and waits for quiescence.
//! 2. Sends each actor one message and waits for quiescence again.
//! 3. Drops the refs (the actors are collected as unreferenced), waits, shuts down.
//!
//! After each phase it prints the wall time, RSS (`VmRSS`) and peak RSS (`VmHWM`) from
//! `/proc/self/status`, and the live heap bytes counted by a wrapping global allocator
//! (requested sizes, so without malloc's own per-chunk overhead, which RSS includes).
//! During the spawn phase it also records a histogram of allocation sizes: the size
//! allocated once per actor is the actor's cell (`size_of` of the runtime's cell type
//! is not reachable from outside the crate).

use std::alloc::{GlobalAlloc, Layout, System as Sys};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use odeon::{Actor, ActorRef, Context, Handler, Message, System};

/// Counts live heap bytes, and allocation sizes while `TRACK` is set.
struct Counting;

static LIVE: AtomicI64 = AtomicI64::new(0);
static TRACK: AtomicBool = AtomicBool::new(false);
/// Allocations by size while tracking: bucket `i` holds sizes `8*i+1 ..= 8*(i+1)`; the
/// last bucket holds everything larger.
static SIZES: [AtomicU64; 129] = [const { AtomicU64::new(0) }; 129];

// SAFETY: forwards every call to the system allocator unchanged; the counters are
// plain atomics and never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as i64, Ordering::Relaxed);
        if TRACK.load(Ordering::Relaxed) {
            let b = (layout.size().saturating_sub(1) / 8).min(SIZES.len() - 1);
            SIZES[b].fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: same contract as ours.
        unsafe { Sys.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as i64, Ordering::Relaxed);
        // SAFETY: same contract as ours.
        unsafe { Sys.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size as i64 - layout.size() as i64, Ordering::Relaxed);
        if TRACK.load(Ordering::Relaxed) {
            let b = (new_size.saturating_sub(1) / 8).min(SIZES.len() - 1);
            SIZES[b].fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: same contract as ours.
        unsafe { Sys.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// An idle actor with no state.
struct Idle;
impl Actor for Idle {}

struct Poke;
impl Message for Poke {
    type Reply = ();
}
impl Handler<Poke> for Idle {
    fn handle(&mut self, _: Poke, _: &mut Context<Self>) {}
}

/// (VmRSS, VmHWM) in bytes.
fn rss() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn live() -> i64 {
    LIVE.load(Ordering::Relaxed)
}

fn mib(b: u64) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

fn report(phase: &str, took: Duration, n: u64) {
    let (rss, hwm) = rss();
    println!(
        "{phase:<34} {:>9.3} s  {:>8.1} ns/actor   RSS {:>9.1} MiB   peak {:>9.1} MiB   heap {:>9.1} MiB",
        took.as_secs_f64(),
        took.as_nanos() as f64 / n as f64,
        mib(rss),
        mib(hwm),
        mib(live().max(0) as u64),
    );
}

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .map(|a| a.replace('_', "").parse().expect("N must be a number"))
        .unwrap_or(1_000_000);
    let system = System::new();
    system.run_until_quiescent();
    println!(
        "N = {n}; size_of: ActorRef = {} B, Option<ActorRef> = {} B, Context<Idle> = {} B, Idle = {} B",
        size_of::<ActorRef<Idle>>(),
        size_of::<Option<ActorRef<Idle>>>(),
        size_of::<Context<Idle>>(),
        size_of::<Idle>(),
    );

    // Measured before the Vec exists: its pages enter RSS as refs are pushed, and its
    // requested bytes count in the heap, 8 B per actor either way.
    let (rss0, _) = rss();
    let heap0 = live();
    let mut refs: Vec<ActorRef<Idle>> = Vec::with_capacity(n as usize);
    report("start", Duration::ZERO, n);

    TRACK.store(true, Ordering::Relaxed);
    let t = Instant::now();
    for _ in 0..n {
        refs.push(system.spawn(Idle));
    }
    let spawn = t.elapsed();
    report("spawn N (spawn calls)", spawn, n);
    let t = Instant::now();
    system.run_until_quiescent();
    TRACK.store(false, Ordering::Relaxed);
    report("  ... until quiescent", t.elapsed(), n);
    report("  spawn total", spawn + t.elapsed(), n);

    let (rss1, _) = rss();
    let heap1 = live();
    let per_rss = (rss1 as f64 - rss0 as f64) / n as f64 - 8.0;
    let per_heap = (heap1 - heap0) as f64 / n as f64 - 8.0;
    println!(
        "idle actor: {per_rss:.1} B of RSS, {per_heap:.1} B of requested heap (both without the 8 B ActorRef in the Vec)"
    );
    println!("allocations during the spawn phase, by size (count >= N/100):");
    for (i, c) in SIZES.iter().enumerate() {
        let c = c.load(Ordering::Relaxed);
        if c >= n / 100 && c > 0 {
            let size = if i == SIZES.len() - 1 {
                format!("> {} B", 8 * i)
            } else {
                format!("{:>4}..={:<4} B", 8 * i + 1, 8 * (i + 1))
            };
            println!(
                "  {size:>14}: {c:>10} ({:.2} per actor)",
                c as f64 / n as f64
            );
        }
    }

    let t = Instant::now();
    for r in &refs {
        let _ = r.tell(Poke);
    }
    let tell = t.elapsed();
    report("tell each one message", tell, n);
    let t = Instant::now();
    system.run_until_quiescent();
    report("  ... until quiescent", t.elapsed(), n);
    report("  message total", tell + t.elapsed(), n);
    assert_eq!(system.live_actors(), n);

    let t = Instant::now();
    drop(refs);
    system.run_until_quiescent();
    report("drop refs, collect (GC)", t.elapsed(), n);
    println!("live actors after collection: {}", system.live_actors());

    let t = Instant::now();
    let clean = system.shutdown();
    report("shutdown", t.elapsed(), n);
    assert!(clean);
}
