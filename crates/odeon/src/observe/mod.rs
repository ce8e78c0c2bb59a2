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
mod tally;
mod trace;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

pub(crate) use handling::{Handling, TurnObs};

pub use tally::{TypeTally, actor_tallies, actor_tally_enabled, enable_actor_tally};

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

/// What an observed cell counts beside its mailbox (a field of every cell when the
/// feature is compiled in; touched only when the system observes).
#[derive(Default)]
pub(crate) struct CellObs {
    /// User messages pushed to the mailbox.
    sent: AtomicU64,
    /// User messages taken for handling (written by the actor's turn only).
    taken: AtomicU64,
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
        }
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
    if tally::on() {
        tally::alive(actor, 1);
    }
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
    if tally::on() {
        tally::alive(actor, -1);
    }
}

#[cold]
#[inline(never)]
pub(crate) fn restarted(actor: &'static str) {
    metrics::counter!(RESTARTS, "actor" => actor).increment(1);
    if tally::on() {
        tally::restarted(actor);
    }
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
