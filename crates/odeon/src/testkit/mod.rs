//! Testing actors: probes, and a deterministic, seeded scheduler with virtual time.
//!
//! # Probes
//! - [`TestProbe<M>`]: an actor to hand out as an [`ActorRef`](crate::ActorRef) or a
//!   [`Recipient<M>`](crate::Recipient), whose messages the test then asserts on:
//!   [`expect_msg`](TestProbe::expect_msg), [`expect_msg_eq`](TestProbe::expect_msg_eq),
//!   [`expect_msg_where`](TestProbe::expect_msg_where),
//!   [`receive_n`](TestProbe::receive_n), [`fish_for`](TestProbe::fish_for),
//!   [`expect_no_msg`](TestProbe::expect_no_msg). An autopilot answers asks.
//! - [`TerminationProbe`]: watches an actor; [`expect_terminated`](TerminationProbe::expect_terminated)
//!   gives its [`StopReason`](crate::StopReason).
//! - [`eventually`]: polls a condition until it holds.
//!
//! An expectation that is not met panics with a message naming what was expected and
//! what came.
//!
//! # The deterministic scheduler
//! A [`Sim`] is a system with no thread: the test thread runs the actors one message
//! at a time, picking the next runnable actor with an RNG seeded by the test, so the
//! interleaving is a function of the seed. Time is virtual: timers and ask deadlines
//! fire only when the test moves the clock ([`Sim::advance`], [`Sim::run_for`]), or
//! when [`Sim::block_on`] finds nothing else to do. Running many seeds explores many
//! interleavings; a failing one prints `odeon testkit seed = N`, and
//! `ODEON_TEST_SEED=N` replays it ([`seeds`] and [`Sim::new`] obey it).
//!
//! Probes work on a `Sim` too: there an expectation runs the simulation until the
//! message comes, and its timeout is virtual time.
//!
//! The simulation runs the runtime's own turns (mailboxes, macro-steps, async
//! handlers, supervision): it is a scheduling mode, not a second runtime. The real
//! scheduler pays nothing for it (one branch on the path from threads outside the
//! pool, see `scheduler/mod.rs`).
//!
//! # Example
//! A pinger sends a burst of pings, a ponger answers each after a virtual delay; the
//! test checks the order, the virtual time, and that it does not depend on the seed.
//!
//! ```
//! use std::time::Duration;
//! use odeon::{Actor, ActorRef, Context, Handler, Message, Recipient};
//! use odeon::testkit::{Sim, TestProbe, seeds};
//!
//! #[derive(Debug, PartialEq)]
//! struct Pong(u32);
//! impl Message for Pong { type Reply = (); }
//!
//! struct Ping(u32);
//! impl Message for Ping { type Reply = (); }
//!
//! /// Answers each ping 10 ms (of virtual time) later.
//! struct Ponger { to: Recipient<Pong> }
//! impl Actor for Ponger {}
//! impl Handler<Ping> for Ponger {
//!     fn handle(&mut self, p: Ping, cx: &mut Context<Self>) {
//!         cx.send_after(Duration::from_millis(10), Reply(p.0));
//!     }
//! }
//! struct Reply(u32);
//! impl Message for Reply { type Reply = (); }
//! impl Handler<Reply> for Ponger {
//!     fn handle(&mut self, r: Reply, _: &mut Context<Self>) {
//!         self.to.tell(Pong(r.0)).unwrap();
//!     }
//! }
//!
//! for seed in seeds(20) {
//!     let sim = Sim::new(seed);
//!     let probe = TestProbe::<Pong>::new(&sim.handle());
//!     let ponger: ActorRef<Ponger> = sim.spawn(Ponger { to: probe.recipient() });
//!     for i in 0..3 {
//!         ponger.tell(Ping(i)).unwrap();
//!     }
//!     sim.run_until_idle();
//!     probe.expect_no_msg(Duration::from_millis(9));    // virtual: returns at once
//!     assert_eq!(sim.now(), Duration::from_millis(9));
//!     // One sender, one receiver: FIFO, whatever the seed.
//!     for i in 0..3 {
//!         probe.expect_msg_eq(&Pong(i), Duration::from_millis(1));
//!     }
//!     assert_eq!(sim.now(), Duration::from_millis(10));
//! }
//! ```

pub(crate) mod core;
mod inbox;
mod probe;
mod sim;

use std::time::{Duration, Instant};

pub use probe::{ProbeActor, TerminationProbe, TerminationWatcher, TestProbe};
pub use sim::{SEED_VAR, Sim};

/// The seeds to run a simulated test with: `0..n`, or only the one
/// [`SEED_VAR`] (`ODEON_TEST_SEED`) forces, to replay a failure.
///
/// ```
/// let all: Vec<u64> = odeon::testkit::seeds(3).collect();
/// # if std::env::var(odeon::testkit::SEED_VAR).is_err() {
/// assert_eq!(all, [0, 1, 2]);
/// # }
/// ```
pub fn seeds(n: u64) -> impl Iterator<Item = u64> {
    let forced = sim::forced_seed();
    let range = if forced.is_some() { 0..0 } else { 0..n };
    forced.into_iter().chain(range)
}

/// Polls `condition` (with growing pauses, up to 10 ms) until it holds.
///
/// For systems with worker threads; on a [`Sim`], run it and assert instead.
///
/// # Panics
/// If it still does not hold after `timeout`.
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicBool, Ordering};
/// use std::time::Duration;
///
/// let flag = Arc::new(AtomicBool::new(false));
/// let setter = flag.clone();
/// std::thread::spawn(move || setter.store(true, Ordering::SeqCst));
/// odeon::testkit::eventually(Duration::from_secs(5), || flag.load(Ordering::SeqCst));
/// ```
#[track_caller]
pub fn eventually(timeout: Duration, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now().checked_add(timeout);
    let mut pause = Duration::from_micros(50);
    loop {
        if condition() {
            return;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            panic!("eventually: the condition still did not hold after {timeout:?}");
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(10));
    }
}
