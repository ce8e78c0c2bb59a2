//! The rules of the world: pure functions shared by both implementations.
//!
//! Nothing here knows about actors or threads. A tick is two pure steps:
//! [`decide`] (one object, its own cell's [`CellSummary`] from the previous tick, the
//! static [`Field`], the seed and the tick) and [`resolve_cell`] (every object of one
//! cell with its intent, sorted by id). Both implementations call exactly these, so
//! they agree as long as each feeds them the same inputs: the previous tick's state of
//! the cell, in id order.

/// What an object is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Kind {
    /// Static; makes trees nearby regrow faster and attracts creatures.
    Planet,
    /// Regrows, is eaten, seeds new trees in its cell.
    Tree,
    /// Moves, eats trees, fights, reproduces, ages and dies.
    Creature,
}

/// One object's whole state. Small and `Copy`: it travels in messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Obj {
    /// Unique for the whole run: `0..objects` at the start, [`child_id`] for births.
    pub id: u64,
    /// Planet, tree or creature.
    pub kind: Kind,
    /// Column, `0..side`.
    pub x: u16,
    /// Row, `0..side`.
    pub y: u16,
    /// Food (trees) or life (creatures); planets keep 0.
    pub energy: u32,
    /// Ticks lived.
    pub age: u32,
}

/// What a creature wants to do this tick; trees and planets always [`Intent::Stay`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Intent {
    /// Do nothing but age.
    Stay,
    /// Step to a neighbouring cell (torus), by `dx, dy` in `-1..=1`.
    Move(i8, i8),
    /// Eat from the trees of its cell (lowest ids first).
    Eat,
    /// Fight the other fighters of its cell.
    Fight,
    /// Split: the child takes half the energy and stays in the cell.
    Reproduce,
}

/// What an object sees of its own cell, as it was at the end of the previous tick.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CellSummary {
    /// Trees in the cell.
    pub trees: u16,
    /// Creatures in the cell.
    pub creatures: u16,
    /// Sum of the trees' energy.
    pub tree_energy: u32,
}

impl CellSummary {
    /// Counts `obj` in the summary.
    pub fn add(&mut self, obj: &Obj) {
        match obj.kind {
            Kind::Tree => {
                self.trees += 1;
                self.tree_energy += obj.energy;
            }
            Kind::Creature => self.creatures += 1,
            Kind::Planet => {}
        }
    }
}

/// Most energy a tree holds.
pub const TREE_MAX: u32 = 50;
/// Energy a creature takes from trees per `Eat`.
pub const BITE: u32 = 6;
/// Energy a creature needs before it may reproduce.
pub const REPRODUCE_AT: u32 = 60;
/// Energy each loser of a fight gives the winner.
pub const FIGHT_STAKE: u32 = 10;
/// Planets attract creatures within this many cells (Chebyshev, on the torus).
pub const GRAVITY_RADIUS: i32 = 6;

/// The static part of the world: its size and, for every cell, where the nearest
/// planet is. Planets never move, so this is computed once and shared read-only.
#[derive(Clone, Debug)]
pub struct Field {
    /// Cells per row and per column (the world is a torus).
    pub side: u16,
    /// Cells per row and column of one region (a region actor's square); divides `side`.
    pub region_side: u16,
    /// The run's seed.
    pub seed: u64,
    /// Per cell (row-major): step towards the nearest planet in range, `(0, 0)` if none.
    pull: Vec<(i8, i8)>,
    /// Per cell: a planet is within 2 cells (trees regrow twice as fast).
    fertile: Vec<bool>,
}

impl Field {
    /// Row-major index of cell `(x, y)`.
    pub fn cell(&self, x: u16, y: u16) -> usize {
        y as usize * self.side as usize + x as usize
    }

    /// Region `(rx, ry)` that owns cell `(x, y)`.
    pub fn region_of(&self, x: u16, y: u16) -> (u16, u16) {
        (x / self.region_side, y / self.region_side)
    }

    /// Regions per row and per column.
    pub fn regions_per_side(&self) -> u16 {
        self.side / self.region_side
    }

    /// Whether trees at `(x, y)` regrow twice as fast (a planet within 2 cells).
    pub fn fertile(&self, x: u16, y: u16) -> bool {
        self.fertile[self.cell(x, y)]
    }

    /// Cells in the world.
    pub fn cells(&self) -> usize {
        self.side as usize * self.side as usize
    }
}

