//! Per-actor counts for a live view (a node's dashboard): messages handled by actor
//! type and name, actors alive and restarts by type.
//!
//! Every system built with `observe(true)` counts in its own live table
//! (`live.rs`): [`actor_tallies`] sums every such system of the process, and
//! [`system_tallies`] reads one. A handled message costs one relaxed counter
//! increment in its own cell; a spawn, stop or restart one lock of its system's table.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

use super::live::Live;
use crate::SystemHandle;

static ON: AtomicBool = AtomicBool::new(false);

/// Counts of one actor type.
#[derive(Default)]
pub(crate) struct ByType {
    /// Messages handled by the actors of this type that have no name.
    pub(crate) unnamed: u64,
    /// Messages handled by named actors of this type, by name.
    pub(crate) named: HashMap<Box<str>, u64>,
    pub(crate) alive: i64,
    pub(crate) restarts: u64,
}

impl ByType {
    pub(crate) fn add(&mut self, other: &ByType) {
        self.unnamed += other.unnamed;
        for (n, c) in &other.named {
            *self.named.entry(n.clone()).or_default() += c;
        }
        self.alive += other.alive;
        self.restarts += other.restarts;
    }
}

/// Kept for compatibility: counting no longer needs a switch (an observing system
/// always counts, at the cost of one relaxed increment per handled message in the
/// actor's own cell). Records that a reader asked, nothing more; idempotent.
pub fn enable_actor_tally() {
    ON.store(true, Ordering::Relaxed);
}

/// Whether [`enable_actor_tally`] was called in this process.
pub fn actor_tally_enabled() -> bool {
    ON.load(Ordering::Relaxed)
}

/// What [`actor_tallies`] returns for one actor type.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TypeTally {
    /// The actor type's name (`std::any::type_name`).
    pub actor: &'static str,
    /// Messages handled since the system was built by the type's actors without a name.
    pub unnamed_handled: u64,
    /// Messages handled since the system was built by the type's named actors, by name,
    /// ordered by name.
    pub named_handled: Vec<(String, u64)>,
    /// Actors of the type spawned minus stopped (actors that moved in with a
    /// migration are not counted as spawned).
    pub alive: i64,
    /// Restarts by a supervisor since the system was built.
    pub restarts: u64,
}

/// The counts so far of every system of the process built with `observe(true)`,
/// summed, one entry per actor type seen, ordered by type name; counted since each
/// system was built. [`system_tallies`] gives one system's.
///
/// ```
/// use odeon::{Actor, Context, Handler, Message, SpawnOptions, System, observe};
///
/// struct Worker;
/// impl Actor for Worker {}
/// struct Job;
/// impl Message for Job {
///     type Reply = ();
/// }
/// impl Handler<Job> for Worker {
///     fn handle(&mut self, _: Job, _: &mut Context<Self>) {}
/// }
///
/// let system = System::builder().observe(true).build();
/// let w = system.spawn_with(Worker, SpawnOptions::new().name("w1"));
/// system.block_on(w.ask(Job)).unwrap();
/// let t = observe::actor_tallies();
/// let worker = t.iter().find(|t| t.actor.ends_with("Worker")).unwrap();
/// assert_eq!(worker.named_handled, vec![("w1".to_owned(), 1)]);
/// assert_eq!(worker.alive, 1);
/// ```
pub fn actor_tallies() -> Vec<TypeTally> {
    let mut types = HashMap::new();
    for live in Live::all() {
        live.tally_into(&mut types);
    }
    TypeTally::from_types(types)
}

/// The counts of one system, as [`actor_tallies`] gives them for the process: empty
/// unless the system was built with `observe(true)`. Several systems in one process
/// (several nodes) each count their own actors.
///
/// ```
/// use odeon::{Actor, System, observe};
///
/// struct A;
/// impl Actor for A {}
/// struct B;
/// impl Actor for B {}
///
/// let one = System::builder().observe(true).build();
/// let two = System::builder().observe(true).build();
/// let _a = one.spawn(A);
/// let _b = two.spawn(B);
/// let types = |s: &System| -> Vec<&str> {
///     observe::system_tallies(&s.handle()).iter().map(|t| t.actor).collect()
/// };
/// assert!(types(&one).iter().all(|t| t.ends_with("::A")));
/// assert!(types(&two).iter().all(|t| t.ends_with("::B")));
/// ```
pub fn system_tallies(system: &SystemHandle) -> Vec<TypeTally> {
    let mut types = HashMap::new();
    if let Some(live) = system.shared.live.as_ref() {
        live.tally_into(&mut types);
    }
    TypeTally::from_types(types)
}
