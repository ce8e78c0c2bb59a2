//! `theater-rings`: rings of actors spread over three nodes that run as three OS
//! processes on loopback (SALSA Lite's TheaterRings), with remote-capable and with
//! mobile members.
//!
//! This process is node `a`; it starts itself twice more as the children `b` and `c`
//! (the hidden subcommand [`CHILD`]), which declare both member types spawnable and
//! live until their standard input closes. Member `i` of ring `r` runs on node
//! `(r + i) % 3`, so with the default ring of three every hop of a token crosses a
//! process boundary. A run wires the rings (asked, so that every member knows its
//! next before a token moves), then sends one token into each ring; every ring's
//! token makes the same number of hops and the last hop tells the collector on `a`.
//! The figure is messages per second in aggregate: all hops of all rings over the
//! time from the first token sent to the last ring finished. Plain (remote-capable)
//! and mobile runs are interleaved, rotating the order every round.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use odeon::{Actor, ActorRef, Context, Handler, Message, System};
use odeon_remote::{Node, Secret, Spawnable};
use serde::{Deserialize, Serialize};

use crate::local::Token;
use crate::stats::{overhead, quantile, spread};

/// The hidden subcommand a child node runs: `theater-node --name N --seed ADDR`.
pub const CHILD: &str = "theater-node";

/// The children's names (the parent is `a`).
const CHILDREN: [&str; 2] = ["b", "c"];

/// Give up after this long (a guard against a hang, not a measurement).
const PATIENCE: Duration = Duration::from_secs(300);

const SECRET: &str = "odeon mobility benchmark secret";

/// The sizes of `theater-rings`.
#[derive(Debug, Clone)]
pub struct TheaterSizes {
    /// Ring counts, one run per count and kind per round.
    pub rings: Vec<usize>,
    /// Actors per ring.
    pub ring_size: usize,
    /// Messages per run, shared among the rings (each ring's token makes
    /// `msgs / rings` hops, at least `ring_size`).
    pub msgs: u64,
    /// Interleaved rounds after one warm-up round.
    pub rounds: usize,
}

/// Told by the last hop of a ring's token.
#[derive(Debug, Serialize, Deserialize)]
pub struct Finished;
impl Message for Finished {
    type Reply = ();
}

/// Counts finished rings, on node `a`.
#[derive(Debug)]
pub struct Collector {
    done: mpsc::Sender<()>,
}
impl Actor for Collector {}
impl Handler<Finished> for Collector {
    fn handle(&mut self, _: Finished, _: &mut Context<Self>) {
        let _ = self.done.send(());
    }
}
odeon_remote::remote_actor!(Collector = "bench.theater.Collector" {
    Finished = "bench.theater.Finished"
});

/// A ring member of either kind.
pub trait TheaterMember: Spawnable<Args = ()> + Handler<Token> {
    /// The message that tells a member its next and the collector.
    type Wire: Message<Reply = ()> + Serialize;
    /// That message.
    fn wire(next: ActorRef<Self>, done: ActorRef<Collector>) -> Self::Wire;
}

macro_rules! theater_member {
    ($t:ident, $wire:ident) => {
        impl Handler<Token> for $t {
            fn handle(&mut self, m: Token, _: &mut Context<Self>) {
                if m.0 == 0 {
                    if let Some(done) = &self.done {
                        let _ = done.tell(Finished);
                    }
                } else if let Some(next) = &self.next {
                    let _ = next.tell(Token(m.0 - 1));
                }
            }
        }
        /// Tells a member its next and the collector.
        #[derive(Debug, Serialize, Deserialize)]
        pub struct $wire(ActorRef<$t>, ActorRef<Collector>);
        impl Message for $wire {
            type Reply = ();
        }
        impl Handler<$wire> for $t {
            fn handle(&mut self, m: $wire, _: &mut Context<Self>) {
                self.next = Some(m.0);
                self.done = Some(m.1);
            }
        }
        impl Spawnable for $t {
            type Args = ();
            fn create(_: ()) -> Result<Self, String> {
                Ok($t::default())
            }
        }
        impl TheaterMember for $t {
            type Wire = $wire;
            fn wire(next: ActorRef<Self>, done: ActorRef<Collector>) -> $wire {
                $wire(next, done)
            }
        }
    };
}

