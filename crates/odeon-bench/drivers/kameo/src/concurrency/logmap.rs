//! Logistic Map Series (Savina #15, `shared/savina.md` §3.15): S series workers each
//! compute T terms of x ← r·x·(1−x) through a rate-computer actor, one request at a
//! time, then report their last term to the master.
//!
//! A worker waiting for its computer's reply must hold back every other message
//! (Savina stashes them). In kameo that is `ask` awaited inside the handler: the actor
//! handles nothing else until the reply arrives, so later `NextTerm`s and the
//! `GetTerm` wait in the mailbox in order, which is exactly the stash's effect.

use kameo::actor::ActorRef;
use kameo::error::Infallible;
use kameo::message::{Context, Message};
use savina::{Outcome, Params};
use tokio::sync::oneshot;

use crate::common::{self, Exit, plain_actor, tell};

const INCREMENT: f64 = 0.0025;

/// Savina's sum of final terms at the defaults.
const EXPECTED_DEFAULT: f64 = 6.38783514460412;

struct Master {
    terms: u64,
    series: u64,
    start_rate: f64,
    computers: Vec<ActorRef<Computer>>,
    workers: Vec<ActorRef<Worker>>,
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
    computer: ActorRef<Computer>,
    /// Set when a computer request failed (the computer had exited): the result is
    /// then wrong and must be reported so.
    failed: bool,
    _exit: Exit,
}

plain_actor!(Computer, Worker);

enum MasterMsg {
    Start,
    Result(f64),
}

enum WorkerMsg {
    NextTerm,
    GetTerm(ActorRef<Master>),
    Stop,
}

/// Compute(term): the reply is the next term.
struct Compute(f64);

struct Stop;

impl kameo::Actor for Master {
    type Args = Self;
    type Error = Infallible;

    /// The Master creates the computers and workers when it starts, as in Savina.
    async fn on_start(mut master: Self, _: ActorRef<Self>) -> Result<Self, Infallible> {
        for i in 0..master.series {
            let computer = common::spawn(Computer {
                rate: master.start_rate + i as f64 * INCREMENT,
                _exit: master.exit.enter(),
            });
            master.workers.push(common::spawn(Worker {
                term: i as f64 * INCREMENT,
                computer: computer.clone(),
                failed: false,
                _exit: master.exit.enter(),
            }));
            master.computers.push(computer);
        }
        Ok(master)
    }
}

impl Message<MasterMsg> for Master {
    type Reply = ();

    async fn handle(&mut self, msg: MasterMsg, ctx: &mut Context<Self, ()>) {
        match msg {
            MasterMsg::Start => {
                for _ in 0..self.terms {
                    for worker in &self.workers {
                        tell(worker, WorkerMsg::NextTerm);
                    }
                }
                for worker in &self.workers {
                    tell(worker, WorkerMsg::GetTerm(ctx.actor_ref().clone()));
                    self.requested += 1;
                }
            }
            MasterMsg::Result(term) => {
                self.sum += term;
                self.received += 1;
                if self.received == self.requested {
                    if let Some(done) = self.done.take() {
                        let _ = done.send(self.sum);
                    }
                    for computer in self.computers.drain(..) {
                        tell(&computer, Stop);
                    }
                    for worker in self.workers.drain(..) {
                        tell(&worker, WorkerMsg::Stop);
                    }
                    ctx.stop();
                }
            }
        }
    }
}

impl Message<Compute> for Computer {
    type Reply = f64;

    async fn handle(&mut self, Compute(term): Compute, _: &mut Context<Self, f64>) -> f64 {
        self.rate * term * (1.0 - term)
    }
}

impl Message<Stop> for Computer {
    type Reply = ();

    async fn handle(&mut self, _: Stop, ctx: &mut Context<Self, ()>) {
        ctx.stop();
    }
}

impl Message<WorkerMsg> for Worker {
    type Reply = ();

    async fn handle(&mut self, msg: WorkerMsg, ctx: &mut Context<Self, ()>) {
        match msg {
            WorkerMsg::NextTerm => match self.computer.ask(Compute(self.term)).await {
                Ok(next) => self.term = next,
                Err(_) => self.failed = true,
            },
            WorkerMsg::GetTerm(master) => {
                let term = if self.failed { f64::NAN } else { self.term };
                tell(&master, MasterMsg::Result(term));
            }
            WorkerMsg::Stop => ctx.stop(),
        }
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
        let master = common::spawn(Master {
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
        });
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
