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
    runs: HashMap<u64, Run>,
    order: VecDeque<u64>,
}
impl Actor for Sink {}

/// What a sink keeps of one sender run.
#[derive(Debug, Default)]
struct Run {
    received: u64,
    reordered: u64,
    duplicates: u64,
    /// One more than the highest number seen.
    next: u64,
    /// Which numbers arrived, for runs that ask for exact accounting (`send`): one bit
    /// each. Empty otherwise, so that a long soak keeps constant memory.
    seen: Vec<u64>,
}

impl Run {
    /// Marks `n` seen; whether it was already.
    fn mark(&mut self, n: u64) -> bool {
        let (word, bit) = ((n / 64) as usize, 1u64 << (n % 64));
        if self.seen.len() <= word {
            self.seen.resize(word + 1, 0);
        }
        let was = self.seen[word] & bit != 0;
        self.seen[word] |= bit;
        was
    }

    fn has(&self, n: u64) -> bool {
        self.seen
            .get((n / 64) as usize)
            .is_some_and(|w| w & (1 << (n % 64)) != 0)
    }
}

/// Tell number `n` (from 0) of the sender's run `run`.
#[derive(Debug, Serialize, Deserialize)]
pub struct Seq {
    /// Drawn at random by the sender when it starts.
    pub run: u64,
    /// Counts from 0 without gaps on the sender (a refused tell keeps its number).
    pub n: u64,
    /// Keep one bit per number, to tell duplicates from reordering exactly.
    pub exact: bool,
}
impl Message for Seq {
    type Reply = ();
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
        let duplicate = m.exact && r.mark(m.n);
        if duplicate {
            r.duplicates += 1;
        } else if m.n < r.next {
            r.reordered += 1;
        }
        r.next = r.next.max(m.n + 1);
    }
}

/// What the sink saw of run `run`, given what the sender knows: it numbered `sent`
/// tells (0..sent) and `refused` were refused by `tell`.
#[derive(Debug, Serialize, Deserialize)]
pub struct Report {
    /// The run.
    pub run: u64,
    /// Tells numbered.
    pub sent: u64,
    /// The numbers whose `tell` returned an error.
    pub refused: Vec<u64>,
}
impl Message for Report {
    type Reply = RunReport;
}

/// The verdict on one run (exact for runs sent with `exact`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RunReport {
    /// Tells received, duplicates included.
    pub received: u64,
    /// Tells received more than once.
    pub duplicates: u64,
    /// Tells received after one with a higher number.
    pub reordered: u64,
    /// Tells accepted by `tell` and never received.
    pub lost: u64,
    /// Tells refused by `tell` and received all the same.
    pub refused_but_delivered: u64,
}

impl Handler<Report> for Sink {
    fn handle(&mut self, m: Report, _: &mut Context<Self>) -> RunReport {
        let Some(r) = self.runs.get(&m.run) else {
            return RunReport {
                lost: m.sent - m.refused.len() as u64,
                ..RunReport::default()
            };
        };
        let refused_but_delivered = m.refused.iter().filter(|&&n| r.has(n)).count() as u64;
        let distinct = (0..m.sent).filter(|&n| r.has(n)).count() as u64;
        RunReport {
            received: r.received,
            duplicates: r.duplicates,
            reordered: r.reordered,
            lost: (m.sent - m.refused.len() as u64)
                .saturating_sub(distinct - refused_but_delivered),
            refused_but_delivered,
        }
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
