//! Recursive Matrix Multiplication (Savina #20, `shared/savina.md` §3.20): C = A·B by
//! 2×2 block decomposition. A master routes every task to worker (srC + scC) mod W; a
//! worker splits a task above BLOCK_THRESHOLD entries into eight sub-tasks (back through
//! the master) and multiply-accumulates a small one into C.
//!
//! Savina's global matrices become safe Rust without copies: A and B are read-only
//! `Arc<[f64]>`s, and C is cut, outside the timed region, into the leaf blocks the
//! recursion will produce. Each block is moved into the one worker every task on it is
//! routed to (the routing already serialised Savina's writes), and moved back to the
//! master in the worker's `Stop` echo.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::mpsc::{self, Sender};
use std::time::Instant;

use odeon::{Actor, ActorRef, Context, Handler, Message};
use savina::{Outcome, Params};

use super::finish::finish;
use crate::common;

/// `C[sr_c..][sc_c..] += A[sr_a..][sc_a..] · B[sr_b..][sc_b..]`, `dim`² entries
/// (`blocks`).
#[derive(Clone, Copy)]
struct Work {
    sr_a: usize,
    sc_a: usize,
    sr_b: usize,
    sc_b: usize,
    sr_c: usize,
    sc_c: usize,
    blocks: usize,
    dim: usize,
}
impl Message for Work {
    type Reply = ();
}

impl Work {
    /// The eight products C_xy += A_xz·B_zy of the 2×2 decomposition, in Savina's order.
    fn split(&self) -> impl Iterator<Item = Work> + '_ {
        let h = self.dim / 2;
        (0..8).map(move |i| {
            let (x, y, z) = ((i >> 2) & 1, (i >> 1) & 1, i & 1);
            Work {
                sr_a: self.sr_a + x * h,
                sc_a: self.sc_a + z * h,
                sr_b: self.sr_b + z * h,
                sc_b: self.sc_b + y * h,
                sr_c: self.sr_c + x * h,
                sc_c: self.sc_c + y * h,
                blocks: self.blocks / 4,
                dim: h,
            }
        })
    }
}

/// One task handled.
struct Done;
impl Message for Done {
    type Reply = ();
}

/// Master → worker: exit.
struct Stop;
impl Message for Stop {
    type Reply = ();
}

/// Worker → master: exited; here are the C blocks it owned.
struct Stopped(Vec<CBlock>);
impl Message for Stopped {
    type Reply = ();
}

/// A leaf block of C, row-major.
struct CBlock {
    row: usize,
    col: usize,
    dim: usize,
    data: Vec<f64>,
}

struct Master {
    n: usize,
    threshold: usize,
    a: Arc<[f64]>,
    b: Arc<[f64]>,
    /// The C blocks of each worker, moved into it at creation.
    parts: Vec<Vec<CBlock>>,
    workers: Vec<ActorRef<Worker>>,
    sent: u64,
    completed: u64,
    returned: Vec<CBlock>,
    stopped: usize,
    report: Sender<Vec<CBlock>>,
}

impl Actor for Master {
    fn started(&mut self, cx: &mut Context<Self>) {
        let master = cx.myself();
        for part in std::mem::take(&mut self.parts) {
            let c = part.into_iter().map(|b| ((b.row, b.col), b)).collect();
            self.workers.push(cx.spawn(Worker {
                master: master.clone(),
                threshold: self.threshold,
                n: self.n,
                a: self.a.clone(),
                b: self.b.clone(),
                c,
            }));
        }
        let n = self.n;
        self.route(Work {
            sr_a: 0,
            sc_a: 0,
            sr_b: 0,
            sc_b: 0,
            sr_c: 0,
            sc_c: 0,
            blocks: n * n,
            dim: n,
        });
    }
}

impl Master {
    /// Every task on one C block goes to one worker.
    fn route(&mut self, work: Work) {
        let worker = &self.workers[(work.sr_c + work.sc_c) % self.workers.len()];
        self.sent += 1;
        let _ = worker.tell(work);
    }
}

impl Handler<Work> for Master {
    fn handle(&mut self, msg: Work, _cx: &mut Context<Self>) {
        self.route(msg);
    }
}

impl Handler<Done> for Master {
    fn handle(&mut self, _: Done, _cx: &mut Context<Self>) {
        self.completed += 1;
        if self.completed == self.sent {
            for w in &self.workers {
                let _ = w.tell(Stop);
            }
        }
    }
}

impl Handler<Stopped> for Master {
    fn handle(&mut self, Stopped(mut blocks): Stopped, cx: &mut Context<Self>) {
        self.returned.append(&mut blocks);
        self.stopped += 1;
        if self.stopped == self.workers.len() {
            let _ = self.report.send(std::mem::take(&mut self.returned));
            cx.stop();
        }
    }
}

struct Worker {
    master: ActorRef<Master>,
    threshold: usize,
    n: usize,
    a: Arc<[f64]>,
    b: Arc<[f64]>,
    /// The C blocks this worker owns, by (row, column) of their corner.
    c: HashMap<(usize, usize), CBlock>,
}

impl Actor for Worker {}

