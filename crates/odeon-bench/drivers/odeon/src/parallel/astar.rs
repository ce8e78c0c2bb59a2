//! A-Star (guided) Search (Savina #18, `shared/savina.md` §3.18): W workers search a
//! random directed G×G×G grid breadth-first from the origin, each for at most THRESHOLD
//! nodes per work item, handing the rest of their queue back to a master that deals it
//! out round-robin, until one of them claims the target.
//!
//! As in Savina, the workers share the grid: its edges are read-only and every node's
//! parent is claimed once, by compare-and-set from empty. In Rust that is an `Arc` of
//! atomics, safe and free of data races; the claim is the only shared write.
//! Priorities only matter to Savina's priority-mailbox variant and are left out.

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{self, Sender};
use std::time::Instant;

use odeon::{Actor, ActorRef, Context, Handler, Message};
use savina::rng::JavaRandom;
use savina::{Outcome, Params};

use super::finish::finish;
use crate::common;

/// "No parent yet".
const NONE: u32 = u32::MAX;

/// The grid, built outside the timed region.
struct Grid {
    /// Out-edges of every node, in generation order.
    edges: Vec<Vec<u32>>,
    /// Each node's parent in the search tree, or [`NONE`].
    parent: Vec<AtomicU32>,
    target: u32,
}

impl Grid {
    /// Savina's generator: `java.util.Random(123456)`, six forward offsets per node.
    fn new(g: usize) -> Self {
        let id = |i: usize, j: usize, k: usize| (g * g * i + g * j + k) as u32;
        let mut rng = JavaRandom::new(123_456);
        let mut edges = vec![Vec::new(); g * g * g];
        for i in 0..g {
            for j in 0..g {
                for k in 0..g {
                    let node = id(i, j, k);
                    let out = &mut edges[node as usize];
                    // (0,0,0) and (1,1,1) are skipped; (1,1,0) is forced on a node that
                    // has no edge yet, without drawing.
                    let offsets = [(0, 0, 1), (0, 1, 0), (0, 1, 1), (1, 0, 0), (1, 0, 1)];
                    let add = |out: &mut Vec<u32>, (di, dj, dk): (usize, usize, usize)| {
                        let to = id(
                            (i + di).min(g - 1),
                            (j + dj).min(g - 1),
                            (k + dk).min(g - 1),
                        );
                        if to != node && !out.contains(&to) {
                            out.push(to);
                        }
                    };
                    for off in offsets {
                        if rng.next_boolean() {
                            add(out, off);
                        }
                    }
                    if out.is_empty() || rng.next_boolean() {
                        add(out, (1, 1, 0));
                    }
                }
            }
        }
        let t = g * 8 / 10;
        Self {
            parent: (0..edges.len()).map(|_| AtomicU32::new(NONE)).collect(),
            edges,
            target: id(t, t, t),
        }
    }

