//! Filter Bank (Savina #23, `shared/savina.md` §3.23): a StreamIt-style split/join
//! pipeline. A producer and a source inject one value per round trip; Branches copies
//! it to CH banks, each a chain Delay → FIR(H) → Sample → Delay → FIR(F) →
//! TaggedForward; an Integrator joins the channels value by value, Combine sums them
//! and the Sink receives the sums. An `Exit` follows the values down every path.
//!
//! The filters (`filters.rs`) are plain structs run inside one generic [`Stage`] actor,
//! so that the sequential reference used for validation computes the same arithmetic.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::mpsc::{self, Sender};
use std::time::Instant;

use odeon::{Actor, ActorRef, Context, Handler, Message, Recipient, SystemHandle};
use savina::{Outcome, Params};

use super::finish::finish;
use crate::common;

mod filters;
use filters::{Delay, Filter, Fir, Sample, reference};

/// One sample.
struct Value(f64);
impl Message for Value {
    type Reply = ();
}

/// End of the stream, behind every value.
struct Exit;
impl Message for Exit {
    type Reply = ();
}

/// Producer ← source: ready for the next value.
struct Next(ActorRef<Source>);
impl Message for Next {
    type Reply = ();
}

/// Producer → source: inject one value.
struct Boot;
impl Message for Boot {
    type Reply = ();
}

/// A channel's output, to the Integrator.
struct Sourced(usize, f64);
impl Message for Sourced {
    type Reply = ();
}

/// One value of every channel, in channel order, to Combine.
struct Collection(Vec<f64>);
impl Message for Collection {
    type Reply = ();
}

/// The next actor of a chain: anything that takes values and the exit.
#[derive(Clone)]
struct Link {
    value: Recipient<Value>,
    exit: Recipient<Exit>,
}

impl Link {
    fn to<A: Handler<Value> + Handler<Exit>>(r: &ActorRef<A>) -> Self {
        Self {
            value: r.recipient(),
            exit: r.recipient(),
        }
    }
}

/// One filter as an actor.
struct Stage<F: Filter> {
    filter: F,
    next: Link,
}

impl<F: Filter> Actor for Stage<F> {}

impl<F: Filter> Handler<Value> for Stage<F> {
    fn handle(&mut self, Value(v): Value, _cx: &mut Context<Self>) {
        if let Some(out) = self.filter.push(v) {
            let _ = self.next.value.tell(Value(out));
        }
    }
}

impl<F: Filter> Handler<Exit> for Stage<F> {
    fn handle(&mut self, _: Exit, cx: &mut Context<Self>) {
        let _ = self.next.exit.tell(Exit);
        cx.stop();
    }
}

/// Injects one `Boot` per `Next`, then the exit.
struct Producer {
    simulations: usize,
    sent: usize,
}

impl Actor for Producer {}

impl Handler<Next> for Producer {
    fn handle(&mut self, Next(source): Next, cx: &mut Context<Self>) {
        if self.sent == self.simulations {
            let _ = source.tell(Exit);
            cx.stop();
        } else {
            self.sent += 1;
            let _ = source.tell(Boot);
        }
    }
}

/// Emits 0, 1, …, 999, 0, … one per `Boot`.
struct Source {
    current: u32,
    producer: ActorRef<Producer>,
    branches: ActorRef<Branches>,
}

impl Actor for Source {}

impl Handler<Boot> for Source {
    fn handle(&mut self, _: Boot, cx: &mut Context<Self>) {
        let _ = self.branches.tell(Value(f64::from(self.current)));
        self.current = (self.current + 1) % 1000;
        let _ = self.producer.tell(Next(cx.myself()));
    }
}

impl Handler<Exit> for Source {
    fn handle(&mut self, _: Exit, cx: &mut Context<Self>) {
        let _ = self.branches.tell(Exit);
        cx.stop();
    }
}

/// Copies every value to every bank.
struct Branches {
    banks: Vec<ActorRef<Bank>>,
}

impl Actor for Branches {}

impl Handler<Value> for Branches {
    fn handle(&mut self, Value(v): Value, _cx: &mut Context<Self>) {
        for bank in &self.banks {
            let _ = bank.tell(Value(v));
        }
    }
}

impl Handler<Exit> for Branches {
    fn handle(&mut self, _: Exit, cx: &mut Context<Self>) {
        for bank in &self.banks {
            let _ = bank.tell(Exit);
        }
        cx.stop();
    }
}

