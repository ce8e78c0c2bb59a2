//! `remote-odeon`: odeon's side of the remote benchmarks (see `README.md`).
//!
//! ```text
//! remote-odeon rtt|throughput|spawn [--quick]   # two processes on loopback
//! remote-odeon local [--quick]                  # one process: SALSA Lite's local costs
//! remote-odeon compare [--rounds N] [--quick]   # odeon, Erlang and Pekko, interleaved
//! remote-odeon floor [--quick]                  # raw TCP ping-pong: the machine's floor
//! remote-odeon serve                            # the server process (started by the above)
//! ```
//! Every result is one `REMOTE-RESULT {json}` line on stdout, like the peers' drivers.
//!
//! Knobs for A/B runs (issue 19), read by both processes: `REMOTE_ODEON_INLINE=1`
//! (`NodeBuilder::inline_turns`), `REMOTE_ODEON_SPIN_US=N` (`SystemBuilder::block_on_spin`)
//! and `REMOTE_ODEON_READ_SPIN_US=N` (`NodeBuilder::read_spin`), in microseconds.

mod actors;
mod compare;
mod floor;

use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use actors::{Capable, Count, Done, Echo, Plain, Push, Server, Spawned, Tick};
use odeon::{ActorRef, System};
use odeon_remote::{Node, Secret};
use serde_json::json;

const SECRET: &str = "odeon remote benchmark secret";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let scale = |n: u64| if quick { (n / 20).max(1) } else { n };
    let res = match args.first().map(String::as_str) {
        Some("serve") => serve(),
        Some("rtt") => with_server(|system, node, server| rtt(system, node, server, scale)),
        Some("throughput") => {
            with_server(|system, node, server| throughput(system, node, server, scale))
        }
        Some("spawn") => with_server(|system, node, server| spawn(system, node, server, scale)),
        Some("local") => local(scale),
        Some("floor") => floor::floor(quick),
        Some("floor-serve") => floor::serve(args.get(1).map(String::as_str)),
        Some("compare") => {
            let rounds = args
                .iter()
                .position(|a| a == "--rounds")
                .and_then(|i| args.get(i + 1))
                .map_or(Ok(3), |r| {
                    r.parse::<usize>().map_err(|e| format!("--rounds: {e}"))
                });
            rounds.and_then(|r| compare::compare(r.max(1), quick))
        }
        _ => Err("usage: remote-odeon rtt|throughput|spawn|local|compare|floor [--quick]".into()),
    };
    match res {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("remote-odeon: {e}");
            ExitCode::FAILURE
        }
    }
}

fn secret() -> Secret {
    Secret::new(SECRET).expect("the bench secret is long enough")
}

fn start_node(system: &System, name: &str, seed: Option<SocketAddr>) -> Result<Node, String> {
    let mut b = Node::builder(name).secret(secret()).spawnable::<Spawned>();
    if let Some(s) = seed {
        b = b.seed(s);
    }
    // `NodeBuilder::inline_turns` is off by default (it trades guarantee 3 for one
    // thread wake-up per round trip); the benchmark measures it both ways.
    if std::env::var_os("REMOTE_ODEON_INLINE").is_some_and(|v| v == "1") {
        b = b.inline_turns(true);
    }
    // `NodeBuilder::read_spin` (issue 19, off by default): the reader polls its socket
    // while a reply is likely next.
    if let Some(us) = env_micros("REMOTE_ODEON_READ_SPIN_US") {
        b = b.read_spin(us);
    }
    system
        .block_on(b.start(&system.handle()))
        .map_err(|e| e.to_string())
}

/// A duration in microseconds from the environment, if set and not zero.
fn env_micros(var: &str) -> Option<Duration> {
    let us: u64 = std::env::var(var).ok()?.trim().parse().ok()?;
    (us > 0).then(|| Duration::from_micros(us))
}

/// The benchmark's system: `SystemBuilder::block_on_spin` from `REMOTE_ODEON_SPIN_US`
/// (issue 19, off by default): a caller blocked on an ask spins before it parks.
fn new_system() -> System {
    let mut b = System::builder();
    if let Some(us) = env_micros("REMOTE_ODEON_SPIN_US") {
        b = b.block_on_spin(us);
    }
    b.build()
}

fn serve() -> Result<(), String> {
    let system = new_system();
    let node = start_node(&system, "server", None)?;
    let server = system.spawn(Server::default());
    node.register("server", &server)
        .map_err(|e| e.to_string())?;
    println!("listening {}", node.listen_addr());
    std::io::stdout().flush().map_err(|e| e.to_string())?;
    // Serve until the client closes our stdin.
    for line in std::io::stdin().lock().lines() {
        if line.is_err() {
            break;
        }
    }
    drop(node);
    system.shutdown();
    Ok(())
}

