//! Logistic Map Series (Savina #15, `shared/savina.md` §3.15): each series worker asks
//! its rate computer for every next term and stashes what arrives while it waits.
//!
//! actix has no stash; the worker keeps one itself (Savina's *ManualStash* variant),
//! replaying it in arrival order once the reply is in, as Akka's `unstashAll` would.

use std::collections::VecDeque;

use actix::{Actor, ActorContext, Addr, AsyncContext, Context, Handler, Message};
use savina::{Outcome, Params};

use crate::common::{Live, Rt, Slot, Variant, run_system};

/// Savina's `increment` (no flag).
const INCREMENT: f64 = 0.0025;

#[derive(Message)]
#[rtype(result = "()")]
struct Start;

#[derive(Message)]
#[rtype(result = "()")]
struct NextTerm;

#[derive(Message)]
#[rtype(result = "()")]
struct GetTerm;

#[derive(Message)]
#[rtype(result = "()")]
struct Compute {
    sender: Addr<SeriesWorker>,
    term: f64,
}

/// From a computer to its worker, and from a worker to the Master.
#[derive(Message)]
#[rtype(result = "()")]
struct TermResult(f64);

#[derive(Message)]
#[rtype(result = "()")]
struct Stop;

/// One step of the map, in Savina's operand order (no fused multiply-add in Rust).
fn next_term(rate: f64, term: f64) -> f64 {
    rate * term * (1.0 - term)
}

struct Master {
    me: Addr<Master>,
    rt: Rt,
    terms: u64,
    series: u64,
    start_rate: f64,
    workers: Vec<Addr<SeriesWorker>>,
    computers: Vec<Addr<RateComputer>>,
    requested: u64,
    received: u64,
    sum: f64,
    report: Slot<f64>,
    _live: Live,
}

impl Actor for Master {
    type Context = Context<Self>;

    /// The Master creates the computers and the workers when it starts.
    fn started(&mut self, _: &mut Context<Self>) {
        for i in 0..self.series {
            let rate = self.start_rate + i as f64 * INCREMENT;
            let computer = self
                .rt
                .spawn(move |_, live| RateComputer { rate, _live: live });
            let (master, computer_addr) = (self.me.clone(), computer.clone());
            let worker = self.rt.spawn(move |ctx, live| SeriesWorker {
                me: ctx.address(),
                master,
                computer: computer_addr,
                term: i as f64 * INCREMENT,
                waiting: false,
                stash: VecDeque::new(),
                _live: live,
            });
            self.computers.push(computer);
            self.workers.push(worker);
        }
    }
}

impl Handler<Start> for Master {
    type Result = ();
    fn handle(&mut self, _: Start, _: &mut Context<Self>) {
        for _ in 0..self.terms {
            for worker in &self.workers {
                worker.do_send(NextTerm);
            }
        }
        for worker in &self.workers {
            worker.do_send(GetTerm);
            self.requested += 1;
        }
    }
}

impl Handler<TermResult> for Master {
    type Result = ();
    fn handle(&mut self, TermResult(term): TermResult, ctx: &mut Context<Self>) {
        self.sum += term;
        self.received += 1;
        if self.received == self.requested {
            self.report.put(self.sum);
            for computer in &self.computers {
                computer.do_send(Stop);
            }
            for worker in &self.workers {
                worker.do_send(Stop);
            }
            ctx.stop();
        }
    }
}

struct RateComputer {
    rate: f64,
    _live: Live,
}

impl Actor for RateComputer {
    type Context = Context<Self>;
}

impl Handler<Compute> for RateComputer {
    type Result = ();
    fn handle(&mut self, Compute { sender, term }: Compute, _: &mut Context<Self>) {
        sender.do_send(TermResult(next_term(self.rate, term)));
    }
}

