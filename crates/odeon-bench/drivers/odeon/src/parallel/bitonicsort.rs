//! Bitonic Sort (Savina #24, `shared/savina.md` §3.24): a streaming bitonic sorting
//! network made only of actors. Values flow from a source through N·(log N)(log N + 1)/2
//! compare-exchange steps, grouped into merge stages, to a validator.
//!
//! Savina's composite actors (kernel, merge stages, steps, bitonic partitions) are kept
//! as actors of their own that forward their input to the first actor inside them: that
//! is Savina's topology and actor count (241,984 for N = 4096, counted in the tests).
//! A composite builds its inside in its `started` hook, as an Akka actor does in its
//! constructor, so the network is built by the workers while the first values already
//! queue up. Every actor is spawned at the top level (not as a child) because a
//! composite exits as soon as it has forwarded `Exit`, while its inside still has values
//! to pass on: a child would be stopped with them.
//!
//! Each actor of the network keeps a reference to itself until it exits ([`KeepAlive`]).
//! Savina's actors live until they exit; odeon's local GC instead collects an actor with
//! no references left, and it can race with the last message sent through the last
//! reference (an upstream actor's `Exit` just before that actor exits and drops it):
//! the actor would be collected with `Exit` still queued.

use std::sync::mpsc::{self, Sender};
use std::time::Instant;

use odeon::{Actor, Context, Handler, Message, Recipient};
use savina::rng::PseudoRandom;
use savina::{Outcome, Params};

use super::exited::finish_exited;
use crate::common;
use elements::{
    CompareExchange, DataValueAdapter, Flow, Joiner, KeepAlive, Splitter, Tagged, ValueDataAdapter,
};

mod elements;

/// Starts the source.
struct Start;
impl Message for Start {
    type Reply = ();
}

/// Sends N values `|nextLong()| mod M` from `PseudoRandom(S)`, then `Exit`.
struct Source {
    n: usize,
    max: i64,
    seed: i64,
    next: Recipient<Flow>,
}
impl Actor for Source {}

impl Handler<Start> for Source {
    fn handle(&mut self, _: Start, cx: &mut Context<Self>) {
        let mut rng = PseudoRandom::new(self.seed);
        for _ in 0..self.n {
            let _ = self
                .next
                .tell(Flow::Value(rng.next_long().abs() % self.max));
        }
        let _ = self.next.tell(Flow::Exit);
        cx.stop();
    }
}

/// What a composite builds when it starts.
enum Plan {
    /// MergeStage(2) → MergeStage(4) → … → MergeStage(N/2) → LastMergeStage(N, UP).
    Kernel { n: usize },
    /// Steps with L = P, P/2, …, 2; the step with L = P/i has N/L partitions and
    /// direction counter i.
    MergeStage { n: usize, p: usize },
    /// Steps with L = N, N/2, …, 2, every partition sorting up.
    LastMergeStage { n: usize },
    /// A splitter with run length L over N/L workers, then a joiner with run length L,
    /// then (except in the last stage) a `DataValueAdapter`.
    Step {
        len: usize,
        parts: usize,
        direction_counter: usize,
        last: bool,
    },
    /// A bitonic half-cleaner: a splitter with L = 1 over L/2 compare-exchanges, a
    /// joiner with L = 1 over them, then a `ValueDataAdapter(order)`.
    Partition { order: usize, len: usize, up: bool },
}

/// A composite: builds its inside at start, then forwards its input to the inside's
/// first actor and exits after forwarding `Exit`.
struct Composite {
    me: KeepAlive<Self>,
    plan: Plan,
    /// Where the composite's output goes (a joiner's tagged input for a partition).
    next: Output,
    head: Option<Recipient<Flow>>,
}

/// The two kinds of destination a composite can feed.
#[derive(Clone)]
enum Output {
    Flow(Recipient<Flow>),
    Tagged(Recipient<Tagged>),
}

