//! Big (Savina #8, `shared/savina.md` §3.8): W workers ping random workers (possibly
//! themselves) N times each, all at once; a sink gathers their exits.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use ractor::{Actor, ActorProcessingErr, ActorRef};
use savina::protocol::expect_eq;
use savina::rng::PseudoRandom;
use savina::{Outcome, Params};
use tokio::sync::oneshot;

use crate::common::{self, Exit, state_from_args, tell};

type Neighbors = Arc<Vec<ActorRef<WorkerMsg>>>;

struct WorkerActor;
struct SinkActor;

struct Worker {
    id: i64,
    n: u64,
    pings: u64,
    /// The worker this one last pinged (−1 before the first ping).
    expected: i64,
    rng: PseudoRandom,
    neighbors: Option<Neighbors>,
    sink: ActorRef<SinkMsg>,
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

impl Actor for WorkerActor {
    type Msg = WorkerMsg;
    type State = Worker;
    type Arguments = Worker;

    state_from_args!();

    async fn handle(
        &self,
        myself: ActorRef<WorkerMsg>,
        msg: WorkerMsg,
        st: &mut Worker,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            WorkerMsg::Neighbors(all) => st.neighbors = Some(all),
            WorkerMsg::Pong(sender) => {
                if sender != st.expected {
                    st.totals.mismatches.fetch_add(1, Ordering::Relaxed);
                }
                if st.pings == st.n {
                    tell(&st.sink, SinkMsg::Exit);
                } else if let Some(all) = &st.neighbors {
                    let target = st.rng.next_int_bounded(all.len() as i32);
                    st.expected = i64::from(target);
                    tell(&all[target as usize], WorkerMsg::Ping(st.id));
                    st.pings += 1;
                }
            }
            WorkerMsg::Ping(sender) => {
                if let Some(all) = &st.neighbors {
                    tell(&all[sender as usize], WorkerMsg::Pong(st.id));
                }
            }
            WorkerMsg::Exit => {
                st.totals.pings.fetch_add(st.pings, Ordering::Relaxed);
                st.neighbors = None;
                myself.stop(None);
            }
        }
        Ok(())
    }
}

impl Actor for SinkActor {
    type Msg = SinkMsg;
    type State = Sink;
    type Arguments = Sink;

    state_from_args!();

    async fn handle(
        &self,
        myself: ActorRef<SinkMsg>,
        msg: SinkMsg,
        st: &mut Sink,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            SinkMsg::Neighbors(all) => st.neighbors = Some(all),
            SinkMsg::Exit => {
                st.exits += 1;
                if st.exits == st.workers {
                    if let Some(all) = st.neighbors.take() {
                        for worker in all.iter() {
                            tell(worker, WorkerMsg::Exit);
                        }
                    }
                    if let Some(done) = st.done.take() {
                        let _ = done.send(st.exits);
                    }
                    myself.stop(None);
                }
            }
        }
        Ok(())
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
        let sink = Sink {
            exits: 0,
            workers: w,
            neighbors: None,
            done: Some(done),
            _exit: latch.enter(),
        };
        let sink = common::spawn(SinkActor, sink).await;
        let mut workers = Vec::new();
        for id in 0..w as i64 {
            let worker = Worker {
                id,
                n,
                pings: 0,
                expected: -1,
                rng: PseudoRandom::new(id),
                neighbors: None,
                sink: sink.clone(),
                totals: Arc::clone(&totals),
                _exit: latch.enter(),
            };
            workers.push(common::spawn(WorkerActor, worker).await);
        }
        let workers: Neighbors = Arc::new(workers);
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
