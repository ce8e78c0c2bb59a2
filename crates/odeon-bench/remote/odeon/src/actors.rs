//! The server side of the benchmarks, and the two actor types of the local-cost
//! comparison (identical but for the remote declaration).

use odeon::{Actor, Context, Handler, Message};
use odeon_remote::Spawnable;
use serde::{Deserialize, Serialize};

/// Echoes requests, counts one-way messages.
#[derive(Debug, Default)]
pub struct Server {
    count: u64,
    sum: u64,
}
impl Actor for Server {}

/// A request: the reply is the same number.
#[derive(Debug, Serialize, Deserialize)]
pub struct Echo(pub u64);
impl Message for Echo {
    type Reply = u64;
}
impl Handler<Echo> for Server {
    fn handle(&mut self, m: Echo, _: &mut Context<Self>) -> u64 {
        m.0
    }
}

/// A one-way message.
#[derive(Debug, Serialize, Deserialize)]
pub struct Push(pub u64);
impl Message for Push {
    type Reply = ();
}
impl Handler<Push> for Server {
    fn handle(&mut self, m: Push, _: &mut Context<Self>) {
        self.count += 1;
        self.sum = self.sum.wrapping_add(m.0);
    }
}

/// How many `Push`es arrived since the last `Done`, and their sum (then resets).
#[derive(Debug, Serialize, Deserialize)]
pub struct Done;
impl Message for Done {
    type Reply = (u64, u64);
}
impl Handler<Done> for Server {
    fn handle(&mut self, _: Done, _: &mut Context<Self>) -> (u64, u64) {
        let out = (self.count, self.sum);
        (self.count, self.sum) = (0, 0);
        out
    }
}

odeon_remote::remote_actor!(Server = "bench.Server" {
    Echo = "bench.Echo",
    Push = "bench.Push",
    Done = "bench.Done",
});

/// Spawned remotely by the `spawn` benchmark.
#[derive(Debug)]
pub struct Spawned(pub u64);
impl Actor for Spawned {}
impl Handler<Echo> for Spawned {
    fn handle(&mut self, m: Echo, _: &mut Context<Self>) -> u64 {
        m.0 + self.0
    }
}
odeon_remote::remote_actor!(Spawned = "bench.Spawned" { Echo = "bench.Echo" });
impl Spawnable for Spawned {
    type Args = u64;
    fn create(n: u64) -> Result<Self, String> {
        Ok(Spawned(n))
    }
}

/// Counts; a plain local actor.
#[derive(Debug, Default)]
pub struct Plain(pub u64);
impl Actor for Plain {}
/// Counts; declared reachable from other nodes, otherwise the same as [`Plain`].
#[derive(Debug, Default)]
pub struct Capable(pub u64);
impl Actor for Capable {}

/// One unit of work for the local-cost comparison.
#[derive(Debug, Serialize, Deserialize)]
pub struct Tick;
impl Message for Tick {
    type Reply = ();
}
/// Asks for the count.
#[derive(Debug, Serialize, Deserialize)]
pub struct Count;
impl Message for Count {
    type Reply = u64;
}
impl Handler<Tick> for Plain {
    fn handle(&mut self, _: Tick, _: &mut Context<Self>) {
        self.0 += 1;
    }
}
impl Handler<Count> for Plain {
    fn handle(&mut self, _: Count, _: &mut Context<Self>) -> u64 {
        self.0
    }
}
impl Handler<Tick> for Capable {
    fn handle(&mut self, _: Tick, _: &mut Context<Self>) {
        self.0 += 1;
    }
}
impl Handler<Count> for Capable {
    fn handle(&mut self, _: Count, _: &mut Context<Self>) -> u64 {
        self.0
    }
}
odeon_remote::remote_actor!(Capable = "bench.Capable" { Tick = "bench.Tick", Count = "bench.Count" });