/// One channel: builds its chain when it starts and feeds it.
struct Bank {
    channel: usize,
    columns: usize,
    h: Arc<[f64]>,
    f: Arc<[f64]>,
    integrator: ActorRef<Integrator>,
    first: Option<Link>,
}

impl Actor for Bank {
    fn started(&mut self, cx: &mut Context<Self>) {
        // Top-level, not children: the chain outlives the bank, which exits first.
        let sys: SystemHandle = cx.system();
        let c = self.columns;
        let tagged = sys.spawn(Tagged {
            channel: self.channel,
            integrator: self.integrator.clone(),
        });
        let next = Link::to(&tagged);
        let next = Link::to(&sys.spawn(Stage {
            filter: Fir::new(self.f.clone()),
            next,
        }));
        let next = Link::to(&sys.spawn(Stage {
            filter: Delay::new(c - 1),
            next,
        }));
        let sample = Sample {
            rate: c,
            received: 0,
        };
        let next = Link::to(&sys.spawn(Stage {
            filter: sample,
            next,
        }));
        let next = Link::to(&sys.spawn(Stage {
            filter: Fir::new(self.h.clone()),
            next,
        }));
        let next = Link::to(&sys.spawn(Stage {
            filter: Delay::new(c - 1),
            next,
        }));
        self.first = Some(next);
    }
}

impl Handler<Value> for Bank {
    fn handle(&mut self, msg: Value, _cx: &mut Context<Self>) {
        if let Some(first) = &self.first {
            let _ = first.value.tell(msg);
        }
    }
}

impl Handler<Exit> for Bank {
    fn handle(&mut self, _: Exit, cx: &mut Context<Self>) {
        if let Some(first) = &self.first {
            let _ = first.exit.tell(Exit);
        }
        cx.stop();
    }
}

/// Tags a channel's outputs for the Integrator.
struct Tagged {
    channel: usize,
    integrator: ActorRef<Integrator>,
}

impl Actor for Tagged {}

impl Handler<Value> for Tagged {
    fn handle(&mut self, Value(v): Value, _cx: &mut Context<Self>) {
        let _ = self.integrator.tell(Sourced(self.channel, v));
    }
}

impl Handler<Exit> for Tagged {
    fn handle(&mut self, _: Exit, cx: &mut Context<Self>) {
        let _ = self.integrator.tell(Exit);
        cx.stop();
    }
}

/// Joins the channels: each value fills the oldest partial row lacking its channel.
struct Integrator {
    channels: usize,
    /// Partial rows, oldest first, with how many channels each holds.
    rows: VecDeque<(Vec<Option<f64>>, usize)>,
    exits: usize,
    combine: ActorRef<Combine>,
}

impl Actor for Integrator {}

impl Handler<Sourced> for Integrator {
    fn handle(&mut self, Sourced(channel, v): Sourced, _cx: &mut Context<Self>) {
        match self.rows.iter_mut().find(|(row, _)| row[channel].is_none()) {
            Some((row, filled)) => {
                row[channel] = Some(v);
                *filled += 1;
            }
            None => {
                let mut row = vec![None; self.channels];
                row[channel] = Some(v);
                self.rows.push_back((row, 1));
            }
        }
        if self.rows.front().is_some_and(|(_, n)| *n == self.channels)
            && let Some((row, _)) = self.rows.pop_front()
        {
            let values = row.into_iter().flatten().collect();
            let _ = self.combine.tell(Collection(values));
        }
    }
}

impl Handler<Exit> for Integrator {
    fn handle(&mut self, _: Exit, cx: &mut Context<Self>) {
        self.exits += 1;
        if self.exits == self.channels {
            let _ = self.combine.tell(Exit);
            cx.stop();
        }
    }
}

/// Sums one value of every channel.
struct Combine {
    sink: ActorRef<Sink>,
}

impl Actor for Combine {}

impl Handler<Collection> for Combine {
    fn handle(&mut self, Collection(values): Collection, _cx: &mut Context<Self>) {
        let _ = self
            .sink
            .tell(Value(values.iter().fold(0.0, |acc, v| acc + v)));
    }
}

impl Handler<Exit> for Combine {
    fn handle(&mut self, _: Exit, cx: &mut Context<Self>) {
        let _ = self.sink.tell(Exit);
        cx.stop();
    }
}

