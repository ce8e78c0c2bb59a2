//! `odeon-soak`: the workload of `scripts/soak.sh` (long runs, memory and descriptors
//! flat) and of `scripts/netns.sh` (faults on real interfaces).
//!
//! ```text
//! ODEON_SECRET=... odeon-soak node --name a [--listen A] [--seed A]... [--peer b]... [--seconds S]
//! ODEON_SECRET=... odeon-soak send --name a [--listen A] --seed A --target b [--seconds S] [--rate R]
//! ```
//! Every node hosts a `Sink` registered as `sink-<name>` and lets others spawn workers.
//! `node` with peers runs, against each peer, numbered tells, pings (asks), and once a
//! second a worker spawned on the peer, asked, watched and stopped; it prints a `stats`
//! line every `--report-s` seconds. Without peers it only serves. `send` runs one
//! measured scenario against `--target`: numbered tells at `--rate` per second and a
//! ping every 100 ms for `--seconds`, then waits for the tells to drain and prints one
//! `result` line: what the target's sink received, the asks' outcomes and their
//! round-trip times. Output lines are stable: the scripts read them.

mod actors;

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use actors::{Count, Ping, Report, Seq, Sink, WatchIt, Watcher, Work, Worker};
use odeon::{ActorRef, AskError, System};
use odeon_remote::{Node, Secret};

struct Args {
    mode: String,
    name: String,
    listen: SocketAddr,
    seeds: Vec<SocketAddr>,
    peers: Vec<String>,
    seconds: Option<u64>,
    rate: u64,
    report_s: u64,
    lost_after_ms: u64,
}

fn parse() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let mode = it
        .next()
        .ok_or("usage: odeon-soak node|send --name N [flags]")?;
    if mode != "node" && mode != "send" {
        return Err(format!("unknown mode {mode:?} (node or send)"));
    }
    let mut a = Args {
        mode,
        name: String::new(),
        listen: SocketAddr::from(([127, 0, 0, 1], 0)),
        seeds: Vec::new(),
        peers: Vec::new(),
        seconds: None,
        rate: 200,
        report_s: 5,
        lost_after_ms: 2000,
    };
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let bad = |e: &dyn std::fmt::Display| format!("{flag} {value}: {e}");
        let num = || value.parse::<u64>().map_err(|e| bad(&e));
        let addr = || value.parse::<SocketAddr>().map_err(|e| bad(&e));
        match flag.as_str() {
            "--name" => a.name = value.clone(),
            "--listen" => a.listen = addr()?,
            "--seed" => a.seeds.push(addr()?),
            "--peer" | "--target" => a.peers.push(value.clone()),
            "--seconds" => a.seconds = Some(num()?),
            "--rate" => a.rate = num()?.max(1),
            "--report-s" => a.report_s = num()?.max(1),
            "--lost-after-ms" => a.lost_after_ms = num()?,
            other => return Err(format!("unknown flag {other}")),
        }
    }
    if a.name.is_empty() {
        return Err("--name is required".into());
    }
    if a.mode == "send" && a.peers.len() != 1 {
        return Err("send needs exactly one --target".into());
    }
    Ok(a)
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("odeon-soak: {e}");
            return ExitCode::from(2);
        }
    };
    let secret = match std::env::var("ODEON_SECRET")
        .map_err(|e| e.to_string())
        .and_then(|s| Secret::new(s).map_err(|e| e.to_string()))
    {
        Ok(s) => s,
        Err(e) => {
            eprintln!("odeon-soak: ODEON_SECRET (the cluster secret, at least 16 bytes): {e}");
            return ExitCode::from(2);
        }
    };
    let system = System::new();
    let mut builder = Node::builder(args.name.clone())
        .listen(args.listen)
        .secret(secret)
        .lost_after(Duration::from_millis(args.lost_after_ms))
        .spawnable::<Worker>();
    for s in &args.seeds {
        builder = builder.seed(*s);
    }
    let node = match system.block_on(builder.start(&system.handle())) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("odeon-soak: {e}");
            return ExitCode::from(1);
        }
    };
    println!("listening {}", node.listen_addr());
    let sink = system.spawn(Sink::default());
    if let Err(e) = node.register(&format!("sink-{}", args.name), &sink) {
        eprintln!("odeon-soak: {e}");
        return ExitCode::from(1);
    }
    println!("ready");
    let code = if args.mode == "send" {
        send(&system, &node, &args)
    } else {
        run(&system, &node, &args);
        ExitCode::SUCCESS
    };
    system.block_on(node.leave());
    system.shutdown();
    code
}

