//! Radix Sort (Savina #22, `shared/savina.md` §3.22): a pipeline of one actor per bit,
//! least significant first. Each stage forwards a value whose bit is clear at once and
//! holds back the others until it has seen all N values, then releases them in arrival
//! order: a stable partition per bit, hence an LSD radix sort. About N × 60 messages.
//!
//! There is no end-of-stream message: every stage counts to N.

use std::sync::mpsc::{self, Sender};
use std::time::Instant;

use odeon::{Actor, ActorRef, Context, Handler, Message, Recipient};
use savina::rng::PseudoRandom;
use savina::{Outcome, Params};

use super::finish::finish;
use crate::common;

/// One value down the pipeline.
struct Value(i64);
impl Message for Value {
    type Reply = ();
}

/// Tells the source where to send, which starts it.
struct NextActor(Recipient<Value>);
impl Message for NextActor {
    type Reply = ();
}

/// Sends N values `|nextLong()| mod M`, then exits.
struct Source {
    n: usize,
    max: i64,
    seed: i64,
}

impl Actor for Source {}

impl Handler<NextActor> for Source {
    fn handle(&mut self, NextActor(next): NextActor, cx: &mut Context<Self>) {
        let mut rng = PseudoRandom::new(self.seed);
        for _ in 0..self.n {
            let _ = next.tell(Value(rng.next_long().abs() % self.max));
        }
        cx.stop();
    }
}

/// The stage of one bit.
struct Sorter {
    n: usize,
    bit: i64,
    next: Recipient<Value>,
    seen: usize,
    held: Vec<i64>,
}

impl Actor for Sorter {}

impl Handler<Value> for Sorter {
    fn handle(&mut self, Value(v): Value, cx: &mut Context<Self>) {
        self.seen += 1;
        if v & self.bit == 0 {
            let _ = self.next.tell(Value(v));
        } else {
            self.held.push(v);
        }
        if self.seen == self.n {
            for v in self.held.drain(..) {
                let _ = self.next.tell(Value(v));
            }
            cx.stop();
        }
    }
}

/// What the validator reports: count, sum (as Savina, a double) and the first value
/// found out of order, if any.
struct Report {
    sum: f64,
    sum_exact: i128,
    out_of_order: Option<(usize, i64)>,
}

/// Checks the order of the values and adds them up.
struct Validator {
    n: usize,
    seen: usize,
    last: i64,
    report: Report,
    tx: Sender<Report>,
}

impl Actor for Validator {}

impl Handler<Value> for Validator {
    fn handle(&mut self, Value(v): Value, cx: &mut Context<Self>) {
        if v < self.last && self.report.out_of_order.is_none() {
            self.report.out_of_order = Some((self.seen, v));
        }
        self.last = v;
        self.report.sum += v as f64;
        self.report.sum_exact += i128::from(v);
        self.seen += 1;
        if self.seen == self.n {
            let report = std::mem::replace(
                &mut self.report,
                Report {
                    sum: 0.0,
                    sum_exact: 0,
                    out_of_order: None,
                },
            );
            let _ = self.tx.send(report);
            cx.stop();
        }
    }
}

pub(crate) fn run(params: &Params) -> Outcome {
    let n: usize = params.get("n");
    let max: i64 = params.get("m");
    let seed: i64 = params.get("s");
    if n == 0 || max < 1 {
        let e = format!("need N >= 1 and M >= 1 (N={n}, M={max})");
        return Outcome::new(Default::default(), Err(e));
    }

    let start = Instant::now();
    let system = common::system(params);
    let (tx, rx) = mpsc::channel();
    let validator = system.spawn(Validator {
        n,
        seen: 0,
        last: i64::MIN,
        report: Report {
            sum: 0.0,
            sum_exact: 0,
            out_of_order: None,
        },
        tx,
    });
    // Built from the end: the stage of bit M/2 feeds the validator, bit 1 comes first.
    let mut next: Recipient<Value> = validator.recipient();
    let mut stages: Vec<ActorRef<Sorter>> = Vec::new();
    let mut bit = max / 2;
    while bit > 0 {
        let stage = system.spawn(Sorter {
            n,
            bit,
            next,
            seen: 0,
            held: Vec::new(),
        });
        next = stage.recipient();
        stages.push(stage);
        bit /= 2;
    }
    let source = system.spawn(Source { n, max, seed });
    let _ = source.tell(NextActor(next));
    let (elapsed, report) = finish(system, &rx, 1, start);
    drop((validator, stages, source));

    let check = report.and_then(|mut r| {
        let r = r.remove(0);
        if let Some((i, v)) = r.out_of_order {
            return Err(format!("value {v} out of order at index {i}"));
        }
        // Outside the timed region: the sum must be the input's.
        let mut rng = PseudoRandom::new(seed);
        let expected: i128 = (0..n)
            .map(|_| i128::from(rng.next_long().abs() % max))
            .sum();
        let defaults = (n, max, seed) == (100_000, 1 << 60, 2048);
        if r.sum_exact != expected {
            Err(format!(
                "sum {} ({}), expected {expected}",
                r.sum_exact, r.sum
            ))
        } else if defaults && r.sum != 3_275_789_328.0 {
            Err(format!("sum {}, expected 3275789328 (savina.md §5)", r.sum))
        } else {
            Ok(format!("{n} values sorted, sum {}", r.sum))
        }
    });
    Outcome::new(elapsed, check)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_run_validates() {
        let bench = savina::catalog::find("radixsort").expect("in the catalog");
        let outcome = run(&Params::for_bench(bench, true));
        assert!(outcome.check.is_ok(), "{:?}", outcome.check);
    }
}
