//! The world as fine-grained actors: one actor per object, one per region, one
//! coordinator.
//!
//! A tick, barrier-synchronised:
//! 1. the coordinator tells `Start(t)` to the first region of each of a few *start
//!    chains* (two per worker); a region starts the next region of its chain once it
//!    has resolved `t` (step 4), so that only a few regions' objects are in flight, and
//!    in cache, at a time;
//! 2. a region sends each of its objects a `Step`: the state it committed for it at
//!    `t - 1` (applied first) and the summary of its cell at `t - 1` (summed up as the
//!    region filed its members for `t - 1`);
//! 3. each creature decides ([`rules::decide`]) and reports its state and intent to
//!    the region; a tree or a planet only takes its state, since its intent is always
//!    `Stay` ([`rules::decides`]) and the region files that itself;
//! 4. with every report in, the region sorts them by `(cell, id)` and resolves each
//!    cell ([`rules::resolve_cell`]); it spawns the
//!    newborns, stops the dead, and sends exactly one `Border` (the emigrants, perhaps
//!    none) to each of its eight neighbours;
//! 5. once resolved with its eight borders in, the region commits and sends the
//!    coordinator its share of the checksum (a wrapping sum, so arrival order does not
//!    matter); with every share in, the coordinator ends the tick and starts the next.
//!
//! No rule sees arrival order: reports are filed by slot and sorted by id, and the
//! checksum is commutative. So the checksums do not depend on the number of workers.

mod coordinator;
pub mod nodes;
mod object;
mod region;

use std::sync::Arc;
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use odeon::{ActorRef, System};

pub use coordinator::TickReport;
use coordinator::{Coordinator, Run};
use region::{Region, Wire};

use crate::WorldError;
use crate::rules::{self, Field};

/// The actor world: owns its [`System`].
///
/// ```
/// use odeon_world::actors::ActorWorld;
/// use odeon_world::shared::SharedWorld;
///
/// let mut actors = ActorWorld::new(300, 5, 2).unwrap();
/// let reports = actors.run(3, 0, |_| {}).unwrap();
/// let mut shared = SharedWorld::new(300, 5);
/// for r in &reports {
///     assert_eq!(r.checksum, shared.step()); // the same world, tick for tick
/// }
/// actors.shutdown();
/// ```
#[derive(Debug)]
pub struct ActorWorld {
    /// Set for a world on several nodes: the node and the children; dropped (children
    /// killed) after the system.
    cluster: Option<nodes::Cluster>,
    system: Option<System>,
    field: Arc<Field>,
    coordinator: ActorRef<Coordinator>,
    reports: Receiver<TickReport>,
    objects: usize,
}

/// How long one tick may take before [`ActorWorld::run`] gives up (a guard against a
/// hang, far above any real tick).
pub const TICK_GUARD: Duration = Duration::from_secs(600);

/// A system tuned for this workload (measured at 100,000 objects): an object gets one
/// message per tick, so an emptied mailbox is not worth lingering on; no handler
/// blocks, so spare workers for stuck ones only add threads to a loaded machine; and
/// every tick is a burst then a barrier, which the adaptive throttle's probes misread.
fn tuned_system(workers: usize) -> System {
    let mut builder = System::builder();
    if workers > 0 {
        builder = builder.workers(workers);
    }
    builder
        .linger_rounds(0)
        .max_spare_workers(0)
        .adaptive_workers(false)
        .build()
}

/// How many start chains the coordinator runs (see `region::Start`): enough for every
/// worker to have a region's objects to run, and a few spare for the tail of a region
/// (its trees' and planets' one-way steps) to overlap the next region's start.
fn start_chains(workers: usize) -> usize {
    let workers = if workers > 0 {
        workers
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    };
    // Measured at 100,000 objects on 2 workers (2026-11-28, CPU time, interleaved):
    // 2, 4 and 8 chains within noise of each other, all about 20% under starting
    // every region at once.
    2 * workers
}

impl ActorWorld {
    /// The world [`rules::initial`] builds for `objects` and `seed`, on a system with
    /// `workers` workers (0: one per core). Spawns one actor per object and region; the
    /// objects' actors are spawned by their regions before this returns.
    ///
    /// # Errors
    /// [`WorldError::Stalled`] if a region failed to spawn its objects.
    pub fn new(objects: usize, seed: u64, workers: usize) -> Result<Self, WorldError> {
        Self::build(objects, seed, workers, None)
    }

    /// The same world with its regions spread over `nodes` processes on loopback
    /// (odeon-remote nodes): this process is node 0 (the coordinator and the first
    /// rows of regions); it starts `nodes - 1` children by running `exe` with the
    /// arguments [`nodes::child_args`] gives, which must call [`nodes::serve`] (the
    /// `odeon-world` binary does, for `--node-child`). Regions are dealt out by rows;
    /// an object that moves into a region of another node is spawned there anew and
    /// its actor here stops. The checksums are those of [`ActorWorld::new`]. The
    /// children are killed when the world shuts down or is dropped.
    ///
    /// # Errors
    /// [`WorldError::Nodes`] if a child or a node cannot be started or linked;
    /// [`WorldError::Stalled`] if a region failed to spawn its objects.
    pub fn on_nodes(
        objects: usize,
        seed: u64,
        workers: usize,
        nodes: usize,
        exe: &std::path::Path,
    ) -> Result<Self, WorldError> {
        Self::build(objects, seed, workers, Some((nodes.max(1), exe)))
    }

