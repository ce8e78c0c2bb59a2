//! All-Pairs Shortest Path (Savina #17, `shared/savina.md` §3.17): a blocked
//! Floyd–Warshall where each of the (N/B)² block actors owns one B×B block of the
//! distance matrix and exchanges it with the blocks of its block-row and block-column
//! after every round k = 0…N−1, with no global barrier.
//!
//! Savina's global matrix becomes read-only `Arc`s: the graph is built outside the timed
//! region and each block copies its own part when it is created; every round's block is
//! a fresh `Arc<[i64]>` shared by the ten neighbours that read it (nobody mutates it).

use std::sync::Arc;
use std::sync::mpsc::{self, Sender};
use std::time::Instant;

use odeon::{Actor, ActorRef, Context, Handler, Message};
use savina::rng::PseudoRandom;
use savina::{Outcome, Params};

use super::finish::finish;
use crate::common;

/// The geometry every block shares.
#[derive(Clone, Copy)]
struct Shape {
    /// Nodes (N).
    n: usize,
    /// Block side (B).
    b: usize,
    /// Blocks per row (N/B).
    per_row: usize,
}

/// The neighbours: every other block of the same block-row and block-column.
struct Neighbors(Vec<ActorRef<Block>>);
impl Message for Neighbors {
    type Reply = ();
}

/// Starts the exchange.
struct Initial;
impl Message for Initial {
    type Reply = ();
}

/// A block's distances after round `k` (−1: the initial graph).
struct RoundResult {
    k: i64,
    block_id: usize,
    data: Arc<[i64]>,
}
impl Message for RoundResult {
    type Reply = ();
}

/// One block actor.
struct Block {
    shape: Shape,
    id: usize,
    row: usize,
    col: usize,
    /// The last round this block completed (−1: none yet).
    k: i64,
    /// `Initial` was handled. The neighbours' initial blocks may come first (they are
    /// other senders), and the first round must not run before our own block went out.
    started: bool,
    data: Arc<[i64]>,
    neighbors: Vec<ActorRef<Block>>,
    /// Round `k`'s blocks from the neighbours, by block id.
    current: Vec<Option<Arc<[i64]>>>,
    received: usize,
    /// Round `k + 1`'s blocks that came early. Savina keys its store by source id only;
    /// but a neighbour that does not depend on a slow block of ours can finish the next
    /// round first, and overwriting its previous block would lose a round (a deadlock),
    /// so the early ones wait here. A neighbour is never two rounds ahead: it needs our
    /// block of each round.
    early: Vec<Option<Arc<[i64]>>>,
    early_received: usize,
    report: Sender<(usize, Arc<[i64]>)>,
}

impl Actor for Block {}

impl Block {
    fn broadcast(&self) {
        for n in &self.neighbors {
            // A neighbour that finished its last round has exited; it needs nothing.
            let _ = n.tell(RoundResult {
                k: self.k,
                block_id: self.id,
                data: self.data.clone(),
            });
        }
    }

    /// Round `self.k`: d′(i,j) = min(d(i,j), d(i,k) + d(k,j)), all from the last round.
    fn compute(&mut self) {
        let Shape { b, .. } = self.shape;
        let k = self.k as usize;
        let (k_block, k_local) = (k / b, k % b);
        let own = &self.data;
        // Column k for our rows lives in our block-row, block-column k_block.
        let col_src = if k_block == self.col {
            own
        } else {
            self.stored(self.row * self.shape.per_row + k_block)
        };
        // Row k for our columns lives in our block-column, block-row k_block.
        let row_src = if k_block == self.row {
            own
        } else {
            self.stored(k_block * self.shape.per_row + self.col)
        };
        let mut next = vec![0i64; b * b];
        for i in 0..b {
            let dik = col_src[i * b + k_local];
            for j in 0..b {
                let direct = own[i * b + j];
                let via = dik + row_src[k_local * b + j];
                next[i * b + j] = direct.min(via);
            }
        }
        self.data = next.into();
    }

    /// Runs every round whose inputs are all in.
    fn advance(&mut self, cx: &mut Context<Self>) {
        while self.started && self.received == self.neighbors.len() {
            self.k += 1;
            self.compute();
            self.broadcast();
            // The early blocks become the round being collected.
            std::mem::swap(&mut self.current, &mut self.early);
            self.received = std::mem::take(&mut self.early_received);
            self.early.iter_mut().for_each(|slot| *slot = None);
            if self.k == self.shape.n as i64 - 1 {
                let _ = self.report.send((self.id, self.data.clone()));
                cx.stop();
                return;
            }
        }
    }

    fn stored(&self, id: usize) -> &Arc<[i64]> {
        self.current[id]
            .as_ref()
            .expect("every neighbour's block of the round is in")
    }
}

impl Handler<Neighbors> for Block {
    fn handle(&mut self, msg: Neighbors, _cx: &mut Context<Self>) {
        self.neighbors = msg.0;
    }
}

impl Handler<Initial> for Block {
    fn handle(&mut self, _: Initial, cx: &mut Context<Self>) {
        self.started = true;
        self.broadcast();
        // A lone block (N = B) has no neighbours to wait for.
        self.advance(cx);
    }
}