/// A number that differs between runs (a restarted sender is a new run).
fn run_id() -> u64 {
    RandomState::new().hash_one(std::process::id())
}

/// Finds `sink-<peer>`, trying until `patience` runs out.
fn find_sink(
    system: &System,
    node: &Node,
    peer: &str,
    patience: Duration,
) -> Option<ActorRef<Sink>> {
    let deadline = Instant::now() + patience;
    loop {
        if let Ok(s) = system.block_on(node.lookup::<Sink>(&format!("sink-{peer}"))) {
            return Some(s);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Counters shared by a run's threads.
#[derive(Default)]
struct Stats {
    tells: AtomicU64,
    tell_errors: AtomicU64,
    asks_ok: AtomicU64,
    unreachable: AtomicU64,
    timeouts: AtomicU64,
    other_errors: AtomicU64,
    spawns: AtomicU64,
    spawn_errors: AtomicU64,
    stopped: AtomicU64,
    /// Round-trip times of successful asks since the last report. Unit: microseconds.
    rtts: Mutex<Vec<u64>>,
}

impl Stats {
    fn ask_outcome<T>(&self, started: Instant, r: &Result<T, AskError>) {
        match r {
            Ok(_) => {
                self.asks_ok.fetch_add(1, Relaxed);
                let us = started.elapsed().as_micros() as u64;
                self.rtts.lock().unwrap().push(us);
            }
            Err(AskError::Unreachable) => _ = self.unreachable.fetch_add(1, Relaxed),
            Err(AskError::Timeout(_)) => _ = self.timeouts.fetch_add(1, Relaxed),
            Err(_) => _ = self.other_errors.fetch_add(1, Relaxed),
        }
    }

    /// `p50 p99 max` of the round trips since the last call, in microseconds.
    fn take_rtts(&self) -> (u64, u64, u64) {
        let mut v = std::mem::take(&mut *self.rtts.lock().unwrap());
        if v.is_empty() {
            return (0, 0, 0);
        }
        v.sort_unstable();
        let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
        (at(0.5), at(0.99), v[v.len() - 1])
    }
}

/// The `node` mode: serve, and run the mixed workload against every peer.
fn run(system: &System, node: &Node, args: &Args) {
    let stats = Stats::default();
    let stop = AtomicBool::new(false);
    let watcher = system.spawn(Watcher::default());
    let run = run_id();
    let started = Instant::now();
    let sinks: Vec<Mutex<Option<ActorRef<Sink>>>> =
        args.peers.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        // Numbered tells: each peer's sink checks the sequence.
        s.spawn(|| {
            let tick = Duration::from_micros(1_000_000 / args.rate);
            let mut n = vec![0u64; args.peers.len()];
            while !stop.load(Relaxed) {
                for (i, sink) in sinks.iter().enumerate() {
                    let Some(sink) = sink.lock().unwrap().clone() else {
                        continue;
                    };
                    match sink.tell(Seq {
                        run,
                        n: n[i],
                        exact: false,
                    }) {
                        Ok(()) => _ = stats.tells.fetch_add(1, Relaxed),
                        Err(_) => _ = stats.tell_errors.fetch_add(1, Relaxed),
                    }
                    n[i] += 1;
                }
                std::thread::sleep(tick);
            }
        });
        // Pings; a failed one makes the sink be looked up again (its node may have
        // restarted).
        s.spawn(|| {
            let mut k = 0;
            while !stop.load(Relaxed) {
                for (peer, sink) in args.peers.iter().zip(&sinks) {
                    let current = sink.lock().unwrap().clone();
                    let Some(target) = current.or_else(|| {
                        let found = find_sink(system, node, peer, Duration::ZERO);
                        sink.lock().unwrap().clone_from(&found);
                        found
                    }) else {
                        continue;
                    };
                    let t = Instant::now();
                    let r = system.block_on(target.ask(Ping(k)).timeout(Duration::from_secs(2)));
                    stats.ask_outcome(t, &r);
                    if r.is_err() {
                        *sink.lock().unwrap() = None;
                    }
                    k += 1;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        // Once a second: a worker spawned on a peer, asked, watched, then stopped.
        s.spawn(|| {
            let mut i = 0;
            while !stop.load(Relaxed) && !args.peers.is_empty() {
                let peer = &args.peers[i % args.peers.len()];
                i += 1;
                match system.block_on(node.spawn_on::<Worker>(peer, 1)) {
                    Ok(w) => {
                        stats.spawns.fetch_add(1, Relaxed);
                        let t = Instant::now();
                        let r = system.block_on(w.ask(Work(1)).timeout(Duration::from_secs(2)));
                        stats.ask_outcome(t, &r);
                        if system.block_on(watcher.ask(WatchIt(w.clone()))).is_ok() {
                            w.stop();
                            stats.stopped.fetch_add(1, Relaxed);
                        }
                    }
                    Err(_) => _ = stats.spawn_errors.fetch_add(1, Relaxed),
                }
                std::thread::sleep(Duration::from_secs(1));
            }
        });
        let mut next = started;
        loop {
            next += Duration::from_secs(args.report_s);
            std::thread::sleep(next.saturating_duration_since(Instant::now()));
            let (p50, p99, max) = stats.take_rtts();
            let terminated = system.block_on(watcher.ask(Count)).unwrap_or(0);
            println!(
                "stats t={} peers={} tells={} tell_errors={} asks_ok={} unreachable={} timeouts={} \
                 other_errors={} spawns={} spawn_errors={} stopped={} terminated={} \
                 rtt_p50_us={p50} rtt_p99_us={p99} rtt_max_us={max}",
                started.elapsed().as_secs(),
                node.peers().len(),
                stats.tells.load(Relaxed),
                stats.tell_errors.load(Relaxed),
                stats.asks_ok.load(Relaxed),
                stats.unreachable.load(Relaxed),
                stats.timeouts.load(Relaxed),
                stats.other_errors.load(Relaxed),
                stats.spawns.load(Relaxed),
                stats.spawn_errors.load(Relaxed),
                stats.stopped.load(Relaxed),
                terminated,
            );
            if args
                .seconds
                .is_some_and(|s| started.elapsed().as_secs() >= s)
            {
                stop.store(true, Relaxed);
                break;
            }
        }
    });
}

/// The `send` mode: one measured scenario against one target.
fn send(system: &System, node: &Node, args: &Args) -> ExitCode {
    let target = &args.peers[0];
    let Some(sink) = find_sink(system, node, target, Duration::from_secs(30)) else {
        eprintln!("odeon-soak: sink-{target} not found in 30 s");
        return ExitCode::from(1);
    };
    // The ref in use: after a failed ask it is looked up again, as an application
    // would, so that a healed link is used again.
    let current = Mutex::new(sink);
    let stats = Stats::default();
    let stop = AtomicBool::new(false);
    let run = run_id();
    let started = Instant::now();
    // The longest time from a failed ask to the next successful one. Unit: ms.
    let longest_outage = AtomicU64::new(0);
    let (numbered, refused) = (AtomicU64::new(0), Mutex::new(Vec::new()));
    std::thread::scope(|s| {
        s.spawn(|| {
            let tick = Duration::from_micros(1_000_000 / args.rate);
            let mut next = Instant::now();
            let mut n = 0;
            while !stop.load(Relaxed) {
                let sink = current.lock().unwrap().clone();
                match sink.tell(Seq {
                    run,
                    n,
                    exact: true,
                }) {
                    Ok(()) => _ = stats.tells.fetch_add(1, Relaxed),
                    Err(_) => {
                        stats.tell_errors.fetch_add(1, Relaxed);
                        refused.lock().unwrap().push(n);
                    }
                }
                n += 1;
                numbered.store(n, Relaxed);
                next += tick;
                std::thread::sleep(next.saturating_duration_since(Instant::now()));
            }
        });
        s.spawn(|| {
            let (mut k, mut failing_since) = (0, None::<Instant>);
            while !stop.load(Relaxed) {
                let sink = current.lock().unwrap().clone();
                let t = Instant::now();
                let r = system.block_on(sink.ask(Ping(k)).timeout(Duration::from_secs(5)));
                stats.ask_outcome(t, &r);
                match (&r, failing_since) {
                    (Ok(_), Some(since)) => {
                        let ms = since.elapsed().as_millis() as u64;
                        longest_outage.fetch_max(ms, Relaxed);
                        println!(
                            "recovered after {ms} ms at t={:.1}s",
                            started.elapsed().as_secs_f64()
                        );
                        failing_since = None;
                    }
                    (Err(e), None) => {
                        println!(
                            "ask failed at t={:.1}s: {e}",
                            t.duration_since(started).as_secs_f64()
                        );
                        failing_since = Some(t);
                    }
                    _ => {}
                }
                if r.is_err()
                    && let Some(fresh) = find_sink(system, node, target, Duration::ZERO)
                {
                    *current.lock().unwrap() = fresh;
                }
                k += 1;
                std::thread::sleep(Duration::from_millis(100));
            }
            if let Some(since) = failing_since {
                println!(
                    "not recovered: asks failing for the last {} ms",
                    since.elapsed().as_millis()
                );
                longest_outage.fetch_max(since.elapsed().as_millis() as u64, Relaxed);
            }
        });
        std::thread::sleep(Duration::from_secs(args.seconds.unwrap_or(10)));
        stop.store(true, Relaxed);
    });
    // Wait for the tells still in flight: until the count stops moving for 2 s (or
    // 30 s pass), asking a fresh ref in case the old link was lost.
    let deadline = Instant::now() + Duration::from_secs(30);
    let (mut report, mut steady_since) = (None::<actors::RunReport>, Instant::now());
    while Instant::now() < deadline && steady_since.elapsed() < Duration::from_secs(2) {
        let sink = find_sink(system, node, target, Duration::from_secs(5))
            .unwrap_or_else(|| current.lock().unwrap().clone());
        let ask = sink.ask(Report {
            run,
            sent: numbered.load(Relaxed),
            refused: refused.lock().unwrap().clone(),
        });
        if let Ok(r) = system.block_on(ask.timeout(Duration::from_secs(5))) {
            if report.as_ref().is_none_or(|old| old.received != r.received) {
                steady_since = Instant::now();
            }
            report = Some(r);
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    let (p50, p99, max) = stats.take_rtts();
    let sent = stats.tells.load(Relaxed);
    let received = match &report {
        Some(r) => format!(
            "received={} lost={} duplicated={} reordered={} refused_but_delivered={}",
            r.received, r.lost, r.duplicates, r.reordered, r.refused_but_delivered
        ),
        None => "report=unavailable".to_owned(),
    };
    println!(
        "result sent={sent} {received} tell_errors={} asks_ok={} unreachable={} timeouts={} \
         other_errors={} longest_outage_ms={} rtt_p50_ms={:.1} rtt_p99_ms={:.1} rtt_max_ms={:.1}",
        stats.tell_errors.load(Relaxed),
        stats.asks_ok.load(Relaxed),
        stats.unreachable.load(Relaxed),
        stats.timeouts.load(Relaxed),
        stats.other_errors.load(Relaxed),
        longest_outage.load(Relaxed),
        p50 as f64 / 1000.0,
        p99 as f64 / 1000.0,
        max as f64 / 1000.0,
    );
    if report.is_none() {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