impl Handler<Stop> for RateComputer {
    type Result = ();
    fn handle(&mut self, _: Stop, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}

/// A request the worker could not serve while waiting for its computer.
enum Stashed {
    NextTerm,
    GetTerm,
}

struct SeriesWorker {
    me: Addr<SeriesWorker>,
    master: Addr<Master>,
    computer: Addr<RateComputer>,
    term: f64,
    /// Waiting for the computer's reply: everything but that reply is stashed.
    waiting: bool,
    /// Never empty but while `waiting` (it is drained as soon as the reply arrives).
    stash: VecDeque<Stashed>,
    _live: Live,
}

impl Actor for SeriesWorker {
    type Context = Context<Self>;
}

impl SeriesWorker {
    fn serve(&mut self, request: Stashed) {
        match request {
            Stashed::NextTerm => {
                self.computer.do_send(Compute {
                    sender: self.me.clone(),
                    term: self.term,
                });
                self.waiting = true;
            }
            Stashed::GetTerm => self.master.do_send(TermResult(self.term)),
        }
    }

    fn receive(&mut self, request: Stashed) {
        if self.waiting {
            self.stash.push_back(request);
        } else {
            self.serve(request);
        }
    }
}

impl Handler<NextTerm> for SeriesWorker {
    type Result = ();
    fn handle(&mut self, _: NextTerm, _: &mut Context<Self>) {
        self.receive(Stashed::NextTerm);
    }
}

impl Handler<GetTerm> for SeriesWorker {
    type Result = ();
    fn handle(&mut self, _: GetTerm, _: &mut Context<Self>) {
        self.receive(Stashed::GetTerm);
    }
}

impl Handler<TermResult> for SeriesWorker {
    type Result = ();
    fn handle(&mut self, TermResult(term): TermResult, _: &mut Context<Self>) {
        self.term = term;
        self.waiting = false;
        // Replay the stash in order until a request makes the worker wait again.
        while !self.waiting {
            match self.stash.pop_front() {
                Some(request) => self.serve(request),
                None => break,
            }
        }
    }
}

impl Handler<Stop> for SeriesWorker {
    type Result = ();
    fn handle(&mut self, _: Stop, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}

/// The series computed sequentially, summed in series order.
fn reference(terms: u64, series: u64, start_rate: f64) -> f64 {
    (0..series)
        .map(|i| {
            let rate = start_rate + i as f64 * INCREMENT;
            (0..terms).fold(i as f64 * INCREMENT, |x, _| next_term(rate, x))
        })
        .sum()
}

pub(crate) fn run(params: &Params, variant: Variant) -> Outcome {
    let terms: u64 = params.get("t");
    let series: u64 = params.get("s");
    let start_rate: f64 = params.get("r");
    if series == 0 {
        return Outcome::new(Default::default(), Err("-s must be >= 1".into()));
    }
    let result = Slot::new();
    let elapsed = run_system(variant, |rt: &Rt| {
        let (master_rt, report) = (rt.clone(), result.clone());
        let master = rt.spawn(move |ctx, live| Master {
            me: ctx.address(),
            rt: master_rt,
            terms,
            series,
            start_rate,
            workers: Vec::new(),
            computers: Vec::new(),
            requested: 0,
            received: 0,
            sum: 0.0,
            report,
            _live: live,
        });
        master.do_send(Start);
    });
    let expected = reference(terms, series, start_rate);
    let check = result.take("the Master").and_then(|sum| {
        // Results are summed in arrival order: allow for the last bits.
        if (sum - expected).abs() <= 1e-12 * expected.abs().max(1.0) {
            Ok(format!("term sum {sum} (sequential {expected})"))
        } else {
            Err(format!("term sum {sum}, expected {expected}"))
        }
    });
    Outcome::new(elapsed, check)
}

#[cfg(test)]
mod tests {
    #[test]
    fn defaults_match_the_spec() {
        let sum = super::reference(25000, 10, 3.46);
        assert!((sum - 6.38783514460412).abs() < 1e-12, "{sum}");
    }
}