struct ServerProcess(Child);

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `serve` in another process, links to it, finds its server, runs `bench`.
fn with_server(
    bench: impl FnOnce(&System, &Node, ActorRef<Server>) -> Result<(), String>,
) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut child = Command::new(exe)
        .arg("serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start the server process: {e}"))?;
    let out = child.stdout.take().ok_or("no server stdout")?;
    let server_process = ServerProcess(child);
    let mut line = String::new();
    BufReader::new(out)
        .read_line(&mut line)
        .map_err(|e| e.to_string())?;
    let addr: SocketAddr = line
        .trim()
        .strip_prefix("listening ")
        .ok_or_else(|| format!("unexpected server output {line:?}"))?
        .parse()
        .map_err(|e| format!("server address: {e}"))?;
    let system = new_system();
    let node = start_node(&system, "client", Some(addr))?;
    let deadline = Instant::now() + Duration::from_secs(30);
    let server = loop {
        match system.block_on(node.lookup::<Server>("server")) {
            Ok(s) => break s,
            Err(e) if Instant::now() > deadline => return Err(format!("lookup: {e}")),
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    };
    let res = bench(&system, &node, server);
    drop(server_process);
    drop(node);
    system.shutdown();
    res
}

fn emit(value: serde_json::Value) {
    println!("REMOTE-RESULT {value}");
}

fn rtt(
    system: &System,
    _: &Node,
    server: ActorRef<Server>,
    scale: impl Fn(u64) -> u64,
) -> Result<(), String> {
    let ask = |i: u64| -> Result<(), String> {
        match system.block_on(server.ask(Echo(i))) {
            Ok(v) if v == i => Ok(()),
            Ok(v) => Err(format!("echo {i} came back as {v}")),
            Err(e) => Err(format!("ask: {e}")),
        }
    };
    for i in 0..scale(5_000) {
        ask(i)?;
    }
    let n = scale(20_000);
    let mut samples = Vec::with_capacity(n as usize);
    for i in 0..n {
        let t = Instant::now();
        ask(i)?;
        samples.push(t.elapsed().as_nanos() as f64 / 1_000.0);
    }
    samples.sort_by(f64::total_cmp);
    // Nearest rank, as the peers' drivers compute it.
    let pct =
        |p: f64| samples[((samples.len() as f64 * p).ceil() as usize).clamp(1, samples.len()) - 1];
    emit(
        json!({"runtime": "odeon", "bench": "rtt", "p50_us": pct(0.50), "p99_us": pct(0.99), "p10_us": pct(0.10), "p25_us": pct(0.25), "p75_us": pct(0.75), "p90_us": pct(0.90), "p95_us": pct(0.95), "p999_us": pct(0.999), "samples": n}),
    );
    Ok(())
}

fn throughput(
    system: &System,
    _: &Node,
    server: ActorRef<Server>,
    scale: impl Fn(u64) -> u64,
) -> Result<(), String> {
    let n = scale(1_000_000);
    let want = (n, n * (n + 1) / 2);
    for pass in 0..4 {
        let t = Instant::now();
        for i in 1..=n {
            // The outbox toward the server is bounded: when it is full, wait for room.
            match server.tell(Push(i)) {
                Ok(()) => {}
                Err(odeon::TellError::Full(m)) => system
                    .block_on(server.send(m))
                    .map_err(|e| format!("send: {e}"))?,
                Err(e) => return Err(format!("tell: {e}")),
            }
        }
        let got = system
            .block_on(server.ask(Done).timeout(Duration::from_secs(600)))
            .map_err(|e| format!("done: {e}"))?;
        let secs = t.elapsed().as_secs_f64();
        if got != want {
            return Err(format!(
                "server saw (count, sum) {got:?}, expected {want:?}"
            ));
        }
        if pass > 0 {
            emit(
                json!({"runtime": "odeon", "bench": "throughput", "pass": pass, "messages": n, "msgs_per_s": n as f64 / secs}),
            );
        }
    }
    Ok(())
}

