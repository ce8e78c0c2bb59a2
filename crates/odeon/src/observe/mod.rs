//! Spans and metrics (cargo feature `observe`, off by default; see `docs/observe.md`).
//!
//! **Without the feature** none of this module is compiled and every hook that calls
//! it is behind `#[cfg(feature = "observe")]`: the default build contains no span, no
//! metric, no extra field and no extra branch, so it is the same code as before the
//! feature existed (free by construction, not by measurement).
//!
//! **With the feature but switched off** (`SystemBuilder::observe(false)`, the default)
//! each hook costs one load of a flag that never changes (the system's config for the
//! per-message hooks, a process-wide `AtomicBool` for the scheduler and ask hooks,
//! which see no config) and one branch that always goes the same way.
//!
//! **Switched on**, each handled message gets an `odeon.handle` span (INFO level;
//! fields `actor` = the actor's type name, `name` = its name if it was given one,
//! `message` = the message's type name) and metrics go to whatever recorder the
//! application installed through the [`metrics`] facade crate (none: they are
//! dropped). The names, all prefixed `odeon_`, are the constants below.
//!
//! The facade is process-wide: the scheduler and ask counters record as soon as one
//! system in the process was built with `observe(true)`.
//!
//! A message sent while a [`TraceContext`] is current (set by
//! [`TraceContext::in_scope`], or arrived from another node) carries it, and the
//! `odeon.handle` span that handles it gets W3C trace ids (`trace_id`, `span_id`,
//! `parent_span_id`) and makes its own context current, so that what the handler
//! sends continues the trace, locally and, with `odeon-remote`, on other nodes.
//!
//! ```
//! use metrics_util::debugging::{DebugValue, DebuggingRecorder};
//! use odeon::{Actor, Context, Handler, Message, System, observe};
//!
//! struct Greeter;
//! impl Actor for Greeter {}
//! struct Hello;
//! impl Message for Hello {
//!     type Reply = ();
//! }
//! impl Handler<Hello> for Greeter {
//!     fn handle(&mut self, _: Hello, _: &mut Context<Self>) {}
//! }
//!
//! // Any `metrics` recorder; here one that keeps the values for inspection.
//! let recorder = DebuggingRecorder::new();
//! let snapshotter = recorder.snapshotter();
//! recorder.install().unwrap();
//!
//! let system = System::builder().observe(true).build();
//! let greeter = system.spawn(Greeter);
//! greeter.tell(Hello).unwrap();
//! greeter.tell(Hello).unwrap();
//! system.block_on(greeter.ask(Hello)).unwrap();
//! // A stop discards what is still queued: the ask above made sure nothing is.
//! let stopped = greeter.wait_stopped();
//! greeter.stop();
//! system.block_on(stopped);
//!
//! let handled: u64 = snapshotter
//!     .snapshot()
//!     .into_vec()
//!     .into_iter()
//!     .filter(|(k, ..)| k.key().name() == observe::MESSAGES_HANDLED)
//!     .filter(|(k, ..)| k.key().labels().any(|l| l.value().ends_with("Greeter")))
//!     .map(|(.., v)| match v {
//!         DebugValue::Counter(n) => n,
//!         _ => 0,
//!     })
//!     .sum();
//! assert_eq!(handled, 3);
//! ```

mod handling;
mod live;
mod tally;
mod trace;
mod tree;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

pub(crate) use handling::{Handling, TurnObs};

pub use live::{ActorStatus, MailboxDepth, SupervisionTree, TreeNode};
pub(crate) use live::{Live, Probe};
pub use tally::{
    TypeTally, actor_tallies, actor_tally_enabled, enable_actor_tally, system_tallies,
};

pub use trace::{TraceContext, deliver_as};

