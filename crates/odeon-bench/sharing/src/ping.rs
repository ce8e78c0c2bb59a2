//! Encore's ping: `n` empty messages to one actor, sent four ways.
//!
//! - `plain`: `ActorRef::tell`;
//! - `bestowed`: `Bestowed::tell` to an object the actor owns;
//! - `batch`: one `ActorRef::atomic` batch per ping;
//! - `reserved`: the whole stream through one `Reservation`.
//!
//! One sender (the thread that calls `System::block_on`) sends all `n`, then asks for
//! the count, which waits until every ping was handled; the time covers both. Runs are
//! interleaved (the order rotates each round) so that drift on a loaded machine hits
//! every variant alike.
//!
//! Besides wall time, each run reports the CPU time all of the process's threads
//! spent in it (summed from `/proc/self/task/*/schedstat`, nanoseconds; Linux only):
//! on a loaded machine the wall time mostly measures who else got the cores, while the
//! CPU time is what the variant itself costs.

use std::time::{Duration, Instant};

use odeon::{Actor, Bestowed, Context, Handler, Message, Serve, System};
use serde::{Deserialize, Serialize};

use crate::stats::{overhead, quantile, spread};

/// The empty message (`Serialize` for the `remote` variants, which send it to another
/// node).
#[derive(Debug, Serialize, Deserialize)]
pub struct Ping;
impl Message for Ping {
    type Reply = ();
}

/// How many pings were handled.
#[derive(Debug, Serialize, Deserialize)]
pub struct Count;
impl Message for Count {
    type Reply = u64;
}

/// The pinged actor (and, for `bestowed`, the owner of a [`Counter`]).
#[derive(Debug, Default)]
pub struct Pinged {
    pings: u64,
}
impl Actor for Pinged {}
impl Handler<Ping> for Pinged {
    fn handle(&mut self, _: Ping, _: &mut Context<Self>) {
        self.pings += 1;
    }
}
impl Handler<Count> for Pinged {
    fn handle(&mut self, _: Count, _: &mut Context<Self>) -> u64 {
        self.pings
    }
}

/// Lends out a [`Counter`].
#[derive(Debug)]
pub struct Lend;
impl Message for Lend {
    type Reply = Bestowed<Counter>;
}
impl Handler<Lend> for Pinged {
    fn handle(&mut self, _: Lend, cx: &mut Context<Self>) -> Bestowed<Counter> {
        cx.bestow(Counter::default())
    }
}

/// The passive object of `bestowed`.
#[derive(Debug, Default)]
pub struct Counter {
    pings: u64,
}
impl Serve<Ping> for Counter {
    fn serve(&mut self, _: Ping) {
        self.pings += 1;
    }
}
impl Serve<Count> for Counter {
    fn serve(&mut self, _: Count) -> u64 {
        self.pings
    }
}

/// The variants, in the order of the table.
pub const VARIANTS: [&str; 4] = ["plain", "bestowed", "batch", "reserved"];

/// The targets of the issue: at most this many times a plain tell.
const TARGETS: [f64; 4] = [1.0, 1.2, 1.1, 1.05];

/// The CPU time all threads of this process have run so far, in nanoseconds (the
/// first field of each thread's `schedstat`), or `None` where `/proc` lacks it.
/// Threads that exited are not counted: the runtime's threads live as long as the
/// system, which outlives every run.
fn cpu_ns() -> Option<u64> {
    let mut sum = 0;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let stat = std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok()?;
        sum += stat.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(sum)
}

/// One run's cost per ping, in nanoseconds.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    /// Wall time.
    pub wall: f64,
    /// CPU time of all threads, if `/proc` has it.
    pub cpu: Option<f64>,
}