impl Handler<RoundResult> for Block {
    fn handle(&mut self, msg: RoundResult, cx: &mut Context<Self>) {
        if msg.k == self.k {
            self.current[msg.block_id] = Some(msg.data);
            self.received += 1;
        } else {
            self.early[msg.block_id] = Some(msg.data);
            self.early_received += 1;
        }
        self.advance(cx);
    }
}

/// The graph: complete, undirected, weights `PseudoRandom(N).nextInt(W) + 1`.
fn graph(n: usize, w: i32) -> Vec<i64> {
    let mut rng = PseudoRandom::new(n as i64);
    let mut g = vec![0i64; n * n];
    for i in 0..n {
        for j in i + 1..n {
            let weight = i64::from(rng.next_int_bounded(w) + 1);
            g[i * n + j] = weight;
            g[j * n + i] = weight;
        }
    }
    g
}

/// Sequential Floyd–Warshall, the reference.
fn floyd_warshall(mut d: Vec<i64>, n: usize) -> Vec<i64> {
    for k in 0..n {
        for i in 0..n {
            let dik = d[i * n + k];
            for j in 0..n {
                let via = dik + d[k * n + j];
                if via < d[i * n + j] {
                    d[i * n + j] = via;
                }
            }
        }
    }
    d
}

pub(crate) fn run(params: &Params) -> Outcome {
    let n: usize = params.get("n");
    let b: usize = params.get("b");
    let w: i32 = params.get("w");
    if n == 0 || b == 0 || !n.is_multiple_of(b) || w < 1 {
        let e = format!("need B dividing N and W >= 1 (N={n}, B={b}, W={w})");
        return Outcome::new(Default::default(), Err(e));
    }
    // Built at parse time in Savina: outside the timed region.
    let g: Arc<[i64]> = graph(n, w).into();
    let per_row = n / b;
    let shape = Shape { n, b, per_row };
    let blocks = per_row * per_row;

    let start = Instant::now();
    let system = common::system(params);
    let (tx, rx) = mpsc::channel();
    let refs: Vec<ActorRef<Block>> = (0..blocks)
        .map(|id| {
            let (row, col) = (id / per_row, id % per_row);
            let mut data = Vec::with_capacity(b * b);
            for i in 0..b {
                let from = (row * b + i) * n + col * b;
                data.extend_from_slice(&g[from..from + b]);
            }
            system.spawn(Block {
                shape,
                id,
                row,
                col,
                k: -1,
                started: false,
                data: data.into(),
                neighbors: Vec::new(),
                current: vec![None; blocks],
                received: 0,
                early: vec![None; blocks],
                early_received: 0,
                report: tx.clone(),
            })
        })
        .collect();
    drop(tx);
    for (id, block) in refs.iter().enumerate() {
        let (row, col) = (id / per_row, id % per_row);
        let neighbors = refs
            .iter()
            .enumerate()
            .filter(|&(o, _)| o != id && (o / per_row == row || o % per_row == col))
            .map(|(_, r)| r.clone())
            .collect();
        let _ = block.tell(Neighbors(neighbors));
    }
    for block in &refs {
        let _ = block.tell(Initial);
    }
    // Every block reports as it exits; the last report ends the run.
    let (elapsed, parts) = finish(system, &rx, blocks, start);
    drop(refs);
    let check = parts.and_then(|parts| validate(&parts, &g, shape, w));
    Outcome::new(elapsed, check)
}

/// Checks the blocks against sequential Floyd–Warshall, and the §5 figures at the
/// defaults.
fn validate(
    parts: &[(usize, Arc<[i64]>)],
    g: &[i64],
    shape: Shape,
    w: i32,
) -> Result<String, String> {
    let Shape { n, b, per_row } = shape;
    let mut d = vec![0i64; n * n];
    for (id, data) in parts {
        let (row, col) = (id / per_row, id % per_row);
        for i in 0..b {
            let to = (row * b + i) * n + col * b;
            d[to..to + b].copy_from_slice(&data[i * b..(i + 1) * b]);
        }
    }
    if d != floyd_warshall(g.to_vec(), n) {
        return Err("distances differ from sequential Floyd-Warshall".to_owned());
    }
    let sum: i64 = d.iter().sum();
    let max = d.iter().copied().max().unwrap_or(0);
    if (n, b, w) == (300, 50, 100) && (sum, max) != (401_700, 9) {
        return Err(format!("sum {sum}, max {max}: expected 401700 and 9"));
    }
    Ok(format!(
        "{n} nodes, equal to Floyd-Warshall; distance sum {sum}, max {max}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_run_validates() {
        let bench = savina::catalog::find("apsp").expect("in the catalog");
        let outcome = run(&Params::for_bench(bench, true));
        assert!(outcome.check.is_ok(), "{:?}", outcome.check);
    }

    #[test]
    fn default_graph_has_the_documented_distance_sum() {
        let d = floyd_warshall(graph(300, 100), 300);
        assert_eq!(d.iter().sum::<i64>(), 401_700);
        assert_eq!(d.iter().max(), Some(&9));
    }
}
