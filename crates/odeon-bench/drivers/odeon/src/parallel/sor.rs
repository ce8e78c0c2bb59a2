//! Successive Over-Relaxation (Savina #30, `shared/savina.md` §3.30): red-black SOR on
//! an s×s grid with one actor per cell. A Runner owns the left half of the columns and
//! a Peer the right half; the cells exchange values with their 4-neighbours and advance
//! in lockstep without any barrier (colour-1 cells go first: colour-0 cells make 100
//! updates, colour-1 cells 99), then report to their owner, which adds them up.
//!
//! The matrix comes from Savina's HEAD generator, `PseudoRandom(10101010)`, and is built
//! outside the timed region (Savina prepares it at parse time and resets it between
//! iterations). `reference` runs the same red-black sweeps sequentially to validate.

use std::sync::Arc;
use std::sync::mpsc::{self, Sender};
use std::time::Instant;

use odeon::{Actor, ActorRef, Context, Handler, Message, Recipient};
use savina::rng::PseudoRandom;
use savina::{Outcome, Params};

use super::exited::finish_exited;
use crate::common;

/// Savina's `DATA_SIZES`: `-n` indexes it.
const DATA_SIZES: [usize; 10] = [20, 80, 100, 120, 150, 200, 250, 300, 350, 400];
const JACOBI_NUM_ITER: u32 = 100;
const OMEGA: f64 = 1.25;
const RANDOM_SEED: i64 = 10101010;
/// gTotal for s = 20 with the HEAD generator (savina.md §3.30).
const EXPECTED_20: f64 = 4.162_686_342_332_719_4e-10;

/// Starts the Runner, and the Runner starts the Peer.
struct Boot;
/// A cell's neighbourhood, read from its owner's addressing array.
struct Start {
    max_iter: u32,
    actors: Arc<[ActorRef<SorCell>]>,
    /// The array's width and the global column of its column 0.
    width: usize,
    col0: usize,
}
struct Value(f64);
/// A cell's final value (or the Peer's aggregate) for its owner.
struct SorResult {
    value: f64,
    messages: u64,
}
/// The Peer's first column, for the Runner's addressing array.
struct Border(Vec<ActorRef<SorCell>>);

macro_rules! messages {
    ($($m:ty),*) => { $(impl Message for $m { type Reply = (); })* };
}
messages!(Boot, Start, Value, SorResult, Border);

/// What is shared by every cell and both owners.
#[derive(Clone, Copy)]
struct Grid {
    s: usize,
    part: usize,
}

struct SorCell {
    /// Held until this actor exits: Savina's actors live until they exit, while odeon's
    /// local GC collects an actor with no references left, and that can race with the
    /// last message sent through the last reference (its sender's final message just
    /// before the sender exits and drops it), leaving the message unhandled.
    me: Option<ActorRef<Self>>,
    row: usize,
    col: usize,
    s: usize,
    value: f64,
    colour: usize,
    owner: Recipient<SorResult>,
    neighbours: Vec<ActorRef<SorCell>>,
    started: bool,
    /// Values that came before `Start`, replayed after it.
    early: Vec<f64>,
    iter: u32,
    max_iter: u32,
    sum: f64,
    received: usize,
    sent: u64,
}
impl Actor for SorCell {
    fn started(&mut self, cx: &mut Context<Self>) {
        self.me = Some(cx.myself());
    }
}

impl SorCell {
    fn new(row: usize, col: usize, s: usize, value: f64, owner: Recipient<SorResult>) -> Self {
        Self {
            me: None,
            row,
            col,
            s,
            value,
            colour: (row + col + 1) % 2,
            owner,
            neighbours: Vec::new(),
            started: false,
            early: Vec::new(),
            iter: 0,
            max_iter: 0,
            sum: 0.0,
            received: 0,
            sent: 0,
        }
    }

    fn send_value(&mut self) {
        for n in &self.neighbours {
            let _ = n.tell(Value(self.value));
        }
        self.sent += self.neighbours.len() as u64;
    }

    fn on_value(&mut self, v: f64, cx: &mut Context<Self>) {
        if self.iter >= self.max_iter {
            return;
        }
        self.sum += v;
        self.received += 1;
        if self.received < self.neighbours.len() {
            return;
        }
        self.value = OMEGA / 4.0 * self.sum + (1.0 - OMEGA) * self.value;
        self.sum = 0.0;
        self.received = 0;
        self.send_value();
        self.iter += 1;
        if self.iter == self.max_iter {
            let _ = self.owner.tell(SorResult {
                value: self.value,
                messages: self.sent,
            });
            cx.stop();
        }
    }
}