/// Messages waiting in the mailbox, per actor type (histogram; label `actor`):
/// recorded as each user message starts being handled, the number of user messages
/// sent to the actor and not yet taken from its mailbox behind it (0: the mailbox was
/// empty after this one). Runtime notices (`Terminated`) are not counted.
pub const MAILBOX_DEPTH: &str = "odeon_mailbox_depth";
/// Messages handled, per actor type (counter; label `actor`).
pub const MESSAGES_HANDLED: &str = "odeon_messages_handled_total";
/// Time inside the handler, per actor type (histogram, seconds; label `actor`). For an
/// async handler, the part up to its first suspension. For a message the turn takes
/// right after handling another, measured from the end of that one (one clock read per
/// message: the runtime's per-message work in between is counted; `docs/observe.md`).
pub const HANDLER_SECONDS: &str = "odeon_handler_seconds";
/// Actors spawned, per actor type (counter; label `actor`).
pub const ACTORS_SPAWNED: &str = "odeon_actors_spawned_total";
/// Actors stopped for good, per actor type (counter; labels `actor`, `reason`:
/// `normal`, `unreferenced`, `panicked`, `failed`, `shutdown`, `killed` or `other`).
pub const ACTORS_STOPPED: &str = "odeon_actors_stopped_total";
/// Actors spawned minus actors stopped on this node, per actor type (gauge; label
/// `actor`). An actor that migrated away is still counted where it was spawned.
pub const ACTORS_ALIVE: &str = "odeon_actors_alive";
/// Restarts by a supervisor, per actor type (counter; label `actor`).
pub const RESTARTS: &str = "odeon_restarts_total";
/// Asks that ended with `AskError::Timeout` (counter).
pub const ASKS_TIMED_OUT: &str = "odeon_asks_timed_out_total";
/// Tasks a worker stole from another worker's queue (counter).
pub const STEALS: &str = "odeon_scheduler_steals_total";
/// Times a worker thread parked for want of work (counter).
pub const PARKS: &str = "odeon_scheduler_parks_total";
/// Turns that ended because the actor used its whole budget with mail left (counter).
pub const BUDGET_EXHAUSTED: &str = "odeon_scheduler_budget_exhausted_total";
/// Workers the monitor found stuck in one turn and worked around (counter).
pub const MONITOR_RESCUES: &str = "odeon_scheduler_monitor_rescues_total";
/// Changes of the number of workers taking shared work (counter).
pub const THROTTLE_DECISIONS: &str = "odeon_scheduler_throttle_decisions_total";
/// Workers taking shared work after the last throttle decision (gauge).
pub const ACTIVE_WORKERS: &str = "odeon_scheduler_active_workers";

/// Set once a system with `observe(true)` is built: the switch of the hooks that see
/// no system config (scheduler threads, asks).
static PROCESS_ON: AtomicBool = AtomicBool::new(false);

pub(crate) fn switch_on_process() {
    PROCESS_ON.store(true, Ordering::Relaxed);
    // Calibrates the handler-time clock here (under a millisecond, once per process),
    // not in the first handled message.
    let _ = quanta::Instant::now();
}

/// Whether the process-wide hooks record.
#[inline(always)]
pub(crate) fn process_on() -> bool {
    PROCESS_ON.load(Ordering::Relaxed)
}

/// Whether a system of this process was built with `observe(true)`: the switch of
/// hooks outside a system (a transport's metrics and trace context, for example).
///
/// ```
/// let _system = odeon::System::builder().observe(true).build();
/// assert!(odeon::observe::is_on());
/// ```
pub fn is_on() -> bool {
    process_on()
}

/// Whether `system` was built with `observe(true)` (so it keeps the live table that
/// [`system_tallies`], [`deepest_mailboxes`] and [`supervision_tree`] read).
///
/// ```
/// let on = odeon::System::builder().observe(true).build();
/// let off = odeon::System::new();
/// assert!(odeon::observe::observing(&on.handle()));
/// assert!(!odeon::observe::observing(&off.handle()));
/// ```
pub fn observing(system: &crate::SystemHandle) -> bool {
    system.shared.live.is_some()
}

/// The `n` actors of `system` with the most user messages waiting, deepest first
/// (ties by id), leaving out empty mailboxes: the same sent and taken counts as
/// [`MAILBOX_DEPTH`], read at the call. Empty unless the system was built with `observe(true)`. Costs a pass over
/// the system's live actors (one lock of its table, two relaxed loads per actor).
///
/// ```
/// use odeon::{Actor, Context, Handler, Message, SpawnOptions, System, observe};
///
/// struct Slow;
/// impl Actor for Slow {}
/// struct Block(std::sync::mpsc::Receiver<()>);
/// impl Message for Block { type Reply = (); }
/// impl Handler<Block> for Slow {
///     fn handle(&mut self, b: Block, _: &mut Context<Self>) { let _ = b.0.recv(); }
/// }
/// struct Job;
/// impl Message for Job { type Reply = (); }
/// impl Handler<Job> for Slow {
///     fn handle(&mut self, _: Job, _: &mut Context<Self>) {}
/// }
///
/// let system = System::builder().observe(true).build();
/// let slow = system.spawn_with(Slow, SpawnOptions::new().name("slow"));
/// let (release, wait) = std::sync::mpsc::channel();
/// slow.tell(Block(wait)).unwrap();
/// for _ in 0..5 {
///     slow.tell(Job).unwrap();
/// }
/// // The Block may still be queued: 5 or 6 messages are waiting.
/// let deepest = observe::deepest_mailboxes(&system.handle(), 3);
/// assert_eq!(deepest[0].name.as_deref(), Some("slow"));
/// assert!(deepest[0].depth >= 5);
/// release.send(()).unwrap();
/// ```
pub fn deepest_mailboxes(system: &crate::SystemHandle, n: usize) -> Vec<MailboxDepth> {
    match system.shared.live.as_ref() {
        Some(live) => live.deepest(n),
        None => Vec::new(),
    }
}

