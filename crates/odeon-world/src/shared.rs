//! The same rules in shared memory: rayon over arrays, double-buffered per tick.
//!
//! The world is one `Vec<Obj>` sorted by `(cell, id)` (the *front* buffer, the previous
//! tick's state, only read during a tick). A tick computes the cell summaries and every
//! intent from it in parallel, resolves every cell in parallel into per-row output, and
//! gathers the result into the *back* buffer, which is sorted and swapped in.

use rayon::prelude::*;

use crate::rules::{self, CellSummary, Field, Intent, Obj};

/// The shared-memory world.
///
/// ```
/// use odeon_world::shared::SharedWorld;
///
/// let mut world = SharedWorld::new(200, 7);
/// let a = world.step();
/// let mut again = SharedWorld::new(200, 7);
/// assert_eq!(again.step(), a); // deterministic given the seed
/// assert_eq!(world.tick(), 1);
/// ```
#[derive(Debug)]
pub struct SharedWorld {
    field: Field,
    front: Vec<Obj>,
    back: Vec<Obj>,
    tick: u64,
}

impl SharedWorld {
    /// The world [`rules::initial`] builds for `objects` and `seed`.
    pub fn new(objects: usize, seed: u64) -> Self {
        let (field, front) = rules::initial(objects, seed);
        SharedWorld {
            field,
            front,
            back: Vec::new(),
            tick: 0,
        }
    }

    /// Ticks done so far.
    pub fn tick(&self) -> u64 {
        self.tick
    }

    /// The objects, sorted by `(cell, id)`.
    pub fn objects(&self) -> &[Obj] {
        &self.front
    }

    /// The static field (size, seed, planets' pull).
    pub fn field(&self) -> &Field {
        &self.field
    }

    /// Runs one tick and returns its checksum (see [`rules::obj_hash`]).
    pub fn step(&mut self) -> u64 {
        self.tick += 1;
        let tick = self.tick;
        let field = &self.field;
        let front = &self.front;
        let side = field.side as usize;
        // Start of every cell's run in `front` (sorted by cell), plus the end.
        let mut starts = vec![0usize; field.cells() + 1];
        for o in front {
            starts[field.cell(o.x, o.y) + 1] += 1;
        }
        for c in 0..field.cells() {
            starts[c + 1] += starts[c];
        }
        let summaries: Vec<CellSummary> = (0..field.cells())
            .into_par_iter()
            .map(|c| {
                let mut s = CellSummary::default();
                front[starts[c]..starts[c + 1]]
                    .iter()
                    .for_each(|o| s.add(o));
                s
            })
            .collect();
        let intents: Vec<(Obj, Intent)> = front
            .par_iter()
            .map(|o| {
                (
                    *o,
                    rules::decide(o, summaries[field.cell(o.x, o.y)], field, tick),
                )
            })
            .collect();
        let rows: Vec<Vec<Obj>> = (0..side)
            .into_par_iter()
            .map(|y| {
                let mut row = Vec::new();
                let mut out = Vec::new();
                for c in y * side..(y + 1) * side {
                    out.clear();
                    rules::resolve_cell(&intents[starts[c]..starts[c + 1]], field, tick, &mut out);
                    row.extend(out.iter().map(|(o, _)| *o));
                }
                row
            })
            .collect();
        self.back.clear();
        for row in rows {
            self.back.extend(row);
        }
        self.back
            .par_sort_unstable_by_key(|o| (field.cell(o.x, o.y), o.id));
        std::mem::swap(&mut self.front, &mut self.back);
        self.front
            .par_iter()
            .map(rules::obj_hash)
            .reduce(|| 0, u64::wrapping_add)
    }
}