impl Handler<Work> for Worker {
    fn handle(&mut self, w: Work, _cx: &mut Context<Self>) {
        if w.blocks > self.threshold {
            for sub in w.split() {
                let _ = self.master.tell(sub);
            }
        } else {
            let n = self.n;
            let c = self
                .c
                .entry((w.sr_c, w.sc_c))
                .or_insert_with(|| leaf(w.sr_c, w.sc_c, w.dim));
            let (a, b, dim) = (&self.a, &self.b, w.dim);
            for i in 0..dim {
                let a_row = &a[(w.sr_a + i) * n + w.sc_a..][..dim];
                for j in 0..dim {
                    let col = w.sc_b + j;
                    let mut sum = 0.0;
                    for (k, &aik) in a_row.iter().enumerate() {
                        sum += aik * b[(w.sr_b + k) * n + col];
                    }
                    c.data[i * c.dim + j] += sum;
                }
            }
        }
        let _ = self.master.tell(Done);
    }
}

impl Handler<Stop> for Worker {
    fn handle(&mut self, _: Stop, cx: &mut Context<Self>) {
        let blocks = std::mem::take(&mut self.c).into_values().collect();
        let _ = self.master.tell(Stopped(blocks));
        cx.stop();
    }
}

/// A zero C block.
fn leaf(row: usize, col: usize, dim: usize) -> CBlock {
    CBlock {
        row,
        col,
        dim,
        data: vec![0.0; dim * dim],
    }
}

/// The leaf C blocks the recursion will touch, as (row, column, dim).
fn leaves(work: Work, threshold: usize, out: &mut Vec<(usize, usize, usize)>) {
    if work.blocks > threshold {
        for sub in work.split() {
            leaves(sub, threshold, out);
        }
    } else {
        out.push((work.sr_c, work.sc_c, work.dim));
    }
}

pub(crate) fn run(params: &Params) -> Outcome {
    let workers = params.get::<usize>("w").max(1);
    let n: usize = params.get("n");
    // A threshold of 0 would split 1×1 blocks into 0×0 ones forever.
    let threshold = params.get::<usize>("t").max(1);
    // Parse time in Savina (outside the timed region): A[i][j] = i, B[i][j] = j, C = 0.
    let a: Arc<[f64]> = (0..n * n).map(|x| (x / n) as f64).collect();
    let b: Arc<[f64]> = (0..n * n).map(|x| (x % n) as f64).collect();
    let root = Work {
        sr_a: 0,
        sc_a: 0,
        sr_b: 0,
        sc_b: 0,
        sr_c: 0,
        sc_c: 0,
        blocks: n * n,
        dim: n,
    };
    let mut keys = Vec::new();
    leaves(root, threshold, &mut keys);
    keys.sort_unstable();
    keys.dedup();
    let mut parts: Vec<Vec<CBlock>> = (0..workers).map(|_| Vec::new()).collect();
    for (row, col, dim) in keys {
        parts[(row + col) % workers].push(leaf(row, col, dim));
    }

    let start = Instant::now();
    let system = common::system(params);
    let (tx, rx) = mpsc::channel();
    let master = system.spawn(Master {
        n,
        threshold,
        a,
        b,
        parts,
        workers: Vec::new(),
        sent: 0,
        completed: 0,
        returned: Vec::new(),
        stopped: 0,
        report: tx,
    });
    let (elapsed, blocks) = finish(system, &rx, 1, start);
    drop(master);
    let check = blocks.and_then(|mut b| validate(&b.remove(0), n));
    Outcome::new(elapsed, check)
}

/// `C[i][j] = n·i·j` exactly, for every entry, each covered once.
fn validate(blocks: &[CBlock], n: usize) -> Result<String, String> {
    let mut covered = vec![false; n * n];
    for blk in blocks {
        for i in 0..blk.dim {
            for j in 0..blk.dim {
                let (r, c) = (blk.row + i, blk.col + j);
                if r >= n || c >= n || std::mem::replace(&mut covered[r * n + c], true) {
                    return Err(format!("C[{r}][{c}] is outside the matrix or twice"));
                }
                let want = (n * r * c) as f64;
                let got = blk.data[i * blk.dim + j];
                if got != want {
                    return Err(format!("C[{r}][{c}] = {got}, expected {want}"));
                }
            }
        }
    }
    match covered.iter().position(|&c| !c) {
        Some(x) => Err(format!("C[{}][{}] was never computed", x / n, x % n)),
        None => Ok(format!("C[i][j] = {n}·i·j exactly for all {n}×{n} entries")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_run_validates() {
        let bench = savina::catalog::find("recmatmul").expect("in the catalog");
        let outcome = run(&Params::for_bench(bench, true));
        assert!(outcome.check.is_ok(), "{:?}", outcome.check);
    }

    #[test]
    fn defaults_make_585_tasks_of_which_512_leaves() {
        let root = Work {
            sr_a: 0,
            sc_a: 0,
            sr_b: 0,
            sc_b: 0,
            sr_c: 0,
            sc_c: 0,
            blocks: 1 << 20,
            dim: 1024,
        };
        let mut leaves_seen = Vec::new();
        leaves(root, 16384, &mut leaves_seen);
        assert_eq!(leaves_seen.len(), 512);
        assert!(leaves_seen.iter().all(|&(_, _, dim)| dim == 128));
    }
}