/// A remote-capable member.
#[derive(Debug, Default)]
pub struct PlainMember {
    next: Option<ActorRef<PlainMember>>,
    done: Option<ActorRef<Collector>>,
}
impl Actor for PlainMember {}
theater_member!(PlainMember, PlainWire);
odeon_remote::remote_actor!(PlainMember = "bench.theater.PlainMember" {
    Token = "bench.Token",
    PlainWire = "bench.theater.PlainWire",
});

/// A mobile member (it never moves here: this measures what being mobile costs).
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct MobileMember {
    next: Option<ActorRef<MobileMember>>,
    done: Option<ActorRef<Collector>>,
}
impl Actor for MobileMember {}
theater_member!(MobileMember, MobileWire);
odeon_remote::mobile_actor!(MobileMember = "bench.theater.MobileMember" {
    Token = "bench.Token",
    MobileWire = "bench.theater.MobileWire",
});

fn builder(name: &str) -> Result<odeon_remote::NodeBuilder, String> {
    let secret = Secret::new(SECRET).map_err(|e| e.to_string())?;
    Ok(Node::builder(name)
        .secret(secret)
        .gossip_interval(Duration::from_millis(100))
        .lost_after(Duration::from_secs(10))
        .spawnable::<PlainMember>()
        .spawnable::<MobileMember>()
        .mobile::<MobileMember>())
}

/// A child node: `args` are `--name N --seed ADDR`. Prints `ready` once linked to both
/// other nodes (gossip tells it of the other child), and leaves when its standard
/// input closes (its parent ended).
pub fn child_main(args: &[String]) -> Result<(), String> {
    let (mut name, mut seed) = (None, None);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--name" => name = it.next().cloned(),
            "--seed" => seed = it.next().and_then(|s| s.parse().ok()),
            other => return Err(format!("{CHILD}: unknown argument {other:?}")),
        }
    }
    let (Some(name), Some(seed)) = (name, seed) else {
        return Err(format!("{CHILD} needs --name and --seed"));
    };
    let system = System::new();
    let node = system
        .block_on(builder(&name)?.seed(seed).start(&system.handle()))
        .map_err(|e| format!("node {name}: {e}"))?;
    let deadline = Instant::now() + PATIENCE;
    while node.peers().len() < CHILDREN.len() {
        if Instant::now() > deadline {
            return Err(format!("node {name} did not link to both others"));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    println!("ready");
    std::io::stdout().flush().map_err(|e| e.to_string())?;
    let mut sink = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut sink);
    system.block_on(node.leave());
    system.shutdown();
    Ok(())
}

/// A child process, killed when dropped (if it did not leave first).
struct ChildNode {
    name: &'static str,
    child: Child,
}