impl Handler<Start> for SorCell {
    fn handle(&mut self, msg: Start, cx: &mut Context<Self>) {
        let (r, c, s) = (self.row, self.col, self.s);
        let at = |row: usize, col: usize| msg.actors[row * msg.width + col - msg.col0].clone();
        let mut neighbours = Vec::with_capacity(4);
        if r > 0 {
            neighbours.push(at(r - 1, c));
        }
        if r + 1 < s {
            neighbours.push(at(r + 1, c));
        }
        if c > 0 {
            neighbours.push(at(r, c - 1));
        }
        if c + 1 < s {
            neighbours.push(at(r, c + 1));
        }
        self.neighbours = neighbours;
        self.max_iter = msg.max_iter;
        self.started = true;
        if self.colour == 1 {
            self.send_value();
            self.iter = 1;
        }
        for v in std::mem::take(&mut self.early) {
            self.on_value(v, cx);
        }
    }
}

impl Handler<Value> for SorCell {
    fn handle(&mut self, Value(v): Value, cx: &mut Context<Self>) {
        if self.started {
            self.on_value(v, cx);
        } else {
            self.early.push(v);
        }
    }
}

/// Spawns the cells of columns `cols` as children of the owner, row-major.
fn spawn_cells<A: Actor>(
    cx: &mut Context<A>,
    owner: Recipient<SorResult>,
    grid: Grid,
    matrix: &[f64],
    cols: std::ops::Range<usize>,
) -> Vec<ActorRef<SorCell>> {
    let mut cells = Vec::with_capacity(grid.s * cols.len());
    for row in 0..grid.s {
        for col in cols.clone() {
            let value = matrix[row * grid.s + col];
            cells.push(cx.spawn(SorCell::new(row, col, grid.s, value, owner.clone())));
        }
    }
    cells
}

/// Owns columns 0…part−1; adds up every result and reports gTotal.
struct Runner {
    grid: Grid,
    matrix: Arc<[f64]>,
    cells: Vec<ActorRef<SorCell>>,
    total: f64,
    results: usize,
    messages: u64,
    report: Sender<(f64, u64)>,
}
impl Actor for Runner {}

impl Handler<Boot> for Runner {
    fn handle(&mut self, _: Boot, cx: &mut Context<Self>) {
        let Grid { s, part } = self.grid;
        let owner = cx.myself().recipient();
        self.cells = spawn_cells(cx, owner, self.grid, &self.matrix, 0..part);
        let border = (0..s)
            .map(|r| self.cells[r * part + part - 1].clone())
            .collect();
        let runner = cx.myself();
        let peer = cx.spawn(Peer {
            me: None,
            grid: self.grid,
            matrix: self.matrix.clone(),
            border,
            runner,
            total: 0.0,
            results: 0,
            messages: 0,
        });
        let _ = peer.tell(Boot);
    }
}

impl Handler<Border> for Runner {
    fn handle(&mut self, Border(column): Border, _: &mut Context<Self>) {
        let Grid { s, part } = self.grid;
        // The addressing array: our columns, then the Peer's first one.
        let width = part + 1;
        let mut actors = Vec::with_capacity(s * width);
        for (row, peer_cell) in column.into_iter().enumerate() {
            actors.extend_from_slice(&self.cells[row * part..(row + 1) * part]);
            actors.push(peer_cell);
        }
        let actors: Arc<[_]> = actors.into();
        for cell in &self.cells {
            let (max_iter, actors) = (JACOBI_NUM_ITER, actors.clone());
            let _ = cell.tell(Start {
                max_iter,
                actors,
                width,
                col0: 0,
            });
        }
    }
}

impl Handler<SorResult> for Runner {
    fn handle(&mut self, r: SorResult, cx: &mut Context<Self>) {
        self.total += r.value;
        self.messages += r.messages;
        self.results += 1;
        if self.results == self.grid.s * self.grid.part + 1 {
            let _ = self.report.send((self.total, self.messages));
            cx.stop();
        }
    }
}

/// Owns columns part…s−1; reports their sum to the Runner.
struct Peer {
    /// Held until the Peer exits, as each cell's (see [`SorCell`]).
    me: Option<ActorRef<Self>>,
    grid: Grid,
    matrix: Arc<[f64]>,
    /// The Runner's last column.
    border: Vec<ActorRef<SorCell>>,
    runner: ActorRef<Runner>,
    total: f64,
    results: usize,
    messages: u64,
}
impl Actor for Peer {
    fn started(&mut self, cx: &mut Context<Self>) {
        self.me = Some(cx.myself());
    }
}