    fn build(
        objects: usize,
        seed: u64,
        workers: usize,
        nodes: Option<(usize, &std::path::Path)>,
    ) -> Result<Self, WorldError> {
        let (field, objs) = rules::initial(objects, seed);
        let field = Arc::new(field);
        let system = tuned_system(workers);
        let n = field.regions_per_side();
        let at = |i: usize| ((i % n as usize) as u16, (i / n as usize) as u16);
        let count = n as usize * n as usize;
        let (cluster, regions) = match nodes {
            Some((k, exe)) if k > 1 => {
                let cluster = nodes::Cluster::start(&system, k, exe, workers)?;
                let regions = cluster.spawn_regions(&system, &field, objects, seed, count)?;
                (Some(cluster), regions)
            }
            _ => {
                let regions = (0..count)
                    .map(|i| system.spawn(Region::new(field.clone(), at(i))))
                    .collect();
                (None, regions)
            }
        };
        let mut by_region: Vec<Vec<rules::Obj>> = vec![Vec::new(); regions.len()];
        for o in objs {
            let (rx, ry) = field.region_of(o.x, o.y);
            by_region[ry as usize * n as usize + rx as usize].push(o);
        }
        let (tx, rx) = channel();
        let heads = start_chains(workers).min(regions.len());
        let coordinator = system.spawn(Coordinator::new(regions.clone(), heads, tx));
        let mut wired = Vec::with_capacity(regions.len());
        for (i, objects) in by_region.into_iter().enumerate() {
            let (x, y) = at(i);
            let mut neighbours = Vec::with_capacity(8);
            for dy in [-1i32, 0, 1] {
                for dx in [-1i32, 0, 1] {
                    if (dx, dy) == (0, 0) {
                        continue;
                    }
                    let nx = (x as i32 + dx).rem_euclid(n as i32) as u16;
                    let ny = (y as i32 + dy).rem_euclid(n as i32) as u16;
                    neighbours.push((
                        (nx, ny),
                        regions[ny as usize * n as usize + nx as usize].clone(),
                    ));
                }
            }
            let wire = Wire {
                neighbours,
                coordinator: coordinator.clone(),
                // Chain `i % heads`: regions `i, i + heads, i + 2 * heads, ...`.
                chain_next: regions.get(i + heads).cloned(),
                objects,
            };
            wired.push(regions[i].ask(wire).timeout(TICK_GUARD));
        }
        // Wait until every object's actor exists, so that a run's timing, like the
        // shared world's, counts ticks only.
        for ask in wired {
            system.block_on(ask).map_err(|_| WorldError::Stalled)?;
        }
        Ok(ActorWorld {
            cluster,
            system: Some(system),
            field,
            coordinator,
            reports: rx,
            objects,
        })
    }

    /// The static field (size, seed, planets' pull).
    pub fn field(&self) -> &Field {
        &self.field
    }

    /// Objects the world started with.
    pub fn initial_objects(&self) -> usize {
        self.objects
    }

    /// Runs `ticks` ticks, asking for every object's state every `frame_every` ticks
    /// (0: never), calling `on_tick` as each tick ends; returns every tick's report.
    pub fn run(
        &mut self,
        ticks: u64,
        frame_every: u64,
        mut on_tick: impl FnMut(&TickReport),
    ) -> Result<Vec<TickReport>, WorldError> {
        self.coordinator
            .tell(Run { ticks, frame_every })
            .map_err(|_| WorldError::Stalled)?;
        let mut out = Vec::with_capacity(ticks as usize);
        for _ in 0..ticks {
            let report = self
                .reports
                .recv_timeout(TICK_GUARD)
                .map_err(|_| WorldError::Stalled)?;
            on_tick(&report);
            out.push(report);
        }
        Ok(out)
    }

    /// Actors alive once the system is quiescent (waits up to [`TICK_GUARD`]): after a
    /// run, one per object, one per region and the coordinator — the dead are stopped,
    /// not leaked. `None` if the system did not become quiescent in time. On several
    /// nodes ([`ActorWorld::on_nodes`]) this counts this process's actors only.
    pub fn live_actors(&self) -> Option<u64> {
        let system = self.system.as_ref()?;
        system
            .wait_quiescent(Some(TICK_GUARD))
            .then(|| system.live_actors())
    }

    /// Stops every actor.
    pub fn shutdown(mut self) {
        if let Some(system) = self.system.take() {
            system.shutdown();
        }
        self.cluster.take();
    }
}

impl Drop for ActorWorld {
    fn drop(&mut self) {
        if let Some(system) = self.system.take() {
            system.shutdown();
        }
    }
}