impl ChildNode {
    fn start(name: &'static str, seed: std::net::SocketAddr) -> Result<ChildNode, String> {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let child = Command::new(exe)
            .args([CHILD, "--name", name, "--seed", &seed.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start node {name}: {e}"))?;
        Ok(ChildNode { name, child })
    }

    /// Waits for its `ready` (it is linked to both other nodes).
    fn ready(&mut self) -> Result<(), String> {
        let out: ChildStdout = self.child.stdout.take().ok_or("no child stdout")?;
        let mut line = String::new();
        let read = BufReader::new(out).read_line(&mut line);
        if !matches!(read, Ok(n) if n > 0) || line.trim() != "ready" {
            return Err(format!("node {} did not start ({line:?})", self.name));
        }
        Ok(())
    }

    /// Closes its input (it leaves the cluster and exits) and waits for it.
    fn finish(mut self) {
        drop(self.child.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for ChildNode {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// Node `a`, its two children and the collector.
struct Theater {
    system: System,
    node: Node,
    children: Vec<ChildNode>,
    collector: ActorRef<Collector>,
    done: mpsc::Receiver<()>,
}

impl Theater {
    fn start() -> Result<Theater, String> {
        let system = System::new();
        let node = system
            .block_on(builder("a")?.start(&system.handle()))
            .map_err(|e| format!("node a: {e}"))?;
        let mut children = CHILDREN
            .iter()
            .map(|name| ChildNode::start(name, node.listen_addr()))
            .collect::<Result<Vec<_>, _>>()?;
        for c in &mut children {
            c.ready()?;
        }
        let deadline = Instant::now() + PATIENCE;
        while node.peers().len() < CHILDREN.len() {
            if Instant::now() > deadline {
                return Err("the three processes did not link".into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let (tx, done) = mpsc::channel();
        let collector = system.spawn(Collector { done: tx });
        Ok(Theater {
            system,
            node,
            children,
            collector,
            done,
        })
    }

    /// One run: `rings` rings of `size` members, each token `hops` hops. Returns
    /// messages per second.
    fn run<M>(&self, rings: usize, size: usize, hops: u64) -> Result<f64, String>
    where
        M: TheaterMember + Default + Handler<M::Wire>,
    {
        let mut all: Vec<Vec<ActorRef<M>>> = Vec::with_capacity(rings);
        for r in 0..rings {
            let mut ring = Vec::with_capacity(size);
            for i in 0..size {
                let member = match (r + i) % 3 {
                    0 => self.system.spawn(M::default()),
                    n => self
                        .system
                        .block_on(self.node.spawn_on::<M>(CHILDREN[n - 1], ()))
                        .map_err(|e| format!("spawn on {}: {e}", CHILDREN[n - 1]))?,
                };
                ring.push(member);
            }
            all.push(ring);
        }
        for ring in &all {
            for (i, m) in ring.iter().enumerate() {
                let next = ring[(i + 1) % size].clone();
                self.system
                    .block_on(m.ask(M::wire(next, self.collector.clone())))
                    .map_err(|e| format!("wiring: {e}"))?;
            }
        }
        let t = Instant::now();
        for ring in &all {
            ring[0].tell(Token(hops)).map_err(|e| e.to_string())?;
        }
        for finished in 0..rings {
            self.done
                .recv_timeout(PATIENCE)
                .map_err(|_| format!("{finished} of {rings} rings finished in {PATIENCE:?}"))?;
        }
        let secs = t.elapsed().as_secs_f64();
        for m in all.iter().flatten() {
            m.stop();
        }
        Ok((hops + 1) as f64 * rings as f64 / secs)
    }

    fn finish(self) {
        self.collector.stop();
        self.system.block_on(self.node.leave());
        for c in self.children {
            c.finish();
        }
        self.system.shutdown();
    }
}

/// `theater-rings`: for each ring count, interleaved plain and mobile runs.
pub fn theater_rings(sizes: &TheaterSizes) -> Result<(), String> {
    let size = sizes.ring_size.max(2);
    let theater = Theater::start()?;
    println!(
        "theater-rings: rings of {size} actors over 3 processes on loopback (member i of \
         ring r on node (r+i)%3), {} messages per run, {} rounds",
        sizes.msgs, sizes.rounds
    );
    for &rings in &sizes.rings {
        let hops = (sizes.msgs / rings.max(1) as u64).max(size as u64);
        let mut samples: [Vec<f64>; 2] = Default::default();
        for round in 0..=sizes.rounds {
            for i in 0..2 {
                let kind = (i + round) % 2;
                let rate = match kind {
                    0 => theater.run::<PlainMember>(rings, size, hops),
                    _ => theater.run::<MobileMember>(rings, size, hops),
                };
                let rate = rate?;
                if round > 0 {
                    samples[kind].push(rate);
                }
            }
        }
        let base = quantile(&samples[0], 0.5);
        println!("  {rings} rings ({hops} hops each):");
        for (name, v) in ["remote-capable", "mobile"].iter().zip(&samples) {
            println!(
                "    {name:<15} {}  ({} vs remote-capable)",
                spread(v, "msgs/s"),
                overhead(quantile(v, 0.5), base)
            );
        }
    }
    theater.finish();
    Ok(())
}
