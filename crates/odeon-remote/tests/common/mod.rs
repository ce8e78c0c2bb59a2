//! Actors and helpers shared by the multi-node tests: several nodes, each with its own
//! system, in one process on loopback.
#![allow(
    dead_code,
    unreachable_pub,
    missing_docs,
    missing_debug_implementations
)]

#[cfg(feature = "tls")]
pub mod certs;
pub mod mesh;
pub mod proxy;
pub mod sharing;

// Each test file uses some of these; the others are unused there.
#[allow(unused_imports)]
pub use mesh::{await_mesh, mesh, name_node, node_name, start_tuned};

use std::time::{Duration, Instant};

use odeon::{Actor, ActorRef, AsyncHandler, Context, Handler, Message, System, Terminated};
use odeon_remote::{Node, Secret, Spawnable};
use serde::{Deserialize, Serialize};

pub const SECRET: &str = "a cluster secret of enough bytes";

/// Counts; replies with the running total.
pub struct Counter {
    pub total: u64,
    pub seen: Vec<u64>,
}
impl Actor for Counter {}

#[derive(Debug, Serialize, Deserialize)]
pub struct Add(pub u64);
impl Message for Add {
    type Reply = u64;
}
impl Handler<Add> for Counter {
    fn handle(&mut self, m: Add, _: &mut Context<Self>) -> u64 {
        self.total += m.0;
        self.seen.push(m.0);
        self.total
    }
}

/// Everything added so far, in arrival order.
#[derive(Debug, Serialize, Deserialize)]
pub struct History;
impl Message for History {
    type Reply = Vec<u64>;
}
impl Handler<History> for Counter {
    fn handle(&mut self, _: History, _: &mut Context<Self>) -> Vec<u64> {
        self.seen.clone()
    }
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Crash;
impl Message for Crash {
    type Reply = ();
}
impl Handler<Crash> for Counter {
    fn handle(&mut self, _: Crash, _: &mut Context<Self>) {
        panic!("asked to crash");
    }
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Halt;
impl Message for Halt {
    type Reply = ();
}
impl Handler<Halt> for Counter {
    fn handle(&mut self, _: Halt, cx: &mut Context<Self>) {
        cx.stop();
    }
}

/// Handled, but not in the remote interface: local-only.
#[derive(Debug)]
pub struct LocalOnly;
impl Message for LocalOnly {
    type Reply = ();
}
impl Handler<LocalOnly> for Counter {
    fn handle(&mut self, _: LocalOnly, _: &mut Context<Self>) {}
}

/// A message that carries a ref: the counter adds `n` to `other` on the caller's
/// behalf and returns what `other` answered.
#[derive(Serialize, Deserialize)]
pub struct Forward {
    pub other: ActorRef<Counter>,
    pub n: u64,
}
impl Message for Forward {
    type Reply = u64;
}
impl AsyncHandler<Forward> for Counter {
    async fn handle(&mut self, m: Forward, _: &mut Context<Self>) -> u64 {
        m.other.ask(Add(m.n)).await.unwrap_or(u64::MAX)
    }
}

/// Returns a ref to itself, and whether a ref it was given is local here.
#[derive(Serialize, Deserialize)]
pub struct WhoAreYou(pub Option<ActorRef<Counter>>);
impl Message for WhoAreYou {
    type Reply = (ActorRef<Counter>, bool);
}
impl Handler<WhoAreYou> for Counter {
    fn handle(&mut self, m: WhoAreYou, cx: &mut Context<Self>) -> (ActorRef<Counter>, bool) {
        (cx.myself(), m.0.is_some_and(|r| r.is_local()))
    }
}

odeon_remote::remote_actor!(Counter = "test.Counter" {
    Add = "test.Add",
    History = "test.History",
    Crash = "test.Crash",
    Halt = "test.Halt",
    Forward = "test.Forward",
    WhoAreYou = "test.WhoAreYou",
});

impl Spawnable for Counter {
    type Args = u64;
    fn create(start: u64) -> Result<Self, String> {
        if start == 666 {
            return Err("not that number".into());
        }
        Ok(Counter {
            total: start,
            seen: Vec::new(),
        })
    }
}

/// Another remote type, to check typed lookups.
pub struct Echo;
impl Actor for Echo {}
#[derive(Serialize, Deserialize)]
pub struct Say(pub String);
impl Message for Say {
    type Reply = String;
}
impl Handler<Say> for Echo {
    fn handle(&mut self, m: Say, _: &mut Context<Self>) -> String {
        m.0
    }
}
odeon_remote::remote_actor!(Echo = "test.Echo" { Say = "test.Say" });

/// Records `Terminated` notices of the actors it watches.
#[derive(Default)]
pub struct Watcher {
    pub seen: Vec<Terminated>,
}
impl Actor for Watcher {}
impl Handler<Terminated> for Watcher {
    fn handle(&mut self, t: Terminated, _: &mut Context<Self>) {
        self.seen.push(t);
    }
}
pub struct WatchIt(pub ActorRef<Counter>);
impl Message for WatchIt {
    type Reply = ();
}
impl Handler<WatchIt> for Watcher {
    fn handle(&mut self, m: WatchIt, cx: &mut Context<Self>) {
        cx.watch(&m.0);
    }
}
pub struct Seen;
impl Message for Seen {
    type Reply = Vec<Terminated>;
}
impl Handler<Seen> for Watcher {
    fn handle(&mut self, _: Seen, _: &mut Context<Self>) -> Vec<Terminated> {
        self.seen.clone()
    }
}

pub fn secret() -> Secret {
    Secret::new(SECRET).expect("long enough")
}

/// A system with one node on it.
pub struct Member {
    pub system: System,
    pub node: Option<Node>,
}

impl Member {
    pub fn start(name: &str, seeds: &[std::net::SocketAddr]) -> Member {
        let system = System::new();
        let mut b = Node::builder(name)
            .secret(secret())
            // Also how long a silent link is tolerated: long enough that a loaded
            // machine's scheduling pauses are not taken for a dead peer.
            .lost_after(Duration::from_millis(1_500))
            .gossip_interval(Duration::from_millis(100))
            .spawnable::<Counter>();
        for s in seeds {
            b = b.seed(*s);
        }
        let node = system
            .block_on(b.start(&system.handle()))
            .expect("node starts");
        Member {
            system,
            node: Some(node),
        }
    }