/// SplitMix64's finaliser: the one mixing function every random choice goes through.
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The random word of object `id` at `tick`: a function of `(seed, id, tick)` only.
pub fn roll(seed: u64, id: u64, tick: u64) -> u64 {
    mix(mix(seed ^ mix(id)) ^ tick.wrapping_mul(0xd6e8_feb8_6659_fd93))
}

/// The id of the child `parent` has at `tick` (a parent has at most one per tick).
/// A 64-bit hash: a collision needs ~2^32 births, far beyond any run here.
pub fn child_id(parent: u64, tick: u64) -> u64 {
    mix(parent ^ mix(tick ^ 0x5eed_b127))
}

/// The state hash of one object; a tick's checksum is the wrapping sum over objects,
/// so it does not depend on the order (or the region) objects are summed in.
pub fn obj_hash(o: &Obj) -> u64 {
    let kind = o.kind as u64;
    let packed = (o.x as u64) | ((o.y as u64) << 16) | (kind << 32);
    mix(o.id ^ mix(packed ^ mix(((o.energy as u64) << 32) | o.age as u64)))
}

fn wrap(v: u16, d: i8, side: u16) -> u16 {
    ((v as i32 + d as i32).rem_euclid(side as i32)) as u16
}

/// The static field of the world [`initial`] builds for `objects` and `seed`, computed
/// once per process and shared: a node that hosts regions of a world spread over
/// processes (`--nodes K`) builds each of its regions from it.
///
/// ```
/// use odeon_world::rules::{field_for, initial};
///
/// let a = field_for(400, 3);
/// assert!(std::sync::Arc::ptr_eq(&a, &field_for(400, 3))); // computed once
/// assert_eq!(a.side, initial(400, 3).0.side);
/// ```
pub fn field_for(objects: usize, seed: u64) -> std::sync::Arc<Field> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    type Fields = Mutex<HashMap<(usize, u64), Arc<Field>>>;
    static FIELDS: OnceLock<Fields> = OnceLock::new();
    let fields = FIELDS.get_or_init(Fields::default);
    let mut fields = fields.lock().unwrap_or_else(|e| e.into_inner());
    fields
        .entry((objects, seed))
        .or_insert_with(|| Arc::new(initial(objects, seed).0))
        .clone()
}

/// Builds the world for `objects` objects and `seed`: 1% planets (at least one), 40%
/// trees, the rest creatures, placed by hash. Returns the field and the objects sorted
/// by `(cell, id)`.
pub fn initial(objects: usize, seed: u64) -> (Field, Vec<Obj>) {
    const REGION: u16 = 8;
    // About two objects per cell, rounded up to whole regions.
    let want = ((objects as f64 / 2.0).sqrt().ceil() as u16).max(REGION);
    let side = want.div_ceil(REGION) * REGION;
    let planets = (objects / 100).max(1).min(objects);
    let trees = objects * 2 / 5;
    let mut objs: Vec<Obj> = (0..objects as u64)
        .map(|id| {
            let r = roll(seed, id, u64::MAX);
            let kind = if (id as usize) < planets {
                Kind::Planet
            } else if (id as usize) < planets + trees {
                Kind::Tree
            } else {
                Kind::Creature
            };
            let energy = match kind {
                Kind::Planet => 0,
                Kind::Tree => 10 + (r >> 40) as u32 % (TREE_MAX - 10),
                Kind::Creature => 20 + (r >> 40) as u32 % 30,
            };
            Obj {
                id,
                kind,
                x: (r % side as u64) as u16,
                y: ((r >> 16) % side as u64) as u16,
                energy,
                age: (r >> 50) as u32 % 50,
            }
        })
        .collect();
    let n = side as usize * side as usize;
    let mut best = vec![(i32::MAX, 0i8, 0i8); n];
    for p in objs.iter().filter(|o| o.kind == Kind::Planet) {
        for dy in -GRAVITY_RADIUS..=GRAVITY_RADIUS {
            for dx in -GRAVITY_RADIUS..=GRAVITY_RADIUS {
                let x = (p.x as i32 + dx).rem_euclid(side as i32) as usize;
                let y = (p.y as i32 + dy).rem_euclid(side as i32) as usize;
                let d = dx.abs().max(dy.abs());
                let slot = &mut best[y * side as usize + x];
                // Nearest planet wins; ties go to the planet seen first (lowest id).
                if d < slot.0 {
                    *slot = (d, -dx.signum() as i8, -dy.signum() as i8);
                }
            }
        }
    }
    let field = Field {
        side,
        // Larger regions where there are enough of them to keep the workers busy:
        // at 100,000 objects, 16 × 16 regions ran ~1.5× faster than 8 × 8 (fewer
        // region actors and border messages per object). The world is the same
        // either way: regions only partition it.
        region_side: if side.is_multiple_of(16) && side / 16 >= 8 {
            16
        } else {
            REGION
        },
        seed,
        pull: best.iter().map(|b| (b.1, b.2)).collect(),
        fertile: best.iter().map(|b| b.0 <= 2).collect(),
    };
    objs.sort_unstable_by_key(|o| (field.cell(o.x, o.y), o.id));
    (field, objs)
}

