//! `thread-ring` and `create`: what being remote-capable or mobile costs an actor that
//! stays on its node (SALSA Lite: remote +0%, mobile about +30% per message).
//!
//! Three actor types that differ only in their declaration: [`PlainRing`] (no remote
//! declaration), [`CapableRing`] (`remote_actor!`) and [`MobileRing`]
//! (`mobile_actor!`, accepted by the system's node). Runs are interleaved (plain,
//! capable, mobile, rotating the order every round) so that drift on a loaded machine
//! hits all three alike.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use odeon::{Actor, ActorRef, Context, Handler, Message, System};
use odeon_remote::{Node, Secret};
use serde::{Deserialize, Serialize};

use crate::stats::{overhead, spread};

/// The token: hops left.
#[derive(Debug, Serialize, Deserialize)]
pub struct Token(pub u64);
impl Message for Token {
    type Reply = ();
}

/// Closes the ring: the first actor's next is the last one spawned (local only).
#[derive(Debug)]
pub struct Link<A: Actor>(pub ActorRef<A>);
impl<A: Actor> Message for Link<A> {
    type Reply = ();
}

/// An actor of the ring, whichever its declaration.
pub trait RingMember: Actor + Handler<Token> + Handler<Link<Self>> {
    /// A member that passes the token to `next` and reports its end on `done`.
    fn new(next: Option<ActorRef<Self>>, done: mpsc::Sender<()>) -> Self;
}

macro_rules! ring_member {
    ($t:ident) => {
        impl Actor for $t {}
        impl Handler<Token> for $t {
            fn handle(&mut self, m: Token, _: &mut Context<Self>) {
                if m.0 == 0 {
                    if let Some(done) = &self.done {
                        let _ = done.send(());
                    }
                } else if let Some(next) = &self.next {
                    let _ = next.tell(Token(m.0 - 1));
                }
            }
        }
        impl Handler<Link<$t>> for $t {
            fn handle(&mut self, m: Link<$t>, _: &mut Context<Self>) {
                self.next = Some(m.0);
            }
        }
        impl RingMember for $t {
            fn new(next: Option<ActorRef<Self>>, done: mpsc::Sender<()>) -> Self {
                $t {
                    next,
                    done: Some(done),
                }
            }
        }
    };
}

/// A ring member with no remote declaration.
#[derive(Debug)]
pub struct PlainRing {
    next: Option<ActorRef<PlainRing>>,
    done: Option<mpsc::Sender<()>>,
}
ring_member!(PlainRing);

/// A ring member reachable from other nodes.
#[derive(Debug)]
pub struct CapableRing {
    next: Option<ActorRef<CapableRing>>,
    done: Option<mpsc::Sender<()>>,
}
ring_member!(CapableRing);
odeon_remote::remote_actor!(CapableRing = "bench.CapableRing" { Token = "bench.Token" });

/// A ring member that may move (its state serializes; the done channel does not
/// travel).
#[derive(Debug, Serialize, Deserialize)]
pub struct MobileRing {
    next: Option<ActorRef<MobileRing>>,
    #[serde(skip)]
    done: Option<mpsc::Sender<()>>,
}
ring_member!(MobileRing);
odeon_remote::mobile_actor!(MobileRing = "bench.MobileRing" { Token = "bench.Token" });

/// The sizes of a run.
#[derive(Debug, Clone, Copy)]
pub struct LocalSizes {
    /// Interleaved rounds.
    pub rounds: usize,
    /// Actors in the ring.
    pub ring: usize,
    /// Hops of the token per run.
    pub hops: u64,
    /// Actors created per run of `create`.
    pub create: usize,
}

/// A system with a node on it that accepts `MobileRing` (as a mobile actor's host
/// would have).
fn system_with_node() -> Result<(System, Node), String> {
    let system = System::new();
    let secret = Secret::new("odeon mobility benchmark secret").map_err(|e| e.to_string())?;
    let node = system
        .block_on(
            Node::builder("bench")
                .secret(secret)
                .mobile::<MobileRing>()
                .start(&system.handle()),
        )
        .map_err(|e| e.to_string())?;
    Ok((system, node))
}

