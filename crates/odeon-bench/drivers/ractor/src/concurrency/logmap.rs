//! Logistic Map Series (Savina #15, `shared/savina.md` §3.15): S series workers each
//! compute T terms of x ← r·x·(1−x) through a rate-computer actor, one request at a
//! time, then report their last term to the master.
//!
//! A worker waiting for its computer's reply must hold back every other message
//! (Savina stashes them). In ractor that is `call` awaited inside the handler: the
//! actor handles nothing else until the reply arrives, so later `NextTerm`s and the
//! `GetTerm` wait in the mailbox in order, which is exactly the stash's effect.

use ractor::rpc::CallResult;
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use savina::{Outcome, Params};
use tokio::sync::oneshot;

use crate::common::{self, Exit, state_from_args, tell};

const INCREMENT: f64 = 0.0025;

/// Savina's sum of final terms at the defaults.
const EXPECTED_DEFAULT: f64 = 6.38783514460412;

struct MasterActor;
struct ComputerActor;
struct WorkerActor;

struct Master {
    terms: u64,
    series: u64,
    start_rate: f64,
    computers: Vec<ActorRef<ComputerMsg>>,
    workers: Vec<ActorRef<WorkerMsg>>,
    requested: u64,
    received: u64,
    sum: f64,
    done: Option<oneshot::Sender<f64>>,
    exit: Exit,
}

struct Computer {
    rate: f64,
    _exit: Exit,
}

struct Worker {
    term: f64,
    computer: ActorRef<ComputerMsg>,
    /// Set when a computer request failed (the computer had exited): the result is
    /// then wrong and must be reported so.
    failed: bool,
    _exit: Exit,
}

enum MasterMsg {
    Start,
    Result(f64),
}

enum ComputerMsg {
    /// Compute(term): the reply is the next term.
    Compute(f64, RpcReplyPort<f64>),
    Stop,
}

enum WorkerMsg {
    NextTerm,
    GetTerm(ActorRef<MasterMsg>),
    Stop,
}

impl Actor for MasterActor {
    type Msg = MasterMsg;
    type State = Master;
    type Arguments = Master;

    /// The Master creates the computers and workers when it starts, as in Savina.
    async fn pre_start(
        &self,
        _: ActorRef<MasterMsg>,
        mut master: Master,
    ) -> Result<Master, ActorProcessingErr> {
        for i in 0..master.series {
            let computer = Computer {
                rate: master.start_rate + i as f64 * INCREMENT,
                _exit: master.exit.enter(),
            };
            let computer = common::spawn(ComputerActor, computer).await;
            let worker = Worker {
                term: i as f64 * INCREMENT,
                computer: computer.clone(),
                failed: false,
                _exit: master.exit.enter(),
            };
            master
                .workers
                .push(common::spawn(WorkerActor, worker).await);
            master.computers.push(computer);
        }
        Ok(master)
    }

    async fn handle(
        &self,
        myself: ActorRef<MasterMsg>,
        msg: MasterMsg,
        st: &mut Master,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            MasterMsg::Start => {
                for _ in 0..st.terms {
                    for worker in &st.workers {
                        tell(worker, WorkerMsg::NextTerm);
                    }
                }
                for worker in &st.workers {
                    tell(worker, WorkerMsg::GetTerm(myself.clone()));
                    st.requested += 1;
                }
            }
            MasterMsg::Result(term) => {
                st.sum += term;
                st.received += 1;
                if st.received == st.requested {
                    if let Some(done) = st.done.take() {
                        let _ = done.send(st.sum);
                    }
                    for computer in st.computers.drain(..) {
                        tell(&computer, ComputerMsg::Stop);
                    }
                    for worker in st.workers.drain(..) {
                        tell(&worker, WorkerMsg::Stop);
                    }
                    myself.stop(None);
                }
            }
        }
        Ok(())
    }
}

impl Actor for ComputerActor {
    type Msg = ComputerMsg;
    type State = Computer;
    type Arguments = Computer;

    state_from_args!();

    async fn handle(
        &self,
        myself: ActorRef<ComputerMsg>,
        msg: ComputerMsg,
        st: &mut Computer,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            ComputerMsg::Compute(term, reply) => {
                let _ = reply.send(st.rate * term * (1.0 - term));
            }
            ComputerMsg::Stop => myself.stop(None),
        }
        Ok(())
    }
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
            WorkerMsg::NextTerm => {
                let term = st.term;
                match st
                    .computer
                    .call(|reply| ComputerMsg::Compute(term, reply), None)
                    .await
                {
                    Ok(CallResult::Success(next)) => st.term = next,
                    _ => st.failed = true,
                }
            }
            WorkerMsg::GetTerm(master) => {
                let term = if st.failed { f64::NAN } else { st.term };
                tell(&master, MasterMsg::Result(term));
            }
            WorkerMsg::Stop => myself.stop(None),
        }
        Ok(())
    }
}

/// The sequential reference: each series on its own, the final terms summed in order.
fn expected(terms: u64, series: u64, start_rate: f64) -> f64 {
    (0..series)
        .map(|i| {
            let rate = start_rate + i as f64 * INCREMENT;
            let mut x = i as f64 * INCREMENT;
            for _ in 0..terms {
                x = rate * x * (1.0 - x);
            }
            x
        })
        .sum()
}

pub fn run(params: &Params) -> Outcome {
    let terms: u64 = params.get("t");
    let series: u64 = params.get("s");
    let start_rate: f64 = params.get("r");
    let defaults = (terms, series, start_rate) == (25000, 10, 3.46);
    let want = if defaults {
        EXPECTED_DEFAULT
    } else {
        expected(terms, series, start_rate)
    };
    common::run(params, |latch| async move {
        if series == 0 {
            return Err("-s must be at least 1".to_owned());
        }
        let (done, result) = oneshot::channel();
        let master = Master {
            terms,
            series,
            start_rate,
            computers: Vec::new(),
            workers: Vec::new(),
            requested: 0,
            received: 0,
            sum: 0.0,
            done: Some(done),
            exit: latch.enter(),
        };
        let master = common::spawn(MasterActor, master).await;
        tell(&master, MasterMsg::Start);
        drop(master);
        let sum = common::report(result).await?;
        // The master adds the results in arrival order: the last bits may differ.
        if (sum - want).abs() <= 1e-12 * want.abs().max(1.0) {
            Ok(format!("term sum = {sum} (expected {want})"))
        } else {
            Err(format!("term sum: got {sum}, expected {want}"))
        }
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn reference_matches_savina() {
        let sum = super::expected(25000, 10, 3.46);
        assert!((sum - super::EXPECTED_DEFAULT).abs() < 1e-12, "{sum}");
    }
}