/// Whether [`decide`] can choose anything but [`Intent::Stay`] for this kind: only
/// creatures act; trees and planets always stay (their changes are the cell's
/// resolution). The actor world asks only these objects for an intent.
pub fn decides(kind: Kind) -> bool {
    kind == Kind::Creature
}

/// Chooses an object's intent for `tick` from its state, the summary of its cell at
/// the end of the previous tick, and its random word. Pure.
pub fn decide(o: &Obj, cell: CellSummary, field: &Field, tick: u64) -> Intent {
    if !decides(o.kind) {
        return Intent::Stay;
    }
    let r = roll(field.seed, o.id, tick);
    if o.energy >= REPRODUCE_AT && cell.creatures < 4 && r.is_multiple_of(4) {
        Intent::Reproduce
    } else if cell.tree_energy > 0 && o.energy < 80 && !(r >> 8).is_multiple_of(4) {
        Intent::Eat
    } else if cell.creatures >= 2 && (r >> 16).is_multiple_of(6) {
        Intent::Fight
    } else {
        let (px, py) = field.pull[field.cell(o.x, o.y)];
        if (px, py) != (0, 0) && (r >> 24).is_multiple_of(2) {
            Intent::Move(px, py)
        } else {
            let d = (r >> 32) % 9;
            Intent::Move((d % 3) as i8 - 1, (d / 3) as i8 - 1)
        }
    }
}

/// Where one object produced by [`resolve_cell`] came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The input at this index survived (with a new state).
    Survivor(usize),
    /// Born this tick.
    Born,
}