impl Composite {
    fn spawn(cx: &Context<Self>, plan: Plan, next: Output) -> Recipient<Flow> {
        cx.system()
            .spawn(Composite {
                me: None,
                plan,
                next,
                head: None,
            })
            .recipient()
    }

    /// Builds the inside, last actor first, and returns its first actor.
    fn build(&self, cx: &Context<Self>) -> Recipient<Flow> {
        let system = cx.system();
        let flow_next = || match &self.next {
            Output::Flow(next) => next.clone(),
            Output::Tagged(_) => unreachable!("only a partition feeds a joiner"),
        };
        match self.plan {
            Plan::Kernel { n } => {
                let mut next = Self::spawn(cx, Plan::LastMergeStage { n }, self.next.clone());
                let mut p = n / 2;
                while p >= 2 {
                    next = Self::spawn(cx, Plan::MergeStage { n, p }, Output::Flow(next));
                    p /= 2;
                }
                next
            }
            Plan::MergeStage { n, p } => self.steps(cx, n, p, false),
            Plan::LastMergeStage { n } => self.steps(cx, n, n, true),
            Plan::Step {
                len,
                parts,
                direction_counter,
                last,
            } => {
                let sink = if last {
                    flow_next()
                } else {
                    let next = flow_next();
                    system
                        .spawn(DataValueAdapter { me: None, next })
                        .recipient()
                };
                let joiner = Joiner::spawn(cx, len, parts, sink);
                let workers = (0..parts)
                    .map(|order| {
                        let up = last || (order / direction_counter) % 2 == 0;
                        let to_joiner = joiner.clone();
                        if len == 2 {
                            CompareExchange::spawn(cx, order, up, to_joiner)
                        } else {
                            let plan = Plan::Partition { order, len, up };
                            Self::spawn(cx, plan, Output::Tagged(to_joiner))
                        }
                    })
                    .collect();
                Splitter::spawn(cx, len, workers)
            }
            Plan::Partition { order, len, up } => {
                let Output::Tagged(next) = self.next.clone() else {
                    unreachable!("a partition always feeds its step's joiner")
                };
                let adapter = system
                    .spawn(ValueDataAdapter {
                        me: None,
                        order,
                        next,
                    })
                    .recipient();
                let joiner = Joiner::spawn(cx, 1, len / 2, adapter);
                let exchangers = (0..len / 2)
                    .map(|i| CompareExchange::spawn(cx, i, up, joiner.clone()))
                    .collect();
                Splitter::spawn(cx, 1, exchangers)
            }
        }
    }

    /// The steps L = P, P/2, …, 2 of a merge stage (`last`: of the last one).
    fn steps(&self, cx: &Context<Self>, n: usize, p: usize, last: bool) -> Recipient<Flow> {
        let mut next = self.next.clone();
        let mut len = 2;
        while len <= p {
            let plan = Plan::Step {
                len,
                parts: n / len,
                direction_counter: p / len,
                last,
            };
            next = Output::Flow(Self::spawn(cx, plan, next));
            len *= 2;
        }
        match next {
            Output::Flow(head) => head,
            Output::Tagged(_) => unreachable!("a stage has at least one step"),
        }
    }
}

impl Actor for Composite {
    fn started(&mut self, cx: &mut Context<Self>) {
        self.me = Some(cx.myself());
        self.head = Some(self.build(cx));
    }
}

impl Handler<Flow> for Composite {
    fn handle(&mut self, msg: Flow, cx: &mut Context<Self>) {
        let exit = matches!(msg, Flow::Exit);
        if let Some(head) = &self.head {
            let _ = head.tell(msg);
        }
        if exit {
            cx.stop();
        }
    }
}

/// What the validator saw.
struct Report {
    count: usize,
    sum: i128,
    /// The first value found out of order, with its index.
    out_of_order: Option<(usize, i64)>,
}

/// Checks that the values come non-decreasing and counts and adds them up.
struct Validation {
    last: i64,
    report: Option<Report>,
    tx: Sender<Report>,
}
impl Actor for Validation {}

