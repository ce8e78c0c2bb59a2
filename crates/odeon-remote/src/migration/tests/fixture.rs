//! Real nodes for the migration tests that need them (`pins.rs`, and the tests in
//! `chunk.rs`, `faults.rs` and `rewatch.rs`): each node on its own system, in one
//! process on loopback, all with one secret, the first seeding the others.

use std::sync::Arc;
use std::time::{Duration, Instant};

use odeon::{Actor, ActorRef, Context, Handler, Message, RemoteActor, System};
use serde::{Deserialize, Serialize};

use crate::migration::driver::Mobile;
use crate::{Node, NodeBuilder, Secret};

/// How long a condition may take: a guard against a hang on a loaded machine, not a
/// timing.
const GUARD: Duration = Duration::from_secs(30);

/// A mobile actor with no state that answers `Ping` with 7.
#[derive(Default, Serialize, Deserialize)]
pub(crate) struct Spot;
impl Actor for Spot {}
/// Answered with 7.
#[derive(Serialize, Deserialize)]
pub(crate) struct Ping;
impl Message for Ping {
    type Reply = u32;
}
impl Handler<Ping> for Spot {
    fn handle(&mut self, _: Ping, _: &mut Context<Self>) -> u32 {
        7
    }
}
crate::mobile_actor!(Spot = "fixture.Spot" { Ping = "fixture.Ping" });

/// Polls `f` every 10 ms until it returns `Some`, for at most [`GUARD`].
pub(crate) fn eventually<T>(mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let start = Instant::now();
    while start.elapsed() < GUARD {
        if let Some(v) = f() {
            return Some(v);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

/// Nodes called `names`, started in order, each on a system of its own (returned in
/// the same order), with gossip every 100 ms, then `tune`d (the mobile types,
/// `lost_after`); every node after the first is seeded with the first. Returns once
/// each node links to all the others.
pub(crate) fn linked<const N: usize>(
    names: [&str; N],
    tune: impl Fn(NodeBuilder) -> NodeBuilder,
) -> (Vec<System>, [Node; N]) {
    let secret = Secret::generate();
    let systems: Vec<System> = (0..N).map(|_| System::new()).collect();
    let mut nodes: Vec<Node> = Vec::with_capacity(N);
    for (name, system) in names.into_iter().zip(&systems) {
        let mut b = Node::builder(name)
            .secret(secret.clone())
            .gossip_interval(Duration::from_millis(100));
        if let Some(first) = nodes.first() {
            b = b.seed(first.listen_addr());
        }
        let node = system
            .block_on(tune(b).start(&system.handle()))
            .expect("node starts");
        nodes.push(node);
    }
    for n in &nodes {
        eventually(|| (n.peers().len() == N - 1).then_some(())).expect("the nodes link");
    }
    let Ok(nodes) = <[Node; N]>::try_from(nodes) else {
        unreachable!("one node per name");
    };
    (systems, nodes)
}

/// The actor registered as `name`, looked up from `node` (on `system`) until the
/// name has spread there.
pub(crate) fn find<A: RemoteActor>(system: &System, node: &Node, name: &str) -> ActorRef<A> {
    eventually(|| system.block_on(node.lookup::<A>(name)).ok()).expect("the name is found")
}

/// The mobility entries `n` holds.
pub(crate) fn entries(n: &Node) -> Vec<Arc<Mobile>> {
    n.inner.mobile.lock().values().cloned().collect()
}