/// The supervision tree of `system`, bounded to `max_nodes` listed actors: every
/// actor with no supervisor is a root (top-level supervisors first), each
/// supervisor lists the children it supervises. Filled breadth first, so the bound
/// keeps the top levels; what does not fit is counted in `collapsed`. Empty unless
/// the system was built with `observe(true)`. Costs a pass over the system's live
/// actors and a sort.
///
/// ```
/// use odeon::{Actor, Strategy, SupervisorSpec, System, observe};
///
/// struct Worker;
/// impl Actor for Worker {}
///
/// let system = System::builder().observe(true).build();
/// let (sup, _kids) = system.supervise(SupervisorSpec::new(Strategy::OneForOne), |c| {
///     (c.spawn(|| Worker), c.spawn(|| Worker))
/// });
/// let tree = observe::supervision_tree(&system.handle(), 100);
/// let root = tree.roots.iter().find(|n| n.id == sup.id()).unwrap();
/// assert_eq!(root.children.len(), 2);
/// assert!(root.children.iter().all(|c| c.actor.ends_with("Worker")));
/// ```
pub fn supervision_tree(system: &crate::SystemHandle, max_nodes: usize) -> SupervisionTree {
    match system.shared.live.as_ref() {
        Some(live) => live.tree(max_nodes),
        None => SupervisionTree::default(),
    }
}

/// What an observed cell counts beside its mailbox (a field of every cell when the
/// feature is compiled in; touched only when the system observes).
#[derive(Default)]
pub(crate) struct CellObs {
    /// User messages pushed to the mailbox.
    sent: AtomicU64,
    /// User messages taken for handling (written by the actor's turn only).
    taken: AtomicU64,
    /// Messages handled (user messages and notices; written by the turn only), for
    /// the live table's per-actor counts (`live.rs`).
    pub(crate) handled: AtomicU64,
    /// Entries in `traces`: lets a delivery skip the lock when no message is traced.
    traced: AtomicUsize,
    /// The trace context of queued messages, by node address (removed on delivery),
    /// and the span id to handle it in if the transport chose it (`deliver_as`). A
    /// map, not a list: a deep mailbox of traced messages made a linear search
    /// quadratic.
    traces: crate::sync::Mutex<std::collections::HashMap<usize, Traced>>,
}

impl CellObs {
    /// A user message node is about to be pushed: count it, and note the sender's
    /// trace context if one is current.
    #[cold]
    #[inline(never)]
    pub(crate) fn sending(&self, node: usize) {
        self.sent.fetch_add(1, Ordering::Relaxed);
        if let Some(ctx) = TraceContext::current() {
            // A stale entry at a reused address (a traced message discarded, not
            // handled) is replaced, not counted twice.
            // Under `deliver_as` the transport chose the handling span's id.
            let traced = Traced {
                parent: ctx,
                exact: trace::exact(),
            };
            if self.traces.lock().insert(node, traced).is_none() {
                self.traced.fetch_add(1, Ordering::Release);
            }
        } else if self.traced.load(Ordering::Acquire) != 0 {
            // An untraced message at the address of a traced one that was discarded,
            // not handled (its entry was never taken): the stale entry would make this
            // message continue that trace. Only looked for while some entry exists.
            self.forget(node);
        }
    }