    pub fn node(&self) -> &Node {
        self.node.as_ref().expect("node running")
    }

    pub fn addr(&self) -> std::net::SocketAddr {
        self.node().listen_addr()
    }
}

/// Polls `f` until it returns `Some`, for at most `within`.
pub fn eventually<T>(within: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if start.elapsed() > within {
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[cfg(feature = "tls")]
impl Member {
    /// A member whose links use mutual TLS with `tls`.
    pub fn start_tls(
        name: &str,
        seeds: &[std::net::SocketAddr],
        tls: odeon_remote::transport::TlsConfig,
    ) -> Result<Member, odeon_remote::NodeError> {
        let system = System::new();
        let mut b = Node::builder(name).secret(secret()).tls(tls);
        for s in seeds {
            b = b.seed(*s);
        }
        let node = system.block_on(b.start(&system.handle()))?;
        Ok(Member {
            system,
            node: Some(node),
        })
    }
}

/// Links itself to a counter on request; panics on `Boom`.
#[derive(Default)]
pub struct Linker;
impl Actor for Linker {}
pub struct LinkTo(pub ActorRef<Counter>);
impl Message for LinkTo {
    type Reply = ();
}
impl Handler<LinkTo> for Linker {
    fn handle(&mut self, m: LinkTo, cx: &mut Context<Self>) {
        cx.link(&m.0);
    }
}
pub struct Boom;
impl Message for Boom {
    type Reply = ();
}
impl Handler<Boom> for Linker {
    fn handle(&mut self, _: Boom, _: &mut Context<Self>) {
        panic!("boom");
    }
}
pub struct WatchLinker(pub ActorRef<Linker>);
impl Message for WatchLinker {
    type Reply = ();
}
impl Handler<WatchLinker> for Watcher {
    fn handle(&mut self, m: WatchLinker, cx: &mut Context<Self>) {
        cx.watch(&m.0);
    }
}

/// The first notice `watcher` got, waiting for it.
pub fn first_notice(system: &System, watcher: &ActorRef<Watcher>) -> Option<Terminated> {
    eventually(Duration::from_secs(10), || {
        system
            .block_on(watcher.ask(Seen))
            .ok()
            .and_then(|s| s.first().cloned())
    })
}

/// A supervised child that depends on a counter on another node: it watches it from
/// its start, fails when the counter fails, and counts its starts.
pub struct Guard {
    pub target: ActorRef<Counter>,
    pub starts: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}
impl Actor for Guard {
    fn started(&mut self, cx: &mut Context<Self>) {
        self.starts
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        cx.watch(&self.target);
    }
}
impl Handler<Terminated> for Guard {
    fn handle(&mut self, t: Terminated, _: &mut Context<Self>) {
        assert!(
            !t.reason.is_failure(),
            "my remote dependency failed: {}",
            t.reason
        );
    }
}

impl Member {
    /// A member behind its own fault-injection proxy: it advertises the proxy's
    /// address, so every link other nodes open to it goes through the proxy (gossip is
    /// relayed too, then goes direct). `tune` adjusts the builder (timings, bounds).
    pub fn start_behind_proxy(
        name: &str,
        seeds: &[std::net::SocketAddr],
        tune: impl FnOnce(odeon_remote::NodeBuilder) -> odeon_remote::NodeBuilder,
    ) -> (Member, proxy::Proxy) {
        let proxy = proxy::Proxy::start();
        let member = Member::start_advertising(name, seeds, &proxy, tune);
        (member, proxy)
    }

    /// A member advertising `proxy`'s address (a restart behind the same proxy).
    pub fn start_advertising(
        name: &str,
        seeds: &[std::net::SocketAddr],
        proxy: &proxy::Proxy,
        tune: impl FnOnce(odeon_remote::NodeBuilder) -> odeon_remote::NodeBuilder,
    ) -> Member {
        let system = System::new();
        let mut b = Node::builder(name)
            .secret(secret())
            .advertise(proxy.addr())
            .gossip_interval(Duration::from_millis(100))
            .spawnable::<Counter>();
        for s in seeds {
            b = b.seed(*s);
        }
        let b = tune(b);
        let node = system
            .block_on(b.start(&system.handle()))
            .expect("node starts");
        proxy.set_target(node.bound_addr());
        Member {
            system,
            node: Some(node),
        }
    }
}