/// Nanoseconds per hop of one run of the ring.
fn ring_run<A: RingMember>(system: &System, sizes: LocalSizes) -> Result<f64, String> {
    let (tx, rx) = mpsc::channel();
    let first = system.spawn(A::new(None, tx.clone()));
    let mut last = first.clone();
    for _ in 1..sizes.ring {
        last = system.spawn(A::new(Some(last), tx.clone()));
    }
    first.tell(Link(last)).map_err(|e| e.to_string())?;
    system.run_until_quiescent();
    let t = Instant::now();
    first.tell(Token(sizes.hops)).map_err(|e| e.to_string())?;
    rx.recv_timeout(Duration::from_secs(120))
        .map_err(|_| "the token did not come back in 120 s".to_string())?;
    let ns = t.elapsed().as_nanos() as f64 / sizes.hops.max(1) as f64;
    // The ring's refs form a cycle: stop every member.
    first.stop();
    drop(first);
    system.run_until_quiescent();
    Ok(ns)
}

/// Nanoseconds per actor: spawn `n`, until all started.
fn create_run<A: RingMember>(system: &System, n: usize) -> f64 {
    let (tx, _rx) = mpsc::channel();
    let t = Instant::now();
    let refs: Vec<ActorRef<A>> = (0..n)
        .map(|_| system.spawn(A::new(None, tx.clone())))
        .collect();
    system.run_until_quiescent();
    let ns = t.elapsed().as_nanos() as f64 / n.max(1) as f64;
    drop(refs);
    system.run_until_quiescent();
    ns
}

/// Samples per kind, in the order plain, capable, mobile.
type Samples = [Vec<f64>; 3];

fn interleaved(
    rounds: usize,
    mut run: impl FnMut(usize) -> Result<f64, String>,
) -> Result<Samples, String> {
    let mut samples: Samples = Default::default();
    // Round 0 warms up (allocator, worker threads, caches) and is not counted.
    for round in 0..=rounds {
        for i in 0..3 {
            let kind = (i + round) % 3;
            let x = run(kind)?;
            if round > 0 {
                samples[kind].push(x);
            }
        }
    }
    Ok(samples)
}

fn report(title: &str, unit: &str, s: &Samples) {
    let median = |v: &[f64]| crate::stats::quantile(v, 0.5);
    let base = median(&s[0]);
    println!("{title}");
    for (name, v) in ["plain", "remote-capable", "mobile"].iter().zip(s) {
        println!(
            "  {name:<15} {}  ({} vs plain, median of {})",
            spread(v, unit),
            overhead(median(v), base),
            v.len()
        );
    }
}

/// `thread-ring`: the per-message cost of the three kinds.
pub fn thread_ring(sizes: LocalSizes) -> Result<(), String> {
    let (system, node) = system_with_node()?;
    let s = interleaved(sizes.rounds, |kind| match kind {
        0 => ring_run::<PlainRing>(&system, sizes),
        1 => ring_run::<CapableRing>(&system, sizes),
        _ => ring_run::<MobileRing>(&system, sizes),
    })?;
    report(
        &format!(
            "thread-ring: {} actors, {} hops per run, {} rounds (targets: remote +0%, mobile <= +5%)",
            sizes.ring, sizes.hops, sizes.rounds
        ),
        "ns/msg",
        &s,
    );
    drop(node);
    system.shutdown();
    Ok(())
}

/// `create`: the creation cost of the three kinds.
pub fn create(sizes: LocalSizes) -> Result<(), String> {
    let (system, node) = system_with_node()?;
    let s = interleaved(sizes.rounds, |kind| {
        Ok(match kind {
            0 => create_run::<PlainRing>(&system, sizes.create),
            1 => create_run::<CapableRing>(&system, sizes.create),
            _ => create_run::<MobileRing>(&system, sizes.create),
        })
    })?;
    report(
        &format!(
            "create: {} actors per run, {} rounds (targets: remote <= +10%, mobile <= +50%)",
            sizes.create, sizes.rounds
        ),
        "ns/actor",
        &s,
    );
    drop(node);
    system.shutdown();
    Ok(())
}
