//! The actors of the cluster demo, shared by `examples/cluster.rs` (three nodes in one
//! process) and the `odeon-node` binary (one node per process).

use odeon::{Actor, Context, Handler, Message, Terminated};
use odeon_remote::Spawnable;
use serde::{Deserialize, Serialize};

/// Keeps a running total; reachable from other nodes.
#[derive(Debug, Default)]
pub struct Tally {
    total: u64,
}
impl Actor for Tally {}

/// Adds to the total (one-way).
#[derive(Debug, Serialize, Deserialize)]
pub struct Add(pub u64);
impl Message for Add {
    type Reply = ();
}
impl Handler<Add> for Tally {
    fn handle(&mut self, m: Add, _: &mut Context<Self>) {
        self.total += m.0;
    }
}

/// Asks for the total.
#[derive(Debug, Serialize, Deserialize)]
pub struct Total;
impl Message for Total {
    type Reply = u64;
}
impl Handler<Total> for Tally {
    fn handle(&mut self, _: Total, _: &mut Context<Self>) -> u64 {
        self.total
    }
}

odeon_remote::remote_actor!(Tally = "demo.Tally" { Add = "demo.Add", Total = "demo.Total" });

/// Other nodes may start tallies here, from an initial total.
impl Spawnable for Tally {
    type Args = u64;
    fn create(total: u64) -> Result<Self, String> {
        Ok(Tally { total })
    }
}

/// Collects `Terminated` notices, for the demo to print.
#[derive(Debug, Default)]
pub struct Watcher {
    pub seen: Vec<Terminated>,
}
impl Actor for Watcher {}
impl Handler<Terminated> for Watcher {
    fn handle(&mut self, t: Terminated, _: &mut Context<Self>) {
        self.seen.push(t);
    }
}

/// Watch this tally.
#[derive(Debug)]
pub struct WatchIt(pub odeon::ActorRef<Tally>);
impl Message for WatchIt {
    type Reply = ();
}
impl Handler<WatchIt> for Watcher {
    fn handle(&mut self, m: WatchIt, cx: &mut Context<Self>) {
        cx.watch(&m.0);
    }
}

/// The notices so far.
#[derive(Debug)]
pub struct Notices;
impl Message for Notices {
    type Reply = Vec<Terminated>;
}
impl Handler<Notices> for Watcher {
    fn handle(&mut self, _: Notices, _: &mut Context<Self>) -> Vec<Terminated> {
        self.seen.clone()
    }
}