/// One run of `variant` on a fresh actor: nanoseconds per ping.
pub fn run_once(system: &System, variant: &str, n: u64) -> Result<Sample, String> {
    let actor = system.spawn(Pinged::default());
    let result = system.block_on(async {
        let cpu_start;
        let (start, count) = match variant {
            "plain" => {
                let start = Instant::now();
                cpu_start = cpu_ns();
                for _ in 0..n {
                    actor.tell(Ping).map_err(|e| e.to_string())?;
                }
                (start, actor.ask(Count).await.map_err(|e| e.to_string())?)
            }
            "bestowed" => {
                let counter = actor.ask(Lend).await.map_err(|e| e.to_string())?;
                let start = Instant::now();
                cpu_start = cpu_ns();
                for _ in 0..n {
                    counter.tell(Ping).map_err(|e| e.to_string())?;
                }
                (start, counter.ask(Count).await.map_err(|e| e.to_string())?)
            }
            "batch" => {
                let start = Instant::now();
                cpu_start = cpu_ns();
                for _ in 0..n {
                    actor
                        .atomic(|b| {
                            b.tell(Ping);
                        })
                        .map_err(|e| e.to_string())?;
                }
                (start, actor.ask(Count).await.map_err(|e| e.to_string())?)
            }
            "reserved" => {
                let start = Instant::now();
                cpu_start = cpu_ns();
                let r = actor
                    .reserve()
                    .lease(Duration::from_secs(600))
                    .await
                    .map_err(|e| e.to_string())?;
                for _ in 0..n {
                    r.tell(Ping).map_err(|e| e.to_string())?;
                }
                let count = r.ask(Count).await.map_err(|e| e.to_string())?;
                r.release();
                (start, count)
            }
            other => return Err(format!("unknown variant {other:?}")),
        };
        let elapsed = start.elapsed();
        let cpu = match (cpu_start, cpu_ns()) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a) as f64 / n as f64),
            _ => None,
        };
        if count != n {
            return Err(format!("{variant}: {count} pings handled of {n}"));
        }
        Ok(Sample {
            wall: elapsed.as_nanos() as f64 / n as f64,
            cpu,
        })
    });
    actor.stop();
    result
}

/// `rounds` interleaved rounds (after one warm-up round) of every variant in
/// `variants`; prints the table and returns the samples, per variant.
pub fn ping(variants: &[&str], n: u64, rounds: usize) -> Result<Vec<Vec<Sample>>, String> {
    let system = System::new();
    let mut samples = vec![Vec::with_capacity(rounds); variants.len()];
    for round in 0..=rounds {
        for k in 0..variants.len() {
            let i = (k + round) % variants.len();
            let sample = run_once(&system, variants[i], n)?;
            if round > 0 {
                samples[i].push(sample);
            }
        }
    }
    system.shutdown();
    println!("ping: {n} messages, one sender, {rounds} interleaved rounds; ns per message");
    let wall: Vec<Vec<f64>> = samples
        .iter()
        .map(|s| s.iter().map(|x| x.wall).collect())
        .collect();
    table("wall time", variants, &wall);
    let cpu: Option<Vec<Vec<f64>>> = samples
        .iter()
        .map(|s| s.iter().map(|x| x.cpu).collect())
        .collect();
    match cpu {
        Some(cpu) => table("CPU time, all threads", variants, &cpu),
        None => println!("(no CPU times: /proc/self/task/*/schedstat is not readable here)"),
    }
    Ok(samples)
}

/// Prints one table: per variant, median [min–max] and the ratio to plain.
fn table(title: &str, variants: &[&str], samples: &[Vec<f64>]) {
    println!(
        "  {:<10} {:<32} {:>10} {:>8}",
        title, "median [min–max]", "vs plain", "target"
    );
    let base = variants
        .iter()
        .position(|v| *v == "plain")
        .map(|i| quantile(&samples[i], 0.5));
    for (i, v) in variants.iter().enumerate() {
        let med = quantile(&samples[i], 0.5);
        let (ratio, target) = match (base, VARIANTS.iter().position(|x| x == v)) {
            (Some(b), Some(t)) => (
                format!("{:.2}× ({})", med / b, overhead(med, b)),
                format!("≤{:.2}×", TARGETS[t]),
            ),
            _ => (String::new(), String::new()),
        };
        println!(
            "  {v:<10} {:<32} {ratio:>10} {target:>8}",
            spread(&samples[i], "ns")
        );
    }
}
