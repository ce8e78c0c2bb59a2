//! [`Sim`]: a system run by the deterministic scheduler (see `core.rs`).

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use super::core::SimCore;
use crate::cell::SpawnOptions;
use crate::supervision::{Children, Supervisor, SupervisorSpec};
use crate::system::Shared;
use crate::{Actor, ActorRef, System, SystemBuilder, SystemHandle};

/// The environment variable that forces the seed of every [`Sim`] (and of
/// [`seeds`](super::seeds)), to replay a failing run.
pub const SEED_VAR: &str = "ODEON_TEST_SEED";

/// The seed forced by [`SEED_VAR`], if it is set to a number.
pub(crate) fn forced_seed() -> Option<u64> {
    let value = std::env::var(SEED_VAR).ok()?;
    match value.trim().parse() {
        Ok(seed) => Some(seed),
        Err(_) => {
            tracing::warn!(%value, "{SEED_VAR} is not a number; ignored");
            None
        }
    }
}

/// A system with no worker thread, run one message at a time by the calling thread,
/// in an order chosen by a seeded RNG, on a virtual clock.
///
/// - [`Sim::step`] handles one message of one runnable actor, chosen by the RNG among
///   the runnable ones: the same seed gives the same interleaving, another seed
///   (usually) another.
/// - [`Sim::run_until_idle`] steps until nothing is runnable.
/// - [`Sim::advance`] moves the virtual clock, firing the timers of
///   [`Context::send_after`](crate::Context::send_after) and
///   [`send_interval`](crate::Context::send_interval) and the ask deadlines that fall
///   due, in due order; [`Sim::run_for`] also runs the actors between them.
/// - [`Sim::block_on`] runs the actors until a future (an ask) completes, moving the
///   clock to the next timer whenever nothing is runnable.
///
/// The runtime's guarantees hold (macro-step, FIFO per sender–receiver pair,
/// supervision): the turns are the runtime's own code. Async handlers are polled by
/// their actor's turn, as always, and a wake-up makes the actor runnable again.
///
/// If the thread panics while a `Sim` is alive (a failed assertion), its drop prints
/// `odeon testkit seed = N`; setting [`SEED_VAR`] to `N` replays that run.
///
/// Supervisors' restart windows ([`SupervisorSpec::max_restarts`]) are measured on
/// the virtual clock too. What it does not cover: tokio timers and I/O (the system's
/// [`io`](crate::SystemHandle::io) runtime is never driven; a handler that awaits a
/// tokio sleep under a `Sim` panics, as outside any runtime).
/// [`SpawnOptions::blocking`](crate::SpawnOptions::blocking) is ignored: every actor
/// runs on the test thread. A timer's message that finds a bounded mailbox full is
/// dropped (a threaded system's timer waits for room).
///
/// Everything here is deterministic as long as the actors are only driven from the
/// test thread: a message sent from another thread is scheduled when it arrives.
///
/// ```
/// use std::time::Duration;
/// use odeon::{Actor, Context, Handler, Message};
/// use odeon::testkit::Sim;
///
/// struct Greeter;
/// impl Actor for Greeter {}
/// struct Greet(&'static str);
/// impl Message for Greet { type Reply = String; }
/// impl Handler<Greet> for Greeter {
///     fn handle(&mut self, g: Greet, _: &mut Context<Self>) -> String {
///         format!("hello, {}", g.0)
///     }
/// }
///
/// let sim = Sim::new(7);
/// let greeter = sim.spawn(Greeter);
/// assert_eq!(sim.block_on(greeter.ask(Greet("sim"))).unwrap(), "hello, sim");
/// assert_eq!(sim.now(), Duration::ZERO);   // nothing waited
/// ```
pub struct Sim {
    core: Arc<SimCore>,
    /// `None` only after a drop during a panic leaked it (see `Drop`).
    system: Option<System>,
    handle: SystemHandle,
}

impl std::fmt::Debug for Sim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sim")
            .field("seed", &self.seed())
            .field("now", &self.now())
            .field("runnable", &self.core.runnable())
            .finish_non_exhaustive()
    }
}

impl Sim {
    /// A simulation with this seed, or with the one [`SEED_VAR`] forces.
    ///
    /// # Panics
    /// If the OS refuses the I/O driver of the idle current-thread runtime that backs
    /// [`SystemHandle::io`](crate::SystemHandle::io) in a simulation (it starts no thread).
    pub fn new(seed: u64) -> Self {
        Self::with_builder(seed, SystemBuilder::new())
    }

    /// A simulation with the settings of `builder` that make sense without threads
    /// (the ask timeout, the shutdown timeout). Its budget is one message per turn,
    /// so that every message is a scheduling point, and actors never linger.
    ///
    /// ```
    /// use std::time::Duration;
    /// let sim = odeon::testkit::Sim::with_builder(
    ///     1,
    ///     odeon::System::builder().ask_timeout(Duration::from_secs(30)),
    /// );
    /// # drop(sim);
    /// ```
    pub fn with_builder(seed: u64, builder: SystemBuilder) -> Self {
        let seed = forced_seed().unwrap_or(seed);
        let config = builder.workers(1).budget(1).linger_rounds(0).into_config();
        let core = Arc::new(SimCore::new(seed));
        let system = System::deterministic(config, core.clone());
        let handle = system.handle();
        Self {
            core,
            system: Some(system),
            handle,
        }
    }