fn spawn(
    system: &System,
    node: &Node,
    _: ActorRef<Server>,
    scale: impl Fn(u64) -> u64,
) -> Result<(), String> {
    let n = scale(1_000);
    for pass in 0..4 {
        let t = Instant::now();
        let mut refs = Vec::with_capacity(n as usize);
        for i in 0..n {
            let r = system
                .block_on(node.spawn_on::<Spawned>("server", i))
                .map_err(|e| format!("spawn_on: {e}"))?;
            refs.push(r);
        }
        let secs = t.elapsed().as_secs_f64();
        // Every spawned actor answers, with its own state.
        let last = refs.last().ok_or("nothing spawned")?;
        let v = system
            .block_on(last.ask(Echo(1)))
            .map_err(|e| e.to_string())?;
        if v != n {
            return Err(format!("the last spawned actor answered {v}, expected {n}"));
        }
        for r in &refs {
            r.stop();
        }
        if pass > 0 {
            emit(
                json!({"runtime": "odeon", "bench": "remote_spawn", "pass": pass, "actors": n, "us_per_actor": secs * 1e6 / n as f64}),
            );
        }
    }
    Ok(())
}

/// SALSA Lite's local costs: messaging and creation of a remote-capable actor against a
/// plain one, interleaved (plain, capable, plain, ...) so drift hits both alike.
fn local(scale: impl Fn(u64) -> u64) -> Result<(), String> {
    let system = System::new();
    let messages = scale(2_000_000);
    let actors = scale(200_000);
    let rounds = 7;
    let (mut tell_plain, mut tell_capable, mut spawn_plain, mut spawn_capable) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        tell_plain.push(tell_loop(
            &system,
            system.spawn(Plain::default()),
            messages,
        )?);
        tell_capable.push(tell_loop(
            &system,
            system.spawn(Capable::default()),
            messages,
        )?);
        spawn_plain.push(spawn_loop(&system, actors, Plain::default));
        spawn_capable.push(spawn_loop(&system, actors, Capable::default));
    }
    let node = start_node(&system, "local", None)?;
    let registered = scale(20_000);
    let mut spawn_registered = Vec::new();
    for round in 0..3 {
        let t = Instant::now();
        for i in 0..registered {
            let a = system.spawn(Capable::default());
            a.tell(Tick).map_err(|e| e.to_string())?;
            node.register(&format!("r{round}-{i}"), &a)
                .map_err(|e| e.to_string())?;
        }
        system.run_until_quiescent();
        spawn_registered.push(t.elapsed().as_nanos() as f64 / registered as f64);
        for i in 0..registered {
            node.unregister(&format!("r{round}-{i}"));
        }
    }
    drop(node);
    system.shutdown();
    let report = |bench: &str, plain: &mut Vec<f64>, capable: &mut Vec<f64>| {
        let (p, c) = (median(plain), median(capable));
        emit(json!({
            "runtime": "odeon", "bench": bench,
            "plain_ns": p, "plain_min": plain[0], "plain_max": plain[plain.len() - 1],
            "capable_ns": c, "capable_min": capable[0], "capable_max": capable[capable.len() - 1],
            "overhead_pct": (c / p - 1.0) * 100.0,
        }));
    };
    report("local_tell", &mut tell_plain, &mut tell_capable);
    report("local_spawn", &mut spawn_plain, &mut spawn_capable);
    let p = median(&mut spawn_plain);
    let r = median(&mut spawn_registered);
    emit(
        json!({"runtime": "odeon", "bench": "local_spawn_registered", "registered_ns": r, "plain_ns": p, "overhead_pct": (r / p - 1.0) * 100.0}),
    );
    Ok(())
}

/// Nanoseconds per message: `n` tells from outside, then one ask that sees them all.
fn tell_loop<A>(system: &System, actor: ActorRef<A>, n: u64) -> Result<f64, String>
where
    A: odeon::Handler<Tick> + odeon::Handler<Count>,
{
    let t = Instant::now();
    for _ in 0..n {
        actor.tell(Tick).map_err(|e| e.to_string())?;
    }
    let seen = system
        .block_on(actor.ask(Count))
        .map_err(|e| e.to_string())?;
    let ns = t.elapsed().as_nanos() as f64 / n as f64;
    if seen != n {
        return Err(format!("counted {seen} of {n}"));
    }
    Ok(ns)
}

/// Nanoseconds per actor: spawn, one message each, until all are idle.
fn spawn_loop<A: odeon::Handler<Tick>>(system: &System, n: u64, make: impl Fn() -> A) -> f64 {
    let t = Instant::now();
    let mut refs = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let a = system.spawn(make());
        let _ = a.tell(Tick);
        refs.push(a);
    }
    system.run_until_quiescent();
    let ns = t.elapsed().as_nanos() as f64 / n as f64;
    drop(refs);
    system.run_until_quiescent();
    ns
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
