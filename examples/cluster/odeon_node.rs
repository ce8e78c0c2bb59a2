//! `odeon-node`: one odeon node per process, for the distributed demo and the
//! multi-process tests.
//!
//! ```text
//! odeon-node gen-secret
//! ODEON_SECRET=... odeon-node serve --name a [--listen 127.0.0.1:7400] [--seed ADDR]...
//! ODEON_SECRET=... odeon-node probe --name b --seed ADDR
//! ODEON_SECRET=... odeon-node migrate --name b --seed ADDR
//! ODEON_SECRET=... odeon-node host --name c --seed ADDR
//! odeon-node top --http ADDR [--once [--tree]]
//! ```
//! `gen-secret` prints a new random cluster secret (32 random bytes as 64 hex
//! characters) to give every node as `ODEON_SECRET`. `serve` hosts a `Tally` registered
//! as `tally` and lets others spawn tallies; it runs until it receives SIGINT (Ctrl-C)
//! or SIGTERM (`kill`, systemd, `docker stop`), then leaves the cluster gracefully and
//! exits with status 0. It never reads its standard input, so it runs as well with
//! stdin closed: under systemd, in a container, or in the background. `probe` finds
//! `tally` through its seed, adds 1..=10, asks the total, spawns a tally on the seed's
//! node, then watches `tally` and keeps asking it until the serving node is gone,
//! printing what it observes. `migrate` finds the mobile `counter` that `serve` also
//! hosts, moves it to this process's node (live: its state and mailbox travel, refs
//! to it keep working), sends it ten numbered messages there, and moves it back home
//! before leaving. `host` is `serve` without the actors: a node that
//! mobile counters can move to. Output lines are stable: tests read them.
//!
//! Both modes take `--listen ADDR`, the address to bind (default `127.0.0.1:0`;
//! `0.0.0.0:PORT` binds every interface), and `--advertise ADDR`, the address other
//! nodes reach this one at (required with `0.0.0.0`; a port of 0 means the bound port).
//! Links (TCP) and gossip (UDP) share the bound port; open it for both. The first
//! output line, `listening ADDR`, gives the advertised address.
//!
//! `--http ADDR` (for example `127.0.0.1:9464`) serves `GET /metrics` there in the
//! Prometheus text format: the node's counters and odeon's own `odeon_*` metrics (the
//! system is then built with `observe(true)`; `docs/observe.md` lists them). The
//! second output line is then `metrics http://ADDR/metrics`, with the bound port.
//! The same address serves the live dashboard at `/` (`/api/snapshot`, `/api/events`).
//!
//! `top` shows that snapshot in the terminal (ratatui), refreshed every second, for
//! machines without a browser; `t` switches to the supervision tree and back;
//! `--once` prints one frame as text and exits (`--tree`: the tree view).

#[path = "../mobility/counter.rs"]
mod counter;
#[path = "tally.rs"]
mod tally;
#[path = "top.rs"]
mod top;

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use counter::{Counter, GoTo, Numbered, Report, Whereabouts};
use odeon::{ActorRef, AskError, System};
use odeon_remote::{Node, Secret};
use tally::{Add, Notices, Tally, Total, WatchIt, Watcher};

const USAGE: &str = "\
usage: odeon-node gen-secret
       odeon-node serve|host|probe|migrate --name N [--listen A] [--advertise A] [--seed A]...
                                      [--http A]
       odeon-node top --http A [--once [--tree]]

  gen-secret  print a new cluster secret (give it to every node as ODEON_SECRET)
  serve       host `tally` and the mobile `counter`; run until SIGINT/SIGTERM
  host        the same node with no actors of its own (counters may move here)
  probe       find `tally` through --seed, use it, watch it until its node is gone
  migrate     move `counter` here from wherever it runs, send it ten messages here,
              move it back home, exit (live migration between two processes)
  top         show a node's live snapshot in the terminal (t: supervision tree, q quits);
              --once: one frame as text (--tree: the tree view)
  --http A    serve Prometheus metrics at http://A/metrics (e.g. 127.0.0.1:9464) and
              the live dashboard at http://A/; for `top`, the node to read";

struct Args {
    mode: String,
    name: String,
    listen: SocketAddr,
    advertise: Option<SocketAddr>,
    seeds: Vec<SocketAddr>,
    http: Option<SocketAddr>,
}

fn parse() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let mode = it.next().ok_or(USAGE)?;
    if !["serve", "host", "probe", "migrate"].contains(&mode.as_str()) {
        return Err(format!("unknown mode {mode:?}\n{USAGE}"));
    }
    let mut args = Args {
        mode,
        name: String::new(),
        listen: SocketAddr::from(([127, 0, 0, 1], 0)),
        advertise: None,
        seeds: Vec::new(),
        http: None,
    };
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let addr = || {
            value
                .parse::<SocketAddr>()
                .map_err(|e| format!("{flag} {value}: {e}"))
        };
        match flag.as_str() {
            "--name" => args.name = value.clone(),
            "--listen" => args.listen = addr()?,
            "--advertise" => args.advertise = Some(addr()?),
            "--seed" => args.seeds.push(addr()?),
            "--http" => args.http = Some(addr()?),
            other => return Err(format!("unknown flag {other}")),
        }
    }
    if args.name.is_empty() {
        return Err("--name is required".into());
    }
    Ok(args)
}