    fn shared(&self) -> &Arc<Shared> {
        &self.handle.shared
    }

    /// The seed that chooses the interleaving.
    pub fn seed(&self) -> u64 {
        self.core.seed()
    }

    /// Virtual time since the simulation began.
    pub fn now(&self) -> Duration {
        self.core.clock().elapsed()
    }

    /// Steps taken so far.
    pub fn steps(&self) -> u64 {
        self.core.steps()
    }

    /// How many actors are runnable now.
    pub fn runnable(&self) -> usize {
        self.core.runnable()
    }

    /// The most steps one [`Sim::run_until_idle`], [`Sim::block_on`] or probe wait may
    /// take before it fails as a livelock (default 1 000 000).
    pub fn set_step_limit(&self, steps: usize) {
        self.core.set_step_limit(steps);
    }

    /// A handle for spawning, as from a [`System`].
    pub fn handle(&self) -> SystemHandle {
        self.handle.clone()
    }

    /// Spawns a top-level actor. Its `started` hook runs on its first step.
    pub fn spawn<A: Actor>(&self, actor: A) -> ActorRef<A> {
        self.handle.spawn(actor)
    }

    /// Spawns a top-level actor with `opts`.
    pub fn spawn_with<A: Actor>(&self, actor: A, opts: SpawnOptions) -> ActorRef<A> {
        self.handle.spawn_with(actor, opts)
    }

    /// Starts a top-level supervisor (see [`Supervisor`]).
    pub fn supervise<T>(
        &self,
        spec: SupervisorSpec,
        children: impl FnOnce(&mut Children) -> T,
    ) -> (ActorRef<Supervisor>, T) {
        self.handle.supervise(spec, children)
    }

    /// Runs one turn of one runnable actor, chosen by the seeded RNG, with a budget of
    /// one message: it handles one message, or resumes an async handler (and, if that
    /// completes it, handles at most one more message). An actor's first turn runs its
    /// `started` hook before its first message. Returns `false` if no actor was
    /// runnable.
    pub fn step(&self) -> bool {
        self.core.step(&self.shared().sched)
    }

    /// Steps until no actor is runnable; returns the number of steps.
    ///
    /// # Panics
    /// After the step limit ([`Sim::set_step_limit`]): actors that keep each other
    /// busy forever (a livelock) fail the test instead of hanging it.
    pub fn run_until_idle(&self) -> usize {
        let limit = self.core.step_limit();
        let mut steps = 0;
        while self.step() {
            steps += 1;
            if steps >= limit {
                panic!(
                    "odeon testkit: still runnable after {limit} steps (a livelock?), seed = {}",
                    self.seed()
                );
            }
        }
        steps
    }

    /// Moves the virtual clock forward by `by`, firing the timers and ask deadlines
    /// that fall due, in due order. Their messages wait to be stepped; a timer armed
    /// by handling one fires only on a later advance (see [`Sim::run_for`]).
    pub fn advance(&self, by: Duration) {
        let until = self.now().saturating_add(by);
        self.core.advance_to(self.shared(), until);
    }

    /// Runs the actors for `span` of virtual time: runs until idle, then moves the
    /// clock to the next timer or deadline, fires it, runs until idle again, and so on
    /// until the clock reaches `now + span`.
    pub fn run_for(&self, span: Duration) {
        let until = self.now().saturating_add(span);
        loop {
            self.run_until_idle();
            match self.core.next_event(self.shared()) {
                Some(at) if at <= until => self.core.advance_to(self.shared(), at),
                _ => break,
            }
        }
        self.core.advance_to(self.shared(), until);
        self.run_until_idle();
    }

    /// Polls `future` once, without running any actor.
    pub fn poll<F: Future + Unpin>(&self, future: &mut F) -> Poll<F::Output> {
        std::pin::Pin::new(future).poll(&mut Context::from_waker(Waker::noop()))
    }

    /// Runs the actors until `future` completes. Whenever nothing is runnable, the
    /// virtual clock jumps to the next timer or ask deadline (as tokio's paused clock
    /// does), so an ask that is never answered times out at its virtual deadline.
    ///
    /// # Panics
    /// If the future can never complete (nothing runnable, no timer, no deadline), or
    /// after the step limit.
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        let mut future = pin!(future);
        let mut cx = Context::from_waker(Waker::noop());
        let limit = self.core.step_limit();
        let mut steps = 0usize;
        loop {
            if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
                return out;
            }
            steps += 1;
            if steps > limit {
                panic!(
                    "odeon testkit: block_on: the future is still pending after {limit} steps, seed = {}",
                    self.seed()
                );
            }
            if self.step() {
                continue;
            }
            match self.core.next_event(self.shared()) {
                Some(at) => self.core.advance_to(self.shared(), at),
                None => panic!(
                    "odeon testkit: block_on would never return: the future is pending, no actor \
                     is runnable and no timer or ask deadline is armed (seed = {})",
                    self.seed()
                ),
            }
        }
    }

    /// Stops every actor (running its hooks) by running their last turns here.
    /// Returns `false` if some actor did not stop within the step limit.
    pub fn shutdown(mut self) -> bool {
        self.system.take().is_none_or(System::shutdown)
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "odeon testkit seed = {} (replay: {SEED_VAR}={0})",
                self.seed()
            );
            // Running the actors' last turns now could panic again, which aborts the
            // process; the failing test's system is leaked instead.
            std::mem::forget(self.system.take());
        }
    }
}