impl Handler<Boot> for Peer {
    fn handle(&mut self, _: Boot, cx: &mut Context<Self>) {
        let Grid { s, part } = self.grid;
        let own = s - part;
        let owner = cx.myself().recipient();
        let cells = spawn_cells(cx, owner, self.grid, &self.matrix, part..s);
        // The addressing array: the Runner's border as column 0, then our columns.
        let width = own + 1;
        let mut actors = Vec::with_capacity(s * width);
        for (row, border_cell) in std::mem::take(&mut self.border).into_iter().enumerate() {
            actors.push(border_cell);
            actors.extend_from_slice(&cells[row * own..(row + 1) * own]);
        }
        let first = (0..s).map(|r| cells[r * own].clone()).collect();
        let _ = self.runner.tell(Border(first));
        let actors: Arc<[_]> = actors.into();
        for cell in &cells {
            let (max_iter, actors) = (JACOBI_NUM_ITER, actors.clone());
            let _ = cell.tell(Start {
                max_iter,
                actors,
                width,
                col0: part - 1,
            });
        }
    }
}

impl Handler<SorResult> for Peer {
    fn handle(&mut self, r: SorResult, cx: &mut Context<Self>) {
        self.total += r.value;
        self.messages += r.messages;
        self.results += 1;
        if self.results == self.grid.s * (self.grid.s - self.grid.part) {
            let (value, messages) = (self.total, self.messages);
            let _ = self.runner.tell(SorResult { value, messages });
            cx.stop();
        }
    }
}

/// `A[i][j] = nextDouble·1e−6`, row-major.
fn matrix(s: usize, mut next_double: impl FnMut() -> f64) -> Vec<f64> {
    (0..s * s).map(|_| next_double() * 1e-6).collect()
}

/// The same red-black sweeps in sequence; returns gTotal.
fn reference(a: &[f64], s: usize) -> f64 {
    let mut v = a.to_vec();
    let sweep = |v: &mut Vec<f64>, colour: usize| {
        for i in 0..s {
            for j in 0..s {
                if (i + j + 1) % 2 != colour {
                    continue;
                }
                let mut sum = 0.0;
                if i > 0 {
                    sum += v[(i - 1) * s + j];
                }
                if i + 1 < s {
                    sum += v[(i + 1) * s + j];
                }
                if j > 0 {
                    sum += v[i * s + j - 1];
                }
                if j + 1 < s {
                    sum += v[i * s + j + 1];
                }
                v[i * s + j] = OMEGA / 4.0 * sum + (1.0 - OMEGA) * v[i * s + j];
            }
        }
    };
    for t in 0..JACOBI_NUM_ITER {
        sweep(&mut v, 0);
        if t + 1 < JACOBI_NUM_ITER {
            sweep(&mut v, 1);
        }
    }
    v.iter().sum()
}

/// Equal up to the last few bits: the cells add their neighbours in arrival order.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs()
}

pub(crate) fn run(params: &Params) -> Outcome {
    let index: usize = params.get("n");
    let Some(&s) = DATA_SIZES.get(index) else {
        let e = format!("-n {index}: DATA_SIZES has {} entries", DATA_SIZES.len());
        return Outcome::new(Default::default(), Err(e));
    };
    let grid = Grid { s, part: s / 2 };
    // Savina's parse-time data, re-seeded every iteration: outside the timed region.
    let mut rng = PseudoRandom::new(RANDOM_SEED);
    let a: Arc<[f64]> = matrix(s, || rng.next_double()).into();

    let start = Instant::now();
    let system = common::system(params);
    let (tx, rx) = mpsc::channel();
    let runner = system.spawn(Runner {
        grid,
        matrix: a.clone(),
        cells: Vec::new(),
        total: 0.0,
        results: 0,
        messages: 0,
        report: tx,
    });
    let _ = runner.tell(Boot);
    let (elapsed, report) = finish_exited(system, &rx, 1, start);
    drop(runner);

    let check = report.and_then(|r| {
        let (total, messages) = r[0];
        let expected = reference(&a, s);
        if !close(total, expected) {
            return Err(format!(
                "gTotal {total:e}, sequential reference {expected:e}"
            ));
        }
        if s == 20 && !close(total, EXPECTED_20) {
            return Err(format!(
                "gTotal {total:e}, expected {EXPECTED_20:e} (savina.md §3.30)"
            ));
        }
        Ok(format!(
            "{s}x{s} grid, gTotal {total:e}, {messages} value messages"
        ))
    });
    Outcome::new(elapsed, check)
}

#[cfg(test)]
mod tests {
    use super::*;
    use savina::rng::JavaRandom;

    #[test]
    fn the_reference_reproduces_savinas_totals() {
        let mut rng = PseudoRandom::new(RANDOM_SEED);
        let head = reference(&matrix(20, || rng.next_double()), 20);
        assert!(close(head, EXPECTED_20), "{head:e}");
        // The original generator reproduces Savina's REF_VAL[0].
        let mut java = JavaRandom::new(RANDOM_SEED);
        let original = reference(&matrix(20, || java.next_double()), 20);
        assert!(close(original, 3.189_420_084_871_273_7e-6), "{original:e}");
    }
}
