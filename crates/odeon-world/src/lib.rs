//! # odeon-world: a living world of fine-grained actors against shared memory
//!
//! A 2-D torus of planets, trees and creatures that move, eat, fight, reproduce and
//! die (issue 18, after ActorFoundry's *Quantum* case study). It runs two ways on the
//! very same rules ([`rules`]):
//! - [`actors`]: every object is an odeon actor; a grid of region actors answers for
//!   their cells and resolves conflicts; a coordinator synchronises ticks. Objects are
//!   spawned when born and stopped when they die, under load.
//! - [`shared`]: rayon over a sorted array, double-buffered per tick.
//!
//! Both end every tick with the same checksum, whatever the number of workers.
//!
//! ## Why it is deterministic
//! - **The rules are pure.** An object's intent at tick `t` is a function of its own
//!   state at `t - 1`, the summary of its cell at `t - 1` (trees, their energy,
//!   creatures), the static planet field, and a random word `roll(seed, id, t)`. It
//!   never reads state written during tick `t`.
//! - **Conflicts are settled at the cell, by id, not by arrival.** A cell is resolved
//!   from its objects at `t - 1` with their intents, sorted by id: eaters are served
//!   by increasing id from the lowest-id trees; the fighter with the most energy
//!   (lowest id on a tie) takes a stake from every other. A region files reports by
//!   slot and sorts them by `(cell, id)` before resolving.
//! - **Births get ids from their parent and the tick** ([`rules::child_id`]), so the
//!   same child gets the same id in both implementations.
//! - **Moves are one cell and take effect at the end of the tick**, so a region only
//!   hands emigrants to its eight neighbours, and the next tick's summaries see
//!   everyone in place.
//! - **Ticks are barriers.** A region commits a tick only when it resolved its own
//!   cells and heard from all eight neighbours (one `Border` each, maybe empty); the
//!   coordinator starts `t + 1` only when every region committed `t`.
//! - **The checksum commutes**: a wrapping sum of per-object hashes
//!   ([`rules::obj_hash`]), so neither region order nor object order matters.
//!
//! ```
//! use odeon_world::shared::SharedWorld;
//!
//! let mut world = SharedWorld::new(500, 42);
//! let sums: Vec<u64> = (0..5).map(|_| world.step()).collect();
//! assert_eq!(sums.len(), 5);
//! ```

pub mod actors;
pub mod png;
pub mod rules;
pub mod shared;

use std::path::PathBuf;

/// What can go wrong running a world.
#[derive(Debug, thiserror::Error)]
pub enum WorldError {
    /// The actor world stopped reporting ticks (an actor failed, or a tick took longer
    /// than the guard).
    #[error("the actor world stopped reporting ticks")]
    Stalled,
    /// A frame could not be written.
    #[error("cannot write {0}: {1}")]
    Io(PathBuf, #[source] std::io::Error),
    /// A world on several nodes (`--nodes K`) could not start its processes or link
    /// its nodes.
    #[error("nodes: {0}")]
    Nodes(String),
    /// The PNG encoder failed.
    #[error("png: {0}")]
    Png(#[from] ::png::EncodingError),
}
