//! Every tunable of the runtime, in one place, with its unit.
//!
//! [`SystemBuilder`](crate::SystemBuilder) overrides the ones a user may want to change;
//! those are public, as the documented defaults of its methods. The others are internal
//! (crate-private) and listed here so that every tunable is in one place.

use std::time::Duration;

/// Messages an actor may handle in one activation before it goes to the back of a run
/// queue (fairness). Unit: messages.
pub const BUDGET: usize = 64;

/// Consecutive activations a worker may take from its "just messaged" slot before it
/// looks at its run queue first (stops two actors ping-ponging through the slot from
/// starving the rest). Unit: activations.
pub(crate) const SLOT_STREAK_LIMIT: u32 = 32;

/// A worker looks at the shared injector queue first once every this many activations,
/// so work sent from outside the pool is never starved by local work. Unit: activations.
pub(crate) const INJECTOR_INTERVAL: u32 = 61;

/// A worker that stays in one activation longer than this is considered stuck, and the
/// fairness monitor brings in a spare worker if other work is waiting. Unit: time.
pub const STALL_THRESHOLD: Duration = Duration::from_millis(10);

/// How often the fairness monitor looks at the workers while any is busy. Unit: time.
pub const MONITOR_INTERVAL: Duration = Duration::from_millis(2);

/// Whether the monitor benches workers while fewer handle more messages per second
/// (`scheduler/throttle.rs`). Unit: on/off.
pub const ADAPTIVE_WORKERS: bool = true;

/// Upper bound on spare workers the fairness monitor may start. Unit: threads.
pub const MAX_SPARE_WORKERS: usize = 8;

/// Rounds an idle worker spends looking for work, as a *searcher*, before it parks.
/// A sender that finds a searcher skips the futex wake-up, which costs microseconds, far
/// more than a message (see `scheduler/mod.rs`). Unit: rounds of 16 spin-loop hints
/// plus a look at the run queues. What a round costs depends on the CPU: a `PAUSE`
/// takes 26 ns on the project machine (AMD EPYC), so a round is about 420 ns there and
/// the whole search about 85 µs.
pub(crate) const SPIN_BEFORE_PARK: u32 = 200;

/// Rounds an actor whose mailbox ran dry spends waiting for its next message before it
/// gives up its turn, if its thread has nothing else to run. Going idle and being
/// rescheduled costs a run-queue round trip and sometimes a thread wake-up; this
/// avoids it for a steady stream (Counting: bench `core` of odeon-microbench). Unit: rounds of
/// `LINGER_SPINS` spin-loop hints. On the project machine a hint (`PAUSE`) takes 26 ns,
/// so a round is about 420 ns and the whole linger about 27 µs; on CPUs with a cheaper
/// `PAUSE` it is shorter.
///
/// Why this long: shorter lingers measured worse side by side (2026-11-25, 9
/// interleaved runs, `docs/bench/linger-2026-11-25.md`): 8 rounds took Chameneos from
/// 49 to 153 ms and Big from 199 to 215 ms; 16 rounds, 140 and 211 ms.
pub const LINGER_ROUNDS: u32 = 64;

/// Spin-loop hints per linger round. Unit: `std::hint::spin_loop` calls.
pub(crate) const LINGER_SPINS: u32 = 16;

/// Threads of odeon's own tokio runtime (timers, streams, transports). A second thread
/// measured no gain on remote round trips. Unit: threads.
pub const IO_THREADS: usize = 1;

/// How long `System::block_on` spins for a wake-up before it parks the caller
/// (`SystemBuilder::block_on_spin`). Zero: it parks at once. Off by default: on the
/// project's 2-vCPU VM a spinning caller takes a core the other threads of a round trip
/// may need (issue 19, `docs/bench/remote-latency-2026-11-28b.md`). Unit: time.
pub const BLOCK_ON_SPIN: Duration = Duration::ZERO;

/// Default deadline of an `ask` when none is given. Unit: time.
pub const ASK_TIMEOUT: Duration = Duration::from_secs(5);

/// Default lease of an atomic reservation (`ActorRef::reserve`), counted from the
/// moment it is granted: a holder that never releases is cut off after it. Unit: time.
pub const RESERVATION_LEASE: Duration = Duration::from_secs(5);

/// How long a graceful shutdown waits for every actor to stop before it gives up on the
/// ones that do not (an actor stuck in an endless loop). Unit: time.
pub const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(10);

/// How long shutdown waits for a pool thread that is still inside a turn before it
/// detaches it (an actor stuck in an endless handler). Unit: time.
pub(crate) const STUCK_THREAD_GRACE: Duration = Duration::from_secs(1);

/// Times an activation retries a pop that saw a producer half-way through its push
/// before it requeues itself instead of spinning. Unit: retries.
pub(crate) const PUSH_IN_PROGRESS_RETRIES: u32 = 16;

/// Quiescence waiters re-check at least this often even without a wake-up. Unit: time.
pub(crate) const QUIESCENCE_POLL: Duration = Duration::from_millis(5);
