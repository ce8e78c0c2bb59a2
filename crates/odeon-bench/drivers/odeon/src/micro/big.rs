//! Savina #8, Big (`savina.md` §3.8): W workers each make N ping/pong round trips with
//! workers chosen at random, all at once, then report to a sink. This prices
//! all-to-all traffic with every actor active: mailbox contention and scalability.

use std::sync::{Arc, mpsc};

use odeon::{ActorRef, Context, Handler};
use savina::protocol::expect_eq;
use savina::rng::PseudoRandom;
use savina::{Outcome, Params};

use super::{all, recv_n, settle, tell_only};
use crate::common;

/// Every worker, indexed by id, shared (read-only) by the workers and the sink.
type Neighbors = Arc<[ActorRef<Worker>]>;

struct Worker {
    id: i32,
    n: u64,
    rng: PseudoRandom,
    neighbors: Option<Neighbors>,
    sink: ActorRef<Sink>,
    /// The worker last pinged; its pong is the only one expected. −1 matches the
    /// driver's kick-off `Pong(-1)`.
    expected: i32,
    pings_sent: u64,
    pings_answered: u64,
    mismatches: u64,
    done: mpsc::Sender<WorkerReport>,
}

/// What a worker tells the driver when it exits.
struct WorkerReport {
    pings_sent: u64,
    pings_answered: u64,
    mismatches: u64,
}

/// Counts the workers that are done, then tells them all to exit.
struct Sink {
    workers: usize,
    exits: usize,
    neighbors: Option<Neighbors>,
    done: mpsc::Sender<usize>,
}

impl odeon::Actor for Worker {}
impl odeon::Actor for Sink {}

/// Wiring: every worker.
struct NeighborsMsg(Neighbors);
/// "Answer me": the pinger's id.
struct Ping(i32);
/// The answer: the answering worker's id.
struct Pong(i32);
/// Worker to sink: my pings are done. Sink to worker: exit.
struct Exit;
tell_only!(NeighborsMsg, Ping, Pong, Exit);

impl Handler<NeighborsMsg> for Worker {
    fn handle(&mut self, NeighborsMsg(all): NeighborsMsg, _: &mut Context<Self>) {
        self.neighbors = Some(all);
    }
}

impl Handler<Pong> for Worker {
    fn handle(&mut self, Pong(from): Pong, _: &mut Context<Self>) {
        if from != self.expected {
            // Savina prints an error; the driver counts them.
            self.mismatches += 1;
        }
        if self.pings_sent == self.n {
            let _ = self.sink.tell(Exit);
            return;
        }
        let Some(neighbors) = &self.neighbors else {
            self.mismatches += 1;
            return;
        };
        let target = self.rng.next_int_bounded(neighbors.len() as i32);
        self.expected = target;
        let _ = neighbors[target as usize].tell(Ping(self.id));
        self.pings_sent += 1;
    }
}

impl Handler<Ping> for Worker {
    fn handle(&mut self, Ping(from): Ping, _: &mut Context<Self>) {
        self.pings_answered += 1;
        if let Some(neighbors) = &self.neighbors {
            let _ = neighbors[from as usize].tell(Pong(self.id));
        }
    }
}

impl Handler<Exit> for Worker {
    fn handle(&mut self, _: Exit, cx: &mut Context<Self>) {
        let _ = self.done.send(WorkerReport {
            pings_sent: self.pings_sent,
            pings_answered: self.pings_answered,
            mismatches: self.mismatches,
        });
        cx.stop();
    }
}

impl Handler<NeighborsMsg> for Sink {
    fn handle(&mut self, NeighborsMsg(all): NeighborsMsg, _: &mut Context<Self>) {
        self.neighbors = Some(all);
    }
}

impl Handler<Exit> for Sink {
    fn handle(&mut self, _: Exit, cx: &mut Context<Self>) {
        self.exits += 1;
        if self.exits == self.workers {
            for worker in self.neighbors.iter().flat_map(|n| n.iter()) {
                let _ = worker.tell(Exit);
            }
            let _ = self.done.send(self.exits);
            cx.stop();
        }
    }
}

/// One timed iteration with Savina's `-n` (pings per worker) and `-w` (workers).
pub(crate) fn run(params: &Params) -> Outcome {
    let n: u64 = params.get("n");
    let w: usize = params.get("w");
    Outcome::timed(|| {
        if w == 0 || w > i32::MAX as usize {
            return Err("Big needs -w ≥ 1".to_owned());
        }
        let system = common::system(params);
        let (sink_tx, sink_rx) = mpsc::channel();
        let (tx, rx) = mpsc::channel();
        let sink = system.spawn(Sink {
            workers: w,
            exits: 0,
            neighbors: None,
            done: sink_tx,
        });
        let workers: Vec<ActorRef<Worker>> = (0..w)
            .map(|id| {
                system.spawn(Worker {
                    id: id as i32,
                    n,
                    rng: PseudoRandom::new(id as i64),
                    neighbors: None,
                    sink: sink.clone(),
                    expected: -1,
                    pings_sent: 0,
                    pings_answered: 0,
                    mismatches: 0,
                    done: tx.clone(),
                })
            })
            .collect();
        drop(tx);
        let neighbors: Neighbors = workers.clone().into();
        let refused = || "an actor refused a message";
        sink.tell(NeighborsMsg(neighbors.clone()))
            .map_err(|_| refused())?;
        for worker in &workers {
            worker
                .tell(NeighborsMsg(neighbors.clone()))
                .map_err(|_| refused())?;
        }
        drop(neighbors);
        for worker in &workers {
            worker.tell(Pong(-1)).map_err(|_| refused())?;
        }
        let exits = recv_n(&sink_rx, 1)?.pop().ok_or("no sink result")?;
        let reports = recv_n(&rx, w)?;
        settle(system)?;
        drop((sink, workers));
        let total = n * w as u64;
        all(vec![
            expect_eq(
                "pings sent",
                reports.iter().map(|r| r.pings_sent).sum::<u64>(),
                total,
            ),
            expect_eq(
                "pings answered",
                reports.iter().map(|r| r.pings_answered).sum::<u64>(),
                total,
            ),
            expect_eq(
                "expected-pinger errors",
                reports.iter().map(|r| r.mismatches).sum::<u64>(),
                0,
            ),
            expect_eq("exits at the sink", exits, w),
        ])
    })
}