impl Handler<Flow> for Validation {
    fn handle(&mut self, msg: Flow, cx: &mut Context<Self>) {
        let Some(report) = self.report.as_mut() else {
            return;
        };
        match msg {
            Flow::Value(v) => {
                if v < self.last && report.out_of_order.is_none() {
                    report.out_of_order = Some((report.count, v));
                }
                self.last = v;
                report.count += 1;
                report.sum += i128::from(v);
            }
            Flow::Exit => {
                if let Some(report) = self.report.take() {
                    let _ = self.tx.send(report);
                }
                cx.stop();
            }
        }
    }
}

pub(crate) fn run(params: &Params) -> Outcome {
    let n: usize = params.get("n");
    let max: i64 = params.get("m");
    let seed: i64 = params.get("s");
    if n < 2 || !n.is_power_of_two() || max < 1 {
        let e = format!("need N a power of 2, N >= 2 and M >= 1 (N={n}, M={max})");
        return Outcome::new(Default::default(), Err(e));
    }

    let start = Instant::now();
    let system = common::system(params);
    let (tx, rx) = mpsc::channel();
    let validation = system.spawn(Validation {
        last: i64::MIN,
        report: Some(Report {
            count: 0,
            sum: 0,
            out_of_order: None,
        }),
        tx,
    });
    let adapter = system.spawn(DataValueAdapter {
        me: None,
        next: validation.recipient(),
    });
    let kernel = system.spawn(Composite {
        me: None,
        plan: Plan::Kernel { n },
        next: Output::Flow(adapter.recipient()),
        head: None,
    });
    let source = system.spawn(Source {
        n,
        max,
        seed,
        next: kernel.recipient(),
    });
    let _ = source.tell(Start);
    let (elapsed, report) = finish_exited(system, &rx, 1, start);
    drop((validation, adapter, kernel, source));

    let check = report.and_then(|mut r| validate(r.remove(0), n, max, seed));
    Outcome::new(elapsed, check)
}

/// Sorted, N values, the input's sum; the §5 sum at the defaults.
fn validate(r: Report, n: usize, max: i64, seed: i64) -> Result<String, String> {
    if let Some((i, v)) = r.out_of_order {
        return Err(format!("value {v} out of order at index {i}"));
    }
    if r.count != n {
        return Err(format!("{} values arrived, expected {n}", r.count));
    }
    let mut rng = PseudoRandom::new(seed);
    let expected: i128 = (0..n)
        .map(|_| i128::from(rng.next_long().abs() % max))
        .sum();
    if r.sum != expected {
        return Err(format!("sum {}, expected the input's {expected}", r.sum));
    }
    if (n, max, seed) == (4096, 1 << 60, 2048) && r.sum != 135_063_552 {
        return Err(format!("sum {}, expected 135063552 (savina.md §5)", r.sum));
    }
    Ok(format!("{n} values sorted, sum {}", r.sum))
}

/// The number of actors the network has for N (kernel and everything around it).
#[cfg(test)]
fn actor_count(n: usize) -> usize {
    let step = |len: usize, last: bool| {
        let parts = n / len;
        let workers = if len == 2 {
            parts
        } else {
            parts * (len / 2 + 4)
        };
        // composite, splitter, joiner (+ the untagging adapter outside the last stage)
        workers + if last { 3 } else { 4 }
    };
    let stage = |p: usize, last: bool| {
        1 + std::iter::successors(Some(2), |l| Some(l * 2))
            .take_while(|&l| l <= p)
            .map(|l| step(l, last))
            .sum::<usize>()
    };
    let merges: usize = std::iter::successors(Some(2), |p| Some(p * 2))
        .take_while(|&p| p <= n / 2)
        .map(|p| stage(p, false))
        .sum();
    // + the kernel, the source, the final adapter and the validator
    merges + stage(n, true) + 4
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_network_has_savinas_actor_count() {
        assert_eq!(actor_count(4096), 241_984);
    }
}