    /// Sets `node`'s parent if it has none; true if this call did.
    fn claim(&self, node: u32, parent: u32) -> bool {
        self.parent[node as usize]
            .compare_exchange(NONE, parent, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }
}

/// Search from `node` (master → worker), or search it later (worker → master).
struct Work(u32);
impl Message for Work {
    type Reply = ();
}

/// A worker finished one `Work`.
struct Received;
impl Message for Received {
    type Reply = ();
}

/// A worker claimed the target.
struct Found;
impl Message for Found {
    type Reply = ();
}

/// Master → worker: exit; worker → master: exited.
struct Stop;
impl Message for Stop {
    type Reply = ();
}

struct Master {
    grid: Arc<Grid>,
    threshold: usize,
    workers_wanted: usize,
    workers: Vec<ActorRef<Worker>>,
    sent: u64,
    completed: u64,
    stop_sent: bool,
    stopped: usize,
    report: Sender<()>,
}

impl Actor for Master {
    fn started(&mut self, cx: &mut Context<Self>) {
        let master = cx.myself();
        self.workers = (0..self.workers_wanted as i64)
            .map(|i| {
                cx.spawn(Worker {
                    master: master.clone(),
                    grid: self.grid.clone(),
                    threshold: self.threshold,
                    busy: JavaRandom::new(i),
                })
            })
            .collect();
        self.assign(Work(0));
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

impl Handler<Received> for Master {
    fn handle(&mut self, _: Received, _cx: &mut Context<Self>) {
        self.completed += 1;
        if self.completed == self.sent {
            self.stop_workers();
        }
    }
}

impl Handler<Found> for Master {
    fn handle(&mut self, _: Found, _cx: &mut Context<Self>) {
        self.stop_workers();
    }
}

impl Handler<Stop> for Master {
    fn handle(&mut self, _: Stop, cx: &mut Context<Self>) {
        self.stopped += 1;
        if self.stopped == self.workers.len() {
            let _ = self.report.send(());
            cx.stop();
        }
    }
}

struct Worker {
    master: ActorRef<Master>,
    grid: Arc<Grid>,
    threshold: usize,
    /// Stands for Savina's `Math.random()` busy-work.
    busy: JavaRandom,
}

impl Actor for Worker {}

impl Worker {
    /// Breadth-first from `start` for at most THRESHOLD nodes; what is still queued goes
    /// back to the master, unless the target was found.
    fn search(&mut self, start: u32) {
        let grid = &*self.grid;
        let mut queue = std::collections::VecDeque::from([start]);
        let mut processed = 0;
        while processed < self.threshold {
            let Some(node) = queue.pop_front() else {
                break;
            };
            processed += 1;
            for _ in 0..100 {
                black_box(self.busy.next_double());
            }
            for &next in &grid.edges[node as usize] {
                if grid.claim(next, node) {
                    if next == grid.target {
                        let _ = self.master.tell(Found);
                        return;
                    }
                    queue.push_back(next);
                }
            }
        }
        for node in queue {
            let _ = self.master.tell(Work(node));
        }
    }
}

impl Handler<Work> for Worker {
    fn handle(&mut self, Work(node): Work, _cx: &mut Context<Self>) {
        self.search(node);
        let _ = self.master.tell(Received);
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
    let g = params.get::<usize>("g").clamp(1, 31 * 8);
    let threshold: usize = params.get("t");
    // Parse time in Savina: outside the timed region.
    let grid = Arc::new(Grid::new(g));

    let start = Instant::now();
    let system = common::system(params);
    let (tx, rx) = mpsc::channel();
    let master = system.spawn(Master {
        grid: grid.clone(),
        threshold,
        workers_wanted: workers,
        workers: Vec::new(),
        sent: 0,
        completed: 0,
        stop_sent: false,
        stopped: 0,
        report: tx,
    });
    let (elapsed, done) = finish(system, &rx, 1, start);
    drop(master);
    Outcome::new(elapsed, done.and_then(|_| validate(&grid, g)))
}

/// The parent chain from the target reaches the origin, if the target is reachable at
/// all (checked by a sequential search); otherwise every reachable node was claimed.
fn validate(grid: &Grid, g: usize) -> Result<String, String> {
    let parent = |n: u32| grid.parent[n as usize].load(Ordering::Acquire);
    let claimed = (0..grid.edges.len() as u32)
        .filter(|&n| parent(n) != NONE)
        .count();
    let mut seen = vec![false; grid.edges.len()];
    seen[0] = true;
    let mut stack = vec![0u32];
    while let Some(n) = stack.pop() {
        for &m in &grid.edges[n as usize] {
            if !std::mem::replace(&mut seen[m as usize], true) {
                stack.push(m);
            }
        }
    }
    let reachable = seen.iter().filter(|&&s| s).count();
    let edges: usize = grid.edges.iter().map(Vec::len).sum();
    if g == 30 && (edges, reachable) != (78_712, 20_515) {
        return Err(format!(
            "grid has {edges} edges, {reachable} reachable nodes: expected 78712 and 20515"
        ));
    }
    if !seen[grid.target as usize] {
        return if grid.target == 0 || claimed + 1 == reachable {
            Ok(format!(
                "target unreachable; all {reachable} reachable nodes processed"
            ))
        } else {
            Err(format!(
                "target unreachable but {} of {reachable} nodes processed",
                claimed + 1
            ))
        };
    }
    let (mut node, mut steps) = (grid.target, 0);
    while node != 0 {
        node = parent(node);
        steps += 1;
        if node == NONE || steps > grid.edges.len() {
            return Err("the parent chain from the target does not reach the origin".into());
        }
    }
    Ok(format!(
        "parent chain from the target reaches the origin in {steps} steps; {} nodes processed",
        claimed + 1
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_run_validates() {
        let bench = savina::catalog::find("astar").expect("in the catalog");
        let outcome = run(&Params::for_bench(bench, true));
        assert!(outcome.check.is_ok(), "{:?}", outcome.check);
    }

    #[test]
    fn default_grid_has_the_documented_shape() {
        let grid = Grid::new(30);
        assert_eq!(grid.edges.iter().map(Vec::len).sum::<usize>(), 78_712);
        assert_eq!(grid.target, 22_344);
    }
}
