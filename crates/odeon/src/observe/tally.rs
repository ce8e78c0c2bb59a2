//! Per-actor counts for a live view (a node's dashboard): messages handled by actor
//! type and name, actors alive and restarts by type.
//!
//! A second switch beside the system's `observe` flag, off until a reader asks for
//! it ([`enable_actor_tally`]; `odeon-remote`'s dashboard does when its HTTP endpoint
//! starts): with it off, the hooks below cost one relaxed load inside the already-cold
//! observed paths. With it on, each handled message takes one uncontended-in-practice
//! lock and one or two hash lookups (no allocation once a name was seen).
//!
//! Process-wide, like the facade: every system of the process with `observe(true)`
//! counts into the same table.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;

static ON: AtomicBool = AtomicBool::new(false);

#[derive(Default)]
struct ByType {
    /// Messages handled by the actors of this type that have no name.
    unnamed: u64,
    /// Messages handled by named actors of this type, by name.
    named: HashMap<Box<str>, u64>,
    alive: i64,
    restarts: u64,
}

static TABLE: Mutex<Option<HashMap<&'static str, ByType>>> = Mutex::new(None);

/// Starts counting per actor (see [`actor_tallies`]); idempotent. Counting needs the
/// system's `observe(true)` as well: the hooks live in its observed paths.
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
    /// Messages handled since counting began by the type's actors without a name.
    pub unnamed_handled: u64,
    /// Messages handled since counting began by the type's named actors, by name,
    /// ordered by name.
    pub named_handled: Vec<(String, u64)>,
    /// Actors of the type spawned minus stopped since counting began (negative if
    /// actors spawned before it stopped since).
    pub alive: i64,
    /// Restarts by a supervisor since counting began.
    pub restarts: u64,
}

/// The counts so far, one entry per actor type seen, ordered by type name. Empty
/// unless [`enable_actor_tally`] was called and a system runs with `observe(true)`.
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
/// observe::enable_actor_tally();
/// let system = System::builder().observe(true).build();
/// let w = system.spawn_with(Worker, SpawnOptions::new().name("w1"));
/// system.block_on(w.ask(Job)).unwrap();
/// let t = observe::actor_tallies();
/// let worker = t.iter().find(|t| t.actor.ends_with("Worker")).unwrap();
/// assert_eq!(worker.named_handled, vec![("w1".to_owned(), 1)]);
/// assert_eq!(worker.alive, 1);
/// ```
pub fn actor_tallies() -> Vec<TypeTally> {
    let table = TABLE.lock();
    let Some(table) = table.as_ref() else {
        return Vec::new();
    };
    let mut out: Vec<TypeTally> = table
        .iter()
        .map(|(actor, t)| {
            let mut named: Vec<(String, u64)> =
                t.named.iter().map(|(n, c)| (n.to_string(), *c)).collect();
            named.sort();
            TypeTally {
                actor,
                unnamed_handled: t.unnamed,
                named_handled: named,
                alive: t.alive,
                restarts: t.restarts,
            }
        })
        .collect();
    out.sort_by(|a, b| a.actor.cmp(b.actor));
    out
}

#[inline]
pub(super) fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

fn with(actor: &'static str, f: impl FnOnce(&mut ByType)) {
    let mut table = TABLE.lock();
    f(table
        .get_or_insert_with(HashMap::new)
        .entry(actor)
        .or_default());
}

pub(super) fn handled(actor: &'static str, name: Option<&str>) {
    with(actor, |t| match name {
        None => t.unnamed += 1,
        Some(n) => match t.named.get_mut(n) {
            Some(c) => *c += 1,
            None => {
                t.named.insert(n.into(), 1);
            }
        },
    });
}

pub(super) fn alive(actor: &'static str, delta: i64) {
    with(actor, |t| t.alive += delta);
}

pub(super) fn restarted(actor: &'static str) {
    with(actor, |t| t.restarts += 1);
}
