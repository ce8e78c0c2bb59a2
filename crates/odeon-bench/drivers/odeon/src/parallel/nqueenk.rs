//! NQueens, first K solutions (Savina #19, `shared/savina.md` §3.19): a master hands
//! partial boards round-robin to W workers; a worker extends a shallow board by one row
//! (sending every valid extension back to the master as new work) and searches a deep
//! one (depth ≥ THRESHOLD) sequentially, reporting each solution. The master stops the
//! workers when the work runs out or SOLUTIONS_LIMIT solutions have been counted.
//!
//! Priorities only matter to Savina's priority-mailbox variant; the plain protocol
//! carries and ignores them, as here.

use std::sync::mpsc::{self, Sender};
use std::time::Instant;

use odeon::{Actor, ActorRef, Context, Handler, Message};
use savina::{Outcome, Params};

use super::finish::finish;
use crate::common;

/// Known solution counts for N = 1…20 (Savina's table).
const SOLUTIONS: [u64; 20] = [
    1,
    0,
    0,
    2,
    10,
    4,
    40,
    92,
    352,
    724,
    2680,
    14200,
    73712,
    365596,
    2279184,
    14772512,
    95815104,
    666090624,
    4968057848,
    39029188884,
];

/// A partial board: `board[r]` is the column of the queen in row `r`.
struct Work {
    priority: usize,
    board: Vec<u8>,
}
impl Message for Work {
    type Reply = ();
}

/// One complete solution.
struct Solution;
impl Message for Solution {
    type Reply = ();
}

/// A worker finished one `Work`.
struct Done;
impl Message for Done {
    type Reply = ();
}

/// Master → worker: exit; worker → master: exited.
struct Stop;
impl Message for Stop {
    type Reply = ();
}

/// No two queens share a column or a diagonal.
fn valid(board: &[u8]) -> bool {
    for (i, &p) in board.iter().enumerate() {
        for (j, &q) in board.iter().enumerate().skip(i + 1) {
            let dist = (j - i) as i32;
            let (p, q) = (i32::from(p), i32::from(q));
            if q == p || q == p - dist || q == p + dist {
                return false;
            }
        }
    }
    true
}

struct Config {
    size: usize,
    threshold: usize,
    priorities: usize,
    limit: u64,
}

struct Master {
    cfg: Config,
    workers: Vec<ActorRef<Worker>>,
    workers_wanted: usize,
    sent: u64,
    completed: u64,
    solutions: u64,
    stop_sent: bool,
    stopped: usize,
    report: Sender<u64>,
}

impl Actor for Master {
    fn started(&mut self, cx: &mut Context<Self>) {
        let master = cx.myself();
        self.workers = (0..self.workers_wanted)
            .map(|_| {
                cx.spawn(Worker {
                    master: master.clone(),
                    size: self.cfg.size,
                    threshold: self.cfg.threshold,
                })
            })
            .collect();
        let priority = self.cfg.priorities;
        self.assign(Work {
            priority,
            board: Vec::new(),
        });
    }
}

impl Master {
    /// Round-robin: the worker is the number of work items sent so far, mod W.
    fn assign(&mut self, work: Work) {
        let worker = &self.workers[(self.sent % self.workers.len() as u64) as usize];
        self.sent += 1;
        let _ = worker.tell(work);
    }

    fn stop_workers(&mut self) {
        if !std::mem::replace(&mut self.stop_sent, true) {
            for w in &self.workers {
                let _ = w.tell(Stop);
            }
        }
    }
}

impl Handler<Work> for Master {
    fn handle(&mut self, msg: Work, _cx: &mut Context<Self>) {
        self.assign(msg);
    }
}

impl Handler<Solution> for Master {
    fn handle(&mut self, _: Solution, _cx: &mut Context<Self>) {
        self.solutions += 1;
        if self.solutions == self.cfg.limit {
            self.stop_workers();
        }
    }
}

impl Handler<Done> for Master {
    fn handle(&mut self, _: Done, _cx: &mut Context<Self>) {
        self.completed += 1;
        if self.completed == self.sent {
            self.stop_workers();
        }
    }
}

impl Handler<Stop> for Master {
    fn handle(&mut self, _: Stop, cx: &mut Context<Self>) {
        self.stopped += 1;
        if self.stopped == self.workers.len() {
            let _ = self.report.send(self.solutions);
            cx.stop();
        }
    }
}

struct Worker {
    master: ActorRef<Master>,
    size: usize,
    threshold: usize,
}

impl Actor for Worker {}

impl Worker {
    /// Depth-first search of the rest of the board, one `Solution` per complete board.
    fn search(&self, board: &mut Vec<u8>) {
        if board.len() == self.size {
            let _ = self.master.tell(Solution);
            return;
        }
        for c in 0..self.size as u8 {
            board.push(c);
            if valid(board) {
                self.search(board);
            }
            board.pop();
        }
    }
}

impl Handler<Work> for Worker {
    fn handle(&mut self, mut msg: Work, _cx: &mut Context<Self>) {
        let depth = msg.board.len();
        if depth == self.size {
            let _ = self.master.tell(Solution);
        } else if depth >= self.threshold {
            self.search(&mut msg.board);
        } else {
            let priority = msg.priority.saturating_sub(1);
            for c in 0..self.size as u8 {
                let mut board = Vec::with_capacity(depth + 1);
                board.extend_from_slice(&msg.board);
                board.push(c);
                if valid(&board) {
                    let _ = self.master.tell(Work { priority, board });
                }
            }
        }
        let _ = self.master.tell(Done);
    }
}

impl Handler<Stop> for Worker {
    fn handle(&mut self, _: Stop, cx: &mut Context<Self>) {
        let _ = self.master.tell(Stop);
        cx.stop();
    }
}

pub(crate) fn run(params: &Params) -> Outcome {
    let workers = params.get::<usize>("w").max(1);
    let size = params.get::<usize>("n").clamp(1, 20);
    let threshold: usize = params.get("t");
    let priorities = params.get::<usize>("p").clamp(1, 30);
    let limit: u64 = params.get("s");
    let cfg = Config {
        size,
        threshold,
        // The first work item carries PRIORITIES, clamped to 0…PRIORITIES−1.
        priorities: priorities - 1,
        limit,
    };

    let start = Instant::now();
    let system = common::system(params);
    let (tx, rx) = mpsc::channel();
    // Held until the end so that the master is never collected as unreferenced.
    let _master = system.spawn(Master {
        cfg,
        workers: Vec::new(),
        workers_wanted: workers,
        sent: 0,
        completed: 0,
        solutions: 0,
        stop_sent: false,
        stopped: 0,
        report: tx,
    });
    let (elapsed, found) = finish(system, &rx, 1, start);
    let check = found.and_then(|found| {
        let count = found[0];
        let known = SOLUTIONS[size - 1];
        if limit.min(known) <= count && count <= known {
            Ok(format!(
                "{count} solutions for N={size} (known {known}, limit {limit})"
            ))
        } else {
            Err(format!(
                "{count} solutions for N={size}: expected between {} and {known}",
                limit.min(known)
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
        let bench = savina::catalog::find("nqueenk").expect("in the catalog");
        let outcome = run(&Params::for_bench(bench, true));
        assert!(outcome.check.is_ok(), "{:?}", outcome.check);
    }

    #[test]
    fn validity_sees_columns_and_both_diagonals() {
        assert!(valid(&[1, 3, 0, 2]));
        assert!(!valid(&[0, 0]));
        assert!(!valid(&[0, 1]));
        assert!(!valid(&[1, 0]));
    }
}
