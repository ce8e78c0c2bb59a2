//! `remote`: what batches and reservations cost across nodes (issue 16), on two
//! nodes in one process over loopback. Node `b` sends `n` empty messages to an actor
//! on node `a`, four ways, then asks for the count:
//!
//! - `tells10`: remote `tell`s, ten at a time (the unit a batch of ten replaces);
//! - `batch10`: one `atomic` batch of ten tells per ten messages (one frame each);
//! - `tells`: the same stream of plain remote `tell`s (the baseline of `reserved`);
//! - `reserved`: the whole stream through one remote `Reservation`.
//!
//! `tells10` and `tells` send the same thing; they are kept apart so that each
//! comparison in the table sits next to its own baseline. Every 10,000 messages the
//! sender asks for the count (a round trip, in every variant alike), so that no
//! queue grows without bound. Runs are interleaved, the order rotating each round.

use std::time::{Duration, Instant};

use odeon::{ActorRef, System};
use odeon_remote::{Node, Secret};

use crate::ping::{Count, Ping, Pinged};
use crate::stats::{quantile, spread};

/// The variants, in table order.
pub const VARIANTS: [&str; 4] = ["tells10", "batch10", "tells", "reserved"];

// The actor and messages of `ping.rs`, reachable from another node.
odeon_remote::remote_actor!(Pinged = "bench.Pinged" { Ping = "bench.Ping", Count = "bench.Count" });

/// Messages between two round trips that keep the queues bounded.
const PACE: u64 = 10_000;

async fn run_once(target: &ActorRef<Pinged>, variant: &str, n: u64) -> Result<f64, String> {
    let base = target.ask(Count).await.map_err(|e| e.to_string())?;
    let start = Instant::now();
    let mut sent = 0u64;
    let reservation = if variant == "reserved" {
        Some(
            target
                .reserve()
                .lease(Duration::from_secs(600))
                .await
                .map_err(|e| e.to_string())?,
        )
    } else {
        None
    };
    while sent < n {
        let step = 10.min(n - sent);
        match variant {
            "tells10" | "tells" => {
                for _ in 0..step {
                    target.send(Ping).await.map_err(|e| e.to_string())?;
                }
            }
            "batch10" => target
                .atomic(|b| {
                    for _ in 0..step {
                        b.tell(Ping);
                    }
                })
                .map_err(|e| e.to_string())?,
            "reserved" => {
                let r = reservation.as_ref().ok_or("no reservation")?;
                for _ in 0..step {
                    r.tell(Ping).map_err(|e| e.to_string())?;
                }
            }
            other => return Err(format!("unknown variant {other:?}")),
        }
        sent += step;
        if sent.is_multiple_of(PACE) || sent == n {
            let count = match &reservation {
                Some(r) => r.ask(Count).await,
                None => target.ask(Count).await,
            }
            .map_err(|e| e.to_string())?;
            if count - base != sent {
                return Err(format!("{variant}: {} handled of {sent}", count - base));
            }
        }
    }
    let elapsed = start.elapsed();
    drop(reservation);
    Ok(elapsed.as_nanos() as f64 / n as f64)
}

/// `rounds` interleaved rounds (after a warm-up round) of `variants`; prints the
/// table and returns the samples, per variant.
pub fn remote(variants: &[&str], n: u64, rounds: usize) -> Result<Vec<Vec<f64>>, String> {
    let secret = || Secret::new("odeon-sharing-bench remote secret").map_err(|e| e.to_string());
    let (sys_a, sys_b) = (System::new(), System::new());
    let a = sys_a
        .block_on(
            Node::builder("a")
                .secret(secret()?)
                .outbox_bound(1 << 20)
                .start(&sys_a.handle()),
        )
        .map_err(|e| e.to_string())?;
    let b = sys_b
        .block_on(
            Node::builder("b")
                .secret(secret()?)
                .outbox_bound(1 << 20)
                .seed(a.listen_addr())
                .start(&sys_b.handle()),
        )
        .map_err(|e| e.to_string())?;
    let pinged = sys_a.spawn(Pinged::default());
    a.register("pinged", &pinged).map_err(|e| e.to_string())?;
    let target = sys_b
        .block_on(b.lookup::<Pinged>("pinged"))
        .map_err(|e| e.to_string())?;
    let mut samples = vec![Vec::with_capacity(rounds); variants.len()];
    for round in 0..=rounds {
        for k in 0..variants.len() {
            let i = (k + round) % variants.len();
            let ns = sys_b.block_on(run_once(&target, variants[i], n))?;
            if round > 0 {
                samples[i].push(ns);
            }
        }
    }
    println!(
        "remote: {n} messages from node b to an actor on node a (loopback, one process), \
         {rounds} interleaved rounds; ns per message"
    );
    println!(
        "  {:<10} {:<32} {:>10}",
        "variant", "median [min–max]", "vs base"
    );
    let med = |v: &str| {
        variants
            .iter()
            .position(|x| *x == v)
            .map(|i| quantile(&samples[i], 0.5))
    };
    for (i, v) in variants.iter().enumerate() {
        let base = match *v {
            "batch10" => med("tells10"),
            "reserved" => med("tells"),
            _ => None,
        };
        let ratio = base
            .map(|b| format!("{:.2}×", quantile(&samples[i], 0.5) / b))
            .unwrap_or_default();
        println!("  {v:<10} {:<32} {ratio:>10}", spread(&samples[i], "ns"));
    }
    drop((a, b));
    sys_b.shutdown();
    sys_a.shutdown();
    Ok(samples)
}