fn main() -> ExitCode {
    if let Some("--help" | "-h" | "help") = std::env::args().nth(1).as_deref() {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    if std::env::args().nth(1).as_deref() == Some("top") {
        return top::main(std::env::args().skip(2));
    }
    if std::env::args().nth(1).as_deref() == Some("gen-secret") {
        // Hex text: the bytes are ASCII.
        println!("{}", String::from_utf8_lossy(Secret::generate().expose()));
        return ExitCode::SUCCESS;
    }
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("odeon-node: {e}");
            return ExitCode::from(2);
        }
    };
    let secret = match std::env::var("ODEON_SECRET")
        .map_err(|e| e.to_string())
        .and_then(|s| Secret::new(s).map_err(|e| e.to_string()))
    {
        Ok(s) => s,
        Err(e) => {
            eprintln!("odeon-node: ODEON_SECRET (the cluster secret, at least 16 bytes): {e}");
            return ExitCode::from(2);
        }
    };
    // Spans and metrics only when someone scrapes them.
    let system = System::builder().observe(args.http.is_some()).build();
    let mut builder = Node::builder(args.name.clone())
        .listen(args.listen)
        .secret(secret)
        .lost_after(Duration::from_secs(1))
        .spawnable::<Tally>()
        .mobile::<Counter>();
    counter::name_system(system.handle(), &args.name);
    if let Some(a) = args.advertise {
        builder = builder.advertise(a);
    }
    for s in &args.seeds {
        builder = builder.seed(*s);
    }
    if let Some(a) = args.http {
        builder = builder.metrics_http(a);
    }
    let node = match system.block_on(builder.start(&system.handle())) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("odeon-node: {e}");
            if matches!(e, odeon_remote::NodeError::NoAdvertise { .. }) {
                eprintln!("odeon-node: pass --advertise ADDR, where other nodes reach this one");
            }
            return ExitCode::from(1);
        }
    };
    println!("listening {}", node.listen_addr());
    if let Some(a) = node.metrics_http_addr() {
        println!("metrics http://{a}/metrics");
    }
    let code = match args.mode.as_str() {
        "serve" => serve(&system, node, true),
        "host" => serve(&system, node, false),
        "migrate" => migrate(&system, &node),
        _ => probe(&system, &node),
    };
    system.shutdown();
    code
}

/// `serve`, and `host` (`actors` false: nothing spawned or registered).
fn serve(system: &System, node: Node, actors: bool) -> ExitCode {
    // Listen before saying "registered": a signal sent by whoever waits for that line
    // must find the handler installed, not the default action (die at once).
    let stop = match StopSignals::install() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("odeon-node: cannot listen for SIGINT/SIGTERM: {e}");
            return ExitCode::from(1);
        }
    };
    if actors {
        let counter = system.spawn(Counter::default());
        if let Err(e) = node.register("counter", &counter) {
            eprintln!("odeon-node: {e}");
            return ExitCode::from(1);
        }
        // Named: the dashboard and `top` list named actors one by one.
        let tally = system.spawn_with(Tally::default(), odeon::SpawnOptions::new().name("tally"));
        if let Err(e) = node.register("tally", &tally) {
            eprintln!("odeon-node: {e}");
            return ExitCode::from(1);
        }
        println!("registered tally");
    } else {
        println!("hosting");
    }
    match stop.wait() {
        Ok(signal) => println!("received {signal}, leaving"),
        Err(e) => eprintln!("odeon-node: waiting for a signal: {e}; leaving"),
    }
    system.block_on(node.leave());
    println!("left");
    ExitCode::SUCCESS
}

/// The signals that stop `serve`, listened for on a runtime of their own (odeon's
/// runtime is the system's business; this one only waits).
struct StopSignals {
    runtime: tokio::runtime::Runtime,
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
}

impl StopSignals {
    /// Installs the handlers: from here on SIGINT and SIGTERM are caught, not fatal.
    #[cfg(unix)]
    fn install() -> std::io::Result<StopSignals> {
        use tokio::signal::unix::{SignalKind, signal};
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()?;
        // tokio registers a signal with the runtime it is created in.
        let (interrupt, terminate) = {
            let _in_runtime = runtime.enter();
            (
                signal(SignalKind::interrupt())?,
                signal(SignalKind::terminate())?,
            )
        };
        Ok(StopSignals {
            runtime,
            interrupt,
            terminate,
        })
    }

    /// Blocks until one of the signals arrives; returns its name.
    #[cfg(unix)]
    fn wait(self) -> std::io::Result<&'static str> {
        let StopSignals {
            runtime,
            mut interrupt,
            mut terminate,
        } = self;
        runtime.block_on(async {
            tokio::select! {
                _ = interrupt.recv() => Ok("SIGINT"),
                _ = terminate.recv() => Ok("SIGTERM"),
            }
        })
    }

    /// Elsewhere only Ctrl-C, which tokio catches from the first poll on.
    #[cfg(not(unix))]
    fn install() -> std::io::Result<StopSignals> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()?;
        Ok(StopSignals { runtime })
    }

    #[cfg(not(unix))]
    fn wait(self) -> std::io::Result<&'static str> {
        self.runtime.block_on(tokio::signal::ctrl_c())?;
        Ok("Ctrl-C")
    }
}

