//! Quicksort (Savina #21, `shared/savina.md` §3.21): a tree of sorter actors. A sorter
//! given T values or more keeps those equal to the pivot and hands the smaller and the
//! larger ones to two new children; smaller lists are sorted sequentially. Results flow
//! back up and are concatenated; the root validates.
//!
//! The lists are moved from actor to actor, never copied or shared.

use std::sync::mpsc::{self, Sender};
use std::time::Instant;

use odeon::{Actor, ActorRef, Context, Handler, Message};
use savina::rng::PseudoRandom;
use savina::{Outcome, Params};

use super::finish::finish;
use crate::common;

/// Where a sorter's result goes in its parent's list.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Position {
    Left,
    Right,
    Initial,
}

/// Sort these values.
struct Sort(Vec<i64>);
impl Message for Sort {
    type Reply = ();
}

/// A child's sorted values.
struct Sorted(Vec<i64>, Position);
impl Message for Sorted {
    type Reply = ();
}

/// What the root reports: the sorted values, or why they are wrong.
type Report = Result<Vec<i64>, String>;

/// Where a sorter sends its result.
enum Parent {
    Sorter(ActorRef<Sorter>),
    /// The root validates and reports to the driver.
    Driver {
        n: usize,
        report: Sender<Report>,
    },
}

struct Sorter {
    parent: Parent,
    position: Position,
    threshold: usize,
    result: Vec<i64>,
    fragments: u8,
    /// The two children, held until this sorter exits. Savina needs no such refs; here,
    /// dropping a child's ref right after its `Sort` would leave its only strong refs in
    /// its own children, and odeon's local GC can race with their last `Sorted` (the
    /// child's turn sees an empty mailbox, then no refs, and stops with the result
    /// queued; the race noted in `micro/chameneos.rs`).
    children: Vec<ActorRef<Sorter>>,
}

impl Actor for Sorter {}

impl Sorter {
    fn new(parent: Parent, position: Position, threshold: usize) -> Self {
        Self {
            parent,
            position,
            threshold,
            result: Vec::new(),
            fragments: 0,
            children: Vec::new(),
        }
    }

    /// Sends the sorted values up (or validates them, at the root) and exits.
    fn finish(&mut self, sorted: Vec<i64>, cx: &mut Context<Self>) {
        match &self.parent {
            Parent::Sorter(parent) => {
                let _ = parent.tell(Sorted(sorted, self.position));
            }
            Parent::Driver { n, report } => {
                // Savina validates at the root, inside the timed region.
                let check = if sorted.len() != *n {
                    Err(format!("{} values out of {n}", sorted.len()))
                } else if let Some(i) = sorted.windows(2).position(|w| w[0] > w[1]) {
                    Err(format!("not sorted at index {i}"))
                } else {
                    Ok(sorted)
                };
                let _ = report.send(check);
            }
        }
        cx.stop();
    }
}

/// Savina's sequential sort: pivot at len/2, three scans in original order for the
/// smaller, equal and larger values, the outer two sorted recursively.
fn sequential(data: Vec<i64>) -> Vec<i64> {
    if data.len() < 2 {
        return data;
    }
    let pivot = data[data.len() / 2];
    let less = sequential(data.iter().copied().filter(|&v| v < pivot).collect());
    let more = sequential(data.iter().copied().filter(|&v| v > pivot).collect());
    let mut sorted = less;
    sorted.extend(data.iter().copied().filter(|&v| v == pivot));
    sorted.extend(more);
    sorted
}

impl Handler<Sort> for Sorter {
    fn handle(&mut self, Sort(data): Sort, cx: &mut Context<Self>) {
        if data.len() < self.threshold {
            self.finish(sequential(data), cx);
            return;
        }
        let pivot = data[data.len() / 2];
        let me = cx.myself();
        for (position, part) in [
            (
                Position::Left,
                data.iter().copied().filter(|&v| v < pivot).collect(),
            ),
            (
                Position::Right,
                data.iter().copied().filter(|&v| v > pivot).collect(),
            ),
        ] {
            let child = cx.spawn(Sorter::new(
                Parent::Sorter(me.clone()),
                position,
                self.threshold,
            ));
            let _ = child.tell(Sort(part));
            self.children.push(child);
        }
        self.result = data.into_iter().filter(|&v| v == pivot).collect();
        self.fragments = 1;
    }
}

impl Handler<Sorted> for Sorter {
    fn handle(&mut self, Sorted(mut data, position): Sorted, cx: &mut Context<Self>) {
        if !data.is_empty() {
            if position == Position::Left {
                data.append(&mut self.result);
                self.result = data;
            } else {
                self.result.append(&mut data);
            }
        }
        self.fragments += 1;
        if self.fragments == 3 {
            let sorted = std::mem::take(&mut self.result);
            self.finish(sorted, cx);
        }
    }
}

/// N values `|PseudoRandom(S).nextLong() mod M|`.
fn input(n: usize, max: i64, seed: i64) -> Vec<i64> {
    let mut rng = PseudoRandom::new(seed);
    (0..n).map(|_| (rng.next_long() % max).abs()).collect()
}

pub(crate) fn run(params: &Params) -> Outcome {
    let n: usize = params.get("n");
    let max: i64 = params.get("m");
    // T = 0 would split empty lists forever.
    let threshold = params.get::<usize>("t").max(1);
    let seed: i64 = params.get("s");
    if max < 1 {
        return Outcome::new(Default::default(), Err(format!("-m {max}: must be >= 1")));
    }

    let start = Instant::now();
    let system = common::system(params);
    let (tx, rx) = mpsc::channel();
    // Savina generates the input inside the timed region.
    let data = input(n, max, seed);
    let root = system.spawn(Sorter::new(
        Parent::Driver { n, report: tx },
        Position::Initial,
        threshold,
    ));
    let _ = root.tell(Sort(data));
    let (elapsed, sorted) = finish(system, &rx, 1, start);
    drop(root);

    let check = sorted.and_then(|mut r| r.remove(0)).and_then(|sorted| {
        // Outside the timed region: the sum must be the input's.
        let expected: i128 = input(n, max, seed).into_iter().map(i128::from).sum();
        let sum: i128 = sorted.iter().map(|&v| i128::from(v)).sum();
        let defaults = (n, max, seed) == (1_000_000, 1 << 60, 1024);
        if sum != expected || (defaults && sum != 32_768_134_304) {
            Err(format!("sum {sum}, expected {expected}"))
        } else {
            Ok(format!("{n} values sorted, sum {sum}"))
        }
    });
    Outcome::new(elapsed, check)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_run_validates() {
        let bench = savina::catalog::find("quicksort").expect("in the catalog");
        let outcome = run(&Params::for_bench(bench, true));
        assert!(outcome.check.is_ok(), "{:?}", outcome.check);
    }

    #[test]
    fn sequential_sort_sorts() {
        let data = input(5000, 1 << 60, 3);
        let mut expected = data.clone();
        expected.sort_unstable();
        assert_eq!(sequential(data), expected);
    }
}
