//! The actors of `odeon-soak`: a sequence-checking sink, remotely spawned workers, and
//! a local watcher of those workers.

use std::collections::{HashMap, VecDeque};

use odeon::{Actor, ActorRef, Context, Handler, Message, Terminated};
use odeon_remote::Spawnable;
use serde::{Deserialize, Serialize};

/// The most sender runs a sink remembers: each restart of a sender is a new run, and
/// the soak must not grow with restarts.
const RUNS: usize = 64;

/// Receives numbered tells and says which were lost, duplicated or out of order;
/// answers pings (for round-trip times).
#[derive(Debug, Default)]
pub struct Sink {
    runs: HashMap<u64, RunReport>,
    order: VecDeque<u64>,
}
impl Actor for Sink {}

/// Tell number `n` (from 0) of the sender's run `run`.
#[derive(Debug, Serialize, Deserialize)]
pub struct Seq {
    /// Drawn at random by the sender when it starts.
    pub run: u64,
    /// Counts from 0 without gaps on the sender.
    pub n: u64,
}
impl Message for Seq {
    type Reply = ();
}

/// What a sink saw of one run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RunReport {
    /// Tells received.
    pub received: u64,
    /// Tells whose number was not above the highest seen: duplicates or reordered.
    pub not_increasing: u64,
    /// One more than the highest number seen (0 if none).
    pub next: u64,
}

impl RunReport {
    /// Numbers below the highest seen that never arrived (assuming no duplicates).
    pub fn gaps(&self) -> u64 {
        self.next
            .saturating_sub(self.received - self.not_increasing)
    }
}

impl Handler<Seq> for Sink {
    fn handle(&mut self, m: Seq, _: &mut Context<Self>) {
        if !self.runs.contains_key(&m.run) {
            if self.order.len() == RUNS
                && let Some(old) = self.order.pop_front()
            {
                self.runs.remove(&old);
            }
            self.order.push_back(m.run);
        }
        let r = self.runs.entry(m.run).or_default();
        r.received += 1;
        if m.n < r.next {
            r.not_increasing += 1;
        } else {
            r.next = m.n + 1;
        }
    }
}

/// What the sink saw of run `0`.
#[derive(Debug, Serialize, Deserialize)]
pub struct Report(pub u64);
impl Message for Report {
    type Reply = RunReport;
}
impl Handler<Report> for Sink {
    fn handle(&mut self, m: Report, _: &mut Context<Self>) -> RunReport {
        self.runs.get(&m.0).cloned().unwrap_or_default()
    }
}

/// Echoes its number.
#[derive(Debug, Serialize, Deserialize)]
pub struct Ping(pub u64);
impl Message for Ping {
    type Reply = u64;
}
impl Handler<Ping> for Sink {
    fn handle(&mut self, m: Ping, _: &mut Context<Self>) -> u64 {
        m.0
    }
}

odeon_remote::remote_actor!(Sink = "soak.Sink" {
    Seq = "soak.Seq", Report = "soak.Report", Ping = "soak.Ping"
});

/// A short-lived actor that peers spawn here, use, watch and stop.
#[derive(Debug, Default)]
pub struct Worker {
    done: u64,
}
impl Actor for Worker {}

/// Adds to the worker's count and returns it.
#[derive(Debug, Serialize, Deserialize)]
pub struct Work(pub u64);
impl Message for Work {
    type Reply = u64;
}
impl Handler<Work> for Worker {
    fn handle(&mut self, m: Work, _: &mut Context<Self>) -> u64 {
        self.done += m.0;
        self.done
    }
}

odeon_remote::remote_actor!(Worker = "soak.Worker" { Work = "soak.Work" });

impl Spawnable for Worker {
    type Args = u64;
    fn create(done: u64) -> Result<Self, String> {
        Ok(Worker { done })
    }
}

/// Watches workers and counts their `Terminated` notices.
#[derive(Debug, Default)]
pub struct Watcher {
    terminated: u64,
}
impl Actor for Watcher {}
impl Handler<Terminated> for Watcher {
    fn handle(&mut self, _: Terminated, _: &mut Context<Self>) {
        self.terminated += 1;
    }
}

/// Watch this worker.
#[derive(Debug)]
pub struct WatchIt(pub ActorRef<Worker>);
impl Message for WatchIt {
    type Reply = ();
}
impl Handler<WatchIt> for Watcher {
    fn handle(&mut self, m: WatchIt, cx: &mut Context<Self>) {
        cx.watch(&m.0);
    }
}

/// The `Terminated` notices so far.
#[derive(Debug)]
pub struct Count;
impl Message for Count {
    type Reply = u64;
}
impl Handler<Count> for Watcher {
    fn handle(&mut self, _: Count, _: &mut Context<Self>) -> u64 {
        self.terminated
    }
}