/// Resolves one cell for `tick`: `input` is every object of the cell at the end of the
/// previous tick with its intent, **sorted by id**. Pushes the survivors (new state,
/// possibly moved to a neighbouring cell) and the newborns to `out`; an input that is
/// not pushed died. Every conflict is settled by id or by energy, never by order of
/// arrival: eaters are served by increasing id from the lowest-id trees; the fighter
/// with the most energy (lowest id on a tie) wins.
pub fn resolve_cell(
    input: &[(Obj, Intent)],
    field: &Field,
    tick: u64,
    out: &mut Vec<(Obj, Origin)>,
) {
    debug_assert!(input.windows(2).all(|w| w[0].0.id < w[1].0.id));
    let mut state: Vec<Obj> = input.iter().map(|(o, _)| *o).collect();
    let mut alive = vec![true; input.len()];
    let trees: Vec<usize> = (0..state.len())
        .filter(|&i| state[i].kind == Kind::Tree)
        .collect();
    // Eat: lowest-id eater first, lowest-id trees first.
    for i in 0..input.len() {
        if input[i].1 != Intent::Eat {
            continue;
        }
        let mut want = BITE;
        for &t in &trees {
            let take = want.min(state[t].energy);
            state[t].energy -= take;
            state[i].energy += take;
            want -= take;
            if want == 0 {
                break;
            }
        }
    }
    // Fight: the strongest fighter takes a stake from every other; a loser left
    // without energy dies.
    let fighters: Vec<usize> = (0..input.len())
        .filter(|&i| input[i].1 == Intent::Fight)
        .collect();
    if fighters.len() >= 2 {
        let winner = *fighters
            .iter()
            .max_by_key(|&&i| (state[i].energy, std::cmp::Reverse(state[i].id)))
            .unwrap_or(&fighters[0]);
        for &i in &fighters {
            if i != winner {
                let stake = FIGHT_STAKE.min(state[i].energy);
                state[i].energy -= stake;
                state[winner].energy += stake;
                alive[i] = state[i].energy > 0;
            }
        }
    }
    let cell = field.cell(
        state.first().map_or(0, |o| o.x),
        state.first().map_or(0, |o| o.y),
    );
    let tree_count = trees.len();
    for (i, (_, intent)) in input.iter().enumerate() {
        if !alive[i] {
            continue;
        }
        let mut o = state[i];
        let r = roll(field.seed, o.id, tick);
        match o.kind {
            Kind::Planet => {}
            Kind::Tree => {
                // A tree eaten bare regrows from the root; it dies of old age.
                o.age += 1;
                if o.age > 400 + (mix(o.id) % 400) as u32 {
                    continue;
                }
                let regrow = if field.fertile[cell] { 2 } else { 1 };
                o.energy = (o.energy + regrow).min(TREE_MAX);
                if o.energy >= 40 && tree_count < 3 && (r >> 40).is_multiple_of(32) {
                    o.energy /= 2;
                    let child = Obj {
                        id: child_id(o.id, tick),
                        energy: 5,
                        age: 0,
                        ..o
                    };
                    out.push((o, Origin::Survivor(i)));
                    out.push((child, Origin::Born));
                    continue;
                }
            }
            Kind::Creature => {
                o.age += 1;
                o.energy = o.energy.saturating_sub(1);
                let lifespan = 150 + (mix(o.id) % 100) as u32;
                if o.energy == 0 || o.age > lifespan {
                    continue;
                }
                match *intent {
                    Intent::Move(dx, dy) => {
                        o.x = wrap(o.x, dx, field.side);
                        o.y = wrap(o.y, dy, field.side);
                    }
                    Intent::Reproduce if o.energy >= 2 => {
                        let half = o.energy / 2;
                        o.energy -= half;
                        let child = Obj {
                            id: child_id(o.id, tick),
                            energy: half,
                            age: 0,
                            ..o
                        };
                        out.push((o, Origin::Survivor(i)));
                        out.push((child, Origin::Born));
                        continue;
                    }
                    _ => {}
                }
            }
        }
        out.push((o, Origin::Survivor(i)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eaters_are_served_by_id_and_trees_lose_what_they_give() {
        let (field, _) = initial(100, 1);
        let tree = Obj {
            id: 5,
            kind: Kind::Tree,
            x: 0,
            y: 0,
            energy: 8,
            age: 0,
        };
        let a = Obj {
            id: 7,
            kind: Kind::Creature,
            x: 0,
            y: 0,
            energy: 10,
            age: 0,
        };
        let b = Obj { id: 9, ..a };
        let input = [(tree, Intent::Stay), (a, Intent::Eat), (b, Intent::Eat)];
        let mut out = Vec::new();
        resolve_cell(&input, &field, 1, &mut out);
        let get = |id| out.iter().find(|(o, _)| o.id == id).map(|(o, _)| *o);
        // a (lower id) takes a full bite, b what is left; then each pays 1 to live.
        assert_eq!(get(7).map(|o| o.energy), Some(10 + BITE - 1));
        assert_eq!(get(9).map(|o| o.energy), Some(10 + 8 - BITE - 1));
        let regrow = if field.fertile(0, 0) { 2 } else { 1 };
        assert_eq!(
            get(5).map(|o| o.energy),
            Some(regrow),
            "a tree eaten bare regrows"
        );
    }

    #[test]
    fn the_strongest_fighter_wins_and_ties_go_to_the_lowest_id() {
        let (field, _) = initial(100, 1);
        let a = Obj {
            id: 3,
            kind: Kind::Creature,
            x: 0,
            y: 0,
            energy: 30,
            age: 0,
        };
        let b = Obj { id: 4, ..a };
        let c = Obj {
            id: 8,
            energy: 5,
            ..a
        };
        let input = [(a, Intent::Fight), (b, Intent::Fight), (c, Intent::Fight)];
        let mut out = Vec::new();
        resolve_cell(&input, &field, 1, &mut out);
        let e: Vec<(u64, u32)> = out.iter().map(|(o, _)| (o.id, o.energy)).collect();
        assert_eq!(
            e,
            vec![(3, 30 + FIGHT_STAKE + 5 - 1), (4, 30 - FIGHT_STAKE - 1)]
        );
    }

    #[test]
    fn the_checksum_is_a_sum_and_ignores_order() {
        let (_, objs) = initial(300, 9);
        let fwd = objs.iter().fold(0u64, |s, o| s.wrapping_add(obj_hash(o)));
        let back = objs
            .iter()
            .rev()
            .fold(0u64, |s, o| s.wrapping_add(obj_hash(o)));
        assert_eq!(fwd, back);
        let mut moved = objs.clone();
        moved[0].energy += 1;
        let other = moved.iter().fold(0u64, |s, o| s.wrapping_add(obj_hash(o)));
        assert_ne!(fwd, other);
    }
}