/// Receives the sums (Savina only counts them; they are kept here for validation).
struct Sink {
    values: Vec<f64>,
    report: Sender<Vec<f64>>,
}

impl Actor for Sink {}

impl Handler<Value> for Sink {
    fn handle(&mut self, Value(v): Value, _cx: &mut Context<Self>) {
        self.values.push(v);
    }
}

impl Handler<Exit> for Sink {
    fn handle(&mut self, _: Exit, cx: &mut Context<Self>) {
        let _ = self.report.send(std::mem::take(&mut self.values));
        cx.stop();
    }
}

/// One row of coefficients per channel.
type Coefficients = Vec<Arc<[f64]>>;

/// Coefficients for channel j: `H[j][i] = i·C + j·CH + 2j + i + 1`, `F[j][i] = i·j + j² +
/// j + i`.
fn coefficients(columns: usize, channels: usize) -> (Coefficients, Coefficients) {
    let h = (0..channels)
        .map(|j| {
            (0..columns)
                .map(|i| (i * columns + j * channels + 2 * j + i + 1) as f64)
                .collect()
        })
        .collect();
    let f = (0..channels)
        .map(|j| {
            (0..columns)
                .map(|i| (i * j + j * j + j + i) as f64)
                .collect()
        })
        .collect();
    (h, f)
}

pub(crate) fn run(params: &Params) -> Outcome {
    let columns: usize = params.get("col");
    let simulations: usize = params.get("sim");
    let channels = params.get::<usize>("chan").clamp(2, 34);
    if columns < 2 {
        let e = format!("-col {columns}: the delay lines need at least 2 columns");
        return Outcome::new(Default::default(), Err(e));
    }
    // Parse time in Savina: outside the timed region.
    let (h, f) = coefficients(columns, channels);

    let start = Instant::now();
    let system = common::system(params);
    let (tx, rx) = mpsc::channel();
    let sink = system.spawn(Sink {
        values: Vec::new(),
        report: tx,
    });
    let combine = system.spawn(Combine { sink });
    let integrator = system.spawn(Integrator {
        channels,
        rows: VecDeque::new(),
        exits: 0,
        combine,
    });
    let banks = (0..channels)
        .map(|j| {
            system.spawn(Bank {
                channel: j,
                columns,
                h: h[j].clone(),
                f: f[j].clone(),
                integrator: integrator.clone(),
                first: None,
            })
        })
        .collect();
    let branches = system.spawn(Branches { banks });
    let producer = system.spawn(Producer {
        simulations,
        sent: 0,
    });
    let source = system.spawn(Source {
        current: 0,
        producer: producer.clone(),
        branches,
    });
    // The source is referenced only by the `Next` in flight at times: hold it here so
    // that it is never collected as unreferenced between two rounds.
    let _ = producer.tell(Next(source.clone()));
    let (elapsed, values) = finish(system, &rx, 1, start);
    drop((integrator, producer, source));

    let check = values.and_then(|mut v| {
        let got = v.remove(0);
        let defaults = (columns, simulations, channels) == (16384, 34816, 8);
        let expected = if defaults {
            // savina.md §5: 2050 values, all exactly 0.0.
            vec![0.0; 2050]
        } else {
            reference(columns, simulations, &h, &f)
        };
        if got == expected {
            let sum: f64 = got.iter().sum();
            Ok(format!("{} sink values as expected, sum {sum}", got.len()))
        } else {
            Err(format!(
                "{} sink values differ from the {} expected",
                got.len(),
                expected.len()
            ))
        }
    });
    Outcome::new(elapsed, check)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_run_validates() {
        let bench = savina::catalog::find("filterbank").expect("in the catalog");
        let outcome = run(&Params::for_bench(bench, true));
        assert!(outcome.check.is_ok(), "{:?}", outcome.check);
    }

    #[test]
    fn reference_matches_a_hand_computed_small_bank() {
        // Worked out independently from savina.md §3.23 for C = 3, S = 50, CH = 3.
        let (h, f) = coefficients(3, 3);
        let sums = reference(3, 50, &h, &f);
        assert_eq!(sums.len(), 50 - 2 * 3 + 2);
        assert_eq!(sums.iter().sum::<f64>(), 309_758.0);
    }
}
