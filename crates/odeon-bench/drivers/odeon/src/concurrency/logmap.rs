//! Logistic Map Series (Savina #15, `shared/savina.md` §3.15): each series worker asks
//! its rate computer for every next term, one request at a time.
//!
//! The reference stashes every message that arrives while a worker waits for its
//! computer's reply (become/stash). In odeon the worker's `NextTerm` handler is an
//! [`AsyncHandler`] that awaits an `ask`: while it waits, the actor handles nothing
//! else (its later messages stay queued, in order) and no thread is held. A `GetTerm`
//! is therefore answered only after every earlier `NextTerm`, as the protocol needs.

use std::sync::mpsc;

use odeon::{Actor, ActorRef, AsyncHandler, Context, Handler, Message};
use savina::{Outcome, Params};

use super::{ASK_PATIENCE, Exit, Latch, outcome, timed};

/// Savina's `increment`: the step between series (no flag).
const INCREMENT: f64 = 0.0025;

/// The recurrence, in the reference's operation order (no fused multiply-add).
fn next_term(term: f64, rate: f64) -> f64 {
    rate * term * (1.0 - term)
}

struct Master {
    terms: u32,
    series: u32,
    start_rate: f64,
    workers: Vec<ActorRef<SeriesWorker>>,
    computers: Vec<ActorRef<RateComputer>>,
    report: mpsc::Sender<Result<f64, String>>,
    exit: Exit,
}

struct RateComputer {
    rate: f64,
    _exit: Exit,
}

struct SeriesWorker {
    computer: ActorRef<RateComputer>,
    term: f64,
    _exit: Exit,
}

impl Actor for Master {
    fn started(&mut self, cx: &mut Context<Self>) {
        let system = cx.system();
        for i in 0..self.series {
            let computer = system.spawn(RateComputer {
                rate: self.start_rate + f64::from(i) * INCREMENT,
                _exit: self.exit.enter(),
            });
            self.workers.push(system.spawn(SeriesWorker {
                computer: computer.clone(),
                term: f64::from(i) * INCREMENT,
                _exit: self.exit.enter(),
            }));
            self.computers.push(computer);
        }
    }
}
impl Actor for RateComputer {}
impl Actor for SeriesWorker {}

struct Start;
impl Message for Start {
    type Reply = ();
}

struct NextTerm;
impl Message for NextTerm {
    type Reply = ();
}

/// The worker's current term, as its reply.
struct GetTerm;
impl Message for GetTerm {
    type Reply = f64;
}

/// The next term after `0`, as the computer's reply.
struct Compute(f64);
impl Message for Compute {
    type Reply = f64;
}

struct Stop;
impl Message for Stop {
    type Reply = ();
}

impl AsyncHandler<Start> for Master {
    /// Queues every `NextTerm`, then asks every worker for its final term and adds the
    /// replies in series order.
    async fn handle(&mut self, _: Start, cx: &mut Context<Self>) {
        for _ in 0..self.terms {
            for worker in &self.workers {
                let _ = worker.tell(NextTerm);
            }
        }
        let asks: Vec<_> = self
            .workers
            .iter()
            .map(|worker| worker.ask(GetTerm).timeout(ASK_PATIENCE))
            .collect();
        let mut sum = Ok(0.0);
        for (i, ask) in asks.into_iter().enumerate() {
            match (ask.await, &mut sum) {
                (Ok(term), Ok(total)) => *total += term,
                (Err(e), Ok(_)) => sum = Err(format!("series {i}: {e}")),
                (_, Err(_)) => {}
            }
        }
        for worker in &self.workers {
            let _ = worker.tell(Stop);
        }
        for computer in &self.computers {
            let _ = computer.tell(Stop);
        }
        let _ = self.report.send(sum);
        cx.stop();
    }
}

impl AsyncHandler<NextTerm> for SeriesWorker {
    async fn handle(&mut self, _: NextTerm, cx: &mut Context<Self>) {
        match self
            .computer
            .ask(Compute(self.term))
            .timeout(ASK_PATIENCE)
            .await
        {
            Ok(term) => self.term = term,
            // A lost reply leaves a NaN, which fails the check instead of passing as a
            // stale term.
            Err(_) => {
                self.term = f64::NAN;
                cx.stop();
            }
        }
    }
}

impl Handler<GetTerm> for SeriesWorker {
    fn handle(&mut self, _: GetTerm, _: &mut Context<Self>) -> f64 {
        self.term
    }
}

impl Handler<Stop> for SeriesWorker {
    fn handle(&mut self, _: Stop, cx: &mut Context<Self>) {
        cx.stop();
    }
}

impl Handler<Compute> for RateComputer {
    fn handle(&mut self, msg: Compute, _: &mut Context<Self>) -> f64 {
        next_term(msg.0, self.rate)
    }
}

impl Handler<Stop> for RateComputer {
    fn handle(&mut self, _: Stop, cx: &mut Context<Self>) {
        cx.stop();
    }
}

/// The series computed sequentially and summed in the same order as the master.
fn reference(terms: u32, series: u32, start_rate: f64) -> f64 {
    (0..series)
        .map(|i| {
            let rate = start_rate + f64::from(i) * INCREMENT;
            (0..terms).fold(f64::from(i) * INCREMENT, |x, _| next_term(x, rate))
        })
        .sum()
}

pub(crate) fn run(params: &Params) -> Outcome {
    let terms: u32 = params.get("t");
    let series: u32 = params.get("s");
    let start_rate: f64 = params.get("r");
    let expected = reference(terms, series, start_rate);
    let (tx, rx) = mpsc::channel();
    let elapsed = timed(params, |system, latch: &Latch| {
        let master = system.spawn(Master {
            terms,
            series,
            start_rate,
            workers: Vec::new(),
            computers: Vec::new(),
            report: tx,
            exit: latch.enter(),
        });
        let _ = master.tell(Start);
    });
    outcome(elapsed, || {
        let sum = rx.try_recv().map_err(|_| "the master sent no sum")??;
        if super::is_default(params) && (sum - 6.387_835_144_604_12).abs() > 1e-12 {
            return Err(format!("term sum {sum}, savina.md says 6.38783514460412"));
        }
        if sum.to_bits() != expected.to_bits() {
            return Err(format!("term sum {sum}, sequential reference {expected}"));
        }
        Ok(format!("term sum {sum}"))
    })
}

#[cfg(test)]
mod tests {
    /// `shared/savina.md` §3.15: 6.38783514460412 with the defaults, and the Pony
    /// port's 6.964599481489831 with rate 3.64.
    #[test]
    fn the_sequential_sums_match_savina() {
        assert!((super::reference(25_000, 10, 3.46) - 6.387_835_144_604_12).abs() < 1e-12);
        assert!((super::reference(25_000, 10, 3.64) - 6.964_599_481_489_831).abs() < 1e-12);
    }
}