    /// Drops the entry of the message at `node`, if any.
    #[cold]
    fn forget(&self, node: usize) {
        if self.traces.lock().remove(&node).is_some() {
            self.traced.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// A message was handled (turn only).
    #[inline]
    pub(crate) fn count_handled(&self) {
        let n = self.handled.load(Ordering::Relaxed);
        self.handled.store(n + 1, Ordering::Relaxed);
    }

    /// User messages sent and not yet taken for handling, read from any thread
    /// (relaxed: a live view's figure, not a synchronisation).
    pub(crate) fn depth(&self) -> u64 {
        let taken = self.taken.load(Ordering::Relaxed);
        self.sent.load(Ordering::Relaxed).saturating_sub(taken)
    }

    /// A user message node is taken for handling: returns the depth behind it (for
    /// [`MAILBOX_DEPTH`]) and its trace context, if it carried one.
    pub(crate) fn taking(&self, node: usize) -> (u64, Option<Traced>) {
        let taken = self.taken.load(Ordering::Relaxed) + 1;
        self.taken.store(taken, Ordering::Relaxed);
        let depth = self.sent.load(Ordering::Relaxed).saturating_sub(taken);
        if self.traced.load(Ordering::Acquire) == 0 {
            return (depth, None);
        }
        let traced = self.traces.lock().remove(&node);
        if traced.is_some() {
            self.traced.fetch_sub(1, Ordering::Relaxed);
        }
        (depth, traced)
    }
}

/// The trace context a queued message carries.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Traced {
    /// The sender's context (the handling span's parent).
    parent: TraceContext,
    /// The handling span's id, if the transport chose it (`deliver_as`).
    exact: Option<u64>,
}

impl std::fmt::Debug for CellObs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CellObs").finish_non_exhaustive()
    }
}

#[cold]
#[inline(never)]
pub(crate) fn spawned(actor: &'static str) {
    metrics::counter!(ACTORS_SPAWNED, "actor" => actor).increment(1);
    metrics::gauge!(ACTORS_ALIVE, "actor" => actor).increment(1.0);
}

#[cold]
#[inline(never)]
pub(crate) fn stopped(actor: &'static str, reason: &crate::StopReason) {
    let reason = match reason {
        crate::StopReason::Normal => "normal",
        crate::StopReason::Unreferenced => "unreferenced",
        crate::StopReason::Panicked(_) => "panicked",
        crate::StopReason::Failed(_) => "failed",
        crate::StopReason::Shutdown => "shutdown",
        crate::StopReason::Killed => "killed",
        _ => "other",
    };
    metrics::counter!(ACTORS_STOPPED, "actor" => actor, "reason" => reason).increment(1);
    metrics::gauge!(ACTORS_ALIVE, "actor" => actor).decrement(1.0);
}

#[cold]
#[inline(never)]
pub(crate) fn restarted(actor: &'static str) {
    metrics::counter!(RESTARTS, "actor" => actor).increment(1);
}

#[cold]
#[inline(never)]
pub(crate) fn budget_exhausted() {
    metrics::counter!(BUDGET_EXHAUSTED).increment(1);
}

/// A process-wide event of the scheduler or of asks, by metric name.
#[cold]
#[inline(never)]
pub(crate) fn count(name: &'static str) {
    metrics::counter!(name).increment(1);
}

#[cold]
#[inline(never)]
pub(crate) fn throttled(active: usize) {
    metrics::counter!(THROTTLE_DECISIONS).increment(1);
    metrics::gauge!(ACTIVE_WORKERS).set(active as f64);
}

#[cfg(test)]
mod tests {
    use super::{CellObs, TraceContext};

    #[test]
    fn a_discarded_traced_message_leaves_no_context_for_the_next_at_its_address() {
        let obs = CellObs::default();
        let addr = 0x1000;
        // A traced message is queued, then discarded without being taken (a stop, a
        // failed move): its entry stays.
        TraceContext::new_root().in_scope(|| obs.sending(addr));
        // The allocator hands the same block to an untraced message.
        obs.sending(addr);
        let (_, traced) = obs.taking(addr);
        assert!(
            traced.is_none(),
            "the untraced message continued a stale trace"
        );
        assert_eq!(obs.traces.lock().len(), 0);

        // A traced message at the address replaces the stale entry (counted once).
        let first = TraceContext::new_root();
        let second = TraceContext::new_root();
        first.in_scope(|| obs.sending(addr));
        second.in_scope(|| obs.sending(addr));
        let (_, traced) = obs.taking(addr);
        let traced = traced.expect("the second message is traced");
        assert_eq!(traced.parent.trace_id, second.trace_id);
        assert_eq!(obs.traced.load(std::sync::atomic::Ordering::Relaxed), 0);
    }
}