fn probe(system: &System, node: &Node) -> ExitCode {
    let deadline = Instant::now() + Duration::from_secs(30);
    let tally = loop {
        match system.block_on(node.lookup::<Tally>("tally")) {
            Ok(t) => break t,
            Err(e) if Instant::now() > deadline => {
                eprintln!("odeon-node: lookup: {e}");
                return ExitCode::from(1);
            }
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    };
    println!("found tally {tally:?}");
    for n in 1..=10 {
        if tally.tell(Add(n)).is_err() {
            eprintln!("odeon-node: tell failed");
            return ExitCode::from(1);
        }
    }
    match system.block_on(tally.ask(Total)) {
        Ok(total) => println!("total {total}"),
        Err(e) => {
            eprintln!("odeon-node: ask: {e}");
            return ExitCode::from(1);
        }
    }
    let seed_name = tally
        .endpoint()
        .map(|e| e.address().0.to_string())
        .unwrap_or_default();
    match system.block_on(node.spawn_on::<Tally>(&seed_name, 100)) {
        Ok(t) => match system.block_on(t.ask(Total)) {
            Ok(v) => println!("spawned tally on {seed_name} with total {v}"),
            Err(e) => println!("spawned tally on {seed_name}, ask failed: {e}"),
        },
        Err(e) => println!("spawn on {seed_name} failed: {e}"),
    }
    let watcher = system.spawn(Watcher::default());
    if system
        .block_on(watcher.ask(WatchIt(tally.clone())))
        .is_err()
    {
        return ExitCode::from(1);
    }
    println!("watching");
    let (mut failed, mut terminated) = (false, false);
    while Instant::now() < deadline && !(failed && terminated) {
        if !failed {
            match system.block_on(tally.ask(Total).timeout(Duration::from_secs(5))) {
                Ok(_) => {}
                Err(e @ (AskError::Unreachable | AskError::Stopped)) => {
                    println!("ask failed: {e}");
                    failed = true;
                }
                Err(e) => println!("ask error: {e}"),
            }
        }
        if !terminated
            && let Ok(notices) = system.block_on(watcher.ask(Notices))
            && let Some(t) = notices.first()
        {
            println!("terminated: {}", t.reason);
            terminated = true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    if failed && terminated {
        ExitCode::SUCCESS
    } else {
        eprintln!("odeon-node: the serving node's loss was not observed in time");
        ExitCode::from(1)
    }
}

/// `migrate`: the counter comes here, counts ten messages here, and goes home.
fn migrate(system: &System, node: &Node) -> ExitCode {
    match migrate_steps(system, node) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("odeon-node: migrate: {e}");
            ExitCode::from(1)
        }
    }
}

fn migrate_steps(system: &System, node: &Node) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let counter = loop {
        match system.block_on(node.lookup::<Counter>("counter")) {
            Ok(c) => break c,
            Err(e) if Instant::now() > deadline => return Err(format!("lookup: {e}")),
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    };
    let (home, _) = system
        .block_on(counter.ask(Whereabouts))
        .map_err(|e| format!("ask: {e}"))?;
    println!("counter on {home}");
    // A sender number no earlier run used: each sender's numbers start at 0.
    let before = system
        .block_on(counter.ask(Report))
        .map_err(|e| format!("ask: {e}"))?;
    let sender = before.next.keys().max().map_or(1, |s| s + 1);
    let here = node.id().clone();
    go_and_wait(system, &counter, &here, deadline)?;
    println!("counter moved to {}", here.name);
    for n in 0..10 {
        counter
            .tell(Numbered { sender, n })
            .map_err(|e| format!("tell: {e}"))?;
    }
    let after = system
        .block_on(counter.ask(Report))
        .map_err(|e| format!("ask: {e}"))?;
    if !after.errors.is_empty() || after.next.get(&sender) != Some(&10) {
        return Err(format!("the counter saw {after:?}"));
    }
    println!(
        "counted {} in all, {} of them here",
        after.count,
        after.count - before.count
    );
    let home_id = node
        .peers()
        .into_iter()
        .find(|p| p.name == home)
        .ok_or_else(|| format!("{home} is not a peer"))?;
    go_and_wait(system, &counter, &home_id, deadline)?;
    println!("counter back on {home}");
    Ok(())
}

/// Tells the counter to move to `to` and waits until it answers from there.
fn go_and_wait(
    system: &System,
    counter: &ActorRef<Counter>,
    to: &odeon_remote::wire::NodeId,
    deadline: Instant,
) -> Result<(), String> {
    counter
        .tell(GoTo(to.clone()))
        .map_err(|e| format!("tell: {e}"))?;
    loop {
        if let Ok((at, _)) = system.block_on(counter.ask(Whereabouts))
            && at == to.name
        {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(format!("the counter did not reach {}", to.name));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
