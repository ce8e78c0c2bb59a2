//! Big (Savina #8, `shared/savina.md` §3.8): W workers ping random workers (possibly
//! themselves) N times each, all at once; a sink gathers their exits.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use kameo::actor::ActorRef;
use kameo::message::{Context, Message};
use savina::protocol::expect_eq;
use savina::rng::PseudoRandom;
use savina::{Outcome, Params};
use tokio::sync::oneshot;

use crate::common::{self, Exit, plain_actor, tell};

type Neighbors = Arc<Vec<ActorRef<Worker>>>;

struct Worker {
    id: i64,
    n: u64,
    pings: u64,
    /// The worker this one last pinged (−1 before the first ping).
    expected: i64,
    rng: PseudoRandom,
    neighbors: Option<Neighbors>,
    sink: ActorRef<Sink>,
    totals: Arc<Totals>,
    _exit: Exit,
}

struct Sink {
    exits: u64,
    workers: u64,
    neighbors: Option<Neighbors>,
    done: Option<oneshot::Sender<u64>>,
    _exit: Exit,
}

#[derive(Default)]
struct Totals {
    pings: AtomicU64,
    mismatches: AtomicU64,
}

plain_actor!(Worker, Sink);

enum WorkerMsg {
    Neighbors(Neighbors),
    Ping(i64),
    Pong(i64),
    Exit,
}

enum SinkMsg {
    Neighbors(Neighbors),
    Exit,
}

impl Message<WorkerMsg> for Worker {
    type Reply = ();

    async fn handle(&mut self, msg: WorkerMsg, ctx: &mut Context<Self, ()>) {
        match msg {
            WorkerMsg::Neighbors(all) => self.neighbors = Some(all),
            WorkerMsg::Pong(sender) => {
                if sender != self.expected {
                    self.totals.mismatches.fetch_add(1, Ordering::Relaxed);
                }
                if self.pings == self.n {
                    tell(&self.sink, SinkMsg::Exit);
                } else if let Some(all) = &self.neighbors {
                    let target = self.rng.next_int_bounded(all.len() as i32);
                    self.expected = i64::from(target);
                    tell(&all[target as usize], WorkerMsg::Ping(self.id));
                    self.pings += 1;
                }
            }
            WorkerMsg::Ping(sender) => {
                if let Some(all) = &self.neighbors {
                    tell(&all[sender as usize], WorkerMsg::Pong(self.id));
                }
            }
            WorkerMsg::Exit => {
                self.totals.pings.fetch_add(self.pings, Ordering::Relaxed);
                self.neighbors = None;
                ctx.stop();
            }
        }
    }
}

impl Message<SinkMsg> for Sink {
    type Reply = ();

    async fn handle(&mut self, msg: SinkMsg, ctx: &mut Context<Self, ()>) {
        match msg {
            SinkMsg::Neighbors(all) => self.neighbors = Some(all),
            SinkMsg::Exit => {
                self.exits += 1;
                if self.exits == self.workers {
                    if let Some(all) = self.neighbors.take() {
                        for worker in all.iter() {
                            tell(worker, WorkerMsg::Exit);
                        }
                    }
                    if let Some(done) = self.done.take() {
                        let _ = done.send(self.exits);
                    }
                    ctx.stop();
                }
            }
        }
    }
}

pub fn run(params: &Params) -> Outcome {
    let n: u64 = params.get("n");
    let w: u64 = params.get("w");
    common::run(params, |latch| async move {
        if w == 0 || w > i32::MAX as u64 {
            return Err("-w must be in 1..=i32::MAX".to_owned());
        }
        let (done, result) = oneshot::channel();
        let totals = Arc::new(Totals::default());
        let sink = common::spawn(Sink {
            exits: 0,
            workers: w,
            neighbors: None,
            done: Some(done),
            _exit: latch.enter(),
        });
        let workers: Neighbors = Arc::new(
            (0..w as i64)
                .map(|id| {
                    common::spawn(Worker {
                        id,
                        n,
                        pings: 0,
                        expected: -1,
                        rng: PseudoRandom::new(id),
                        neighbors: None,
                        sink: sink.clone(),
                        totals: Arc::clone(&totals),
                        _exit: latch.enter(),
                    })
                })
                .collect(),
        );
        tell(&sink, SinkMsg::Neighbors(Arc::clone(&workers)));
        for worker in workers.iter() {
            tell(worker, WorkerMsg::Neighbors(Arc::clone(&workers)));
        }
        for worker in workers.iter() {
            tell(worker, WorkerMsg::Pong(-1));
        }
        drop((sink, workers));
        let exits = common::report(result).await?;
        latch.wait().await;
        expect_eq(
            "sink exits, pings, expected-pinger mismatches",
            (
                exits,
                totals.pings.load(Ordering::Relaxed),
                totals.mismatches.load(Ordering::Relaxed),
            ),
            (w, w * n, 0),
        )
    })
}
