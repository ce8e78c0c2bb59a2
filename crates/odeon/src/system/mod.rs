//! The runtime: worker pool, I/O and timer driver, the root of the actor tree.
//!
//! # Shutdown protocol
//! 1. Mark the system shutting down: actors spawned from now on stop at once, on the
//!    spawning thread (`cell/spawn.rs`), so a ref to one is never a zombie.
//! 2. Kill every top-level actor; each kills its children and supervised children as
//!    part of stopping (see `cell/lifecycle.rs`), so every hook runs. A kill lets a
//!    synchronous handler return but cancels an awaiting async one: shutdown must not
//!    wait on I/O that may never complete.
//! 3. Wait until every spawned actor has stopped, up to `shutdown_timeout` (an actor
//!    stuck in an endless loop cannot be stopped; it is reported and abandoned).
//! 4. Stop the workers and the monitor, then the tokio runtime if the system owns it.
//!    Inside an async context tokio forbids waiting for a runtime to stop (it panics),
//!    so there it is left to stop in the background. A runtime lent by the application
//!    (`SystemBuilder::io_handle`) is left running: the timers and streams of the
//!    stopped actors were cancelled with them.

mod builder;
mod spin_wait;

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::sync::Mutex;

pub(crate) use builder::Config;
pub use builder::SystemBuilder;

use crate::cell::{AnyCell, SpawnOptions, spawn};
use crate::scheduler::{Count, Scheduler};
use crate::supervision::{Children, Supervisor, SupervisorSpec};
use crate::{Actor, ActorRef, StopReason};

/// State shared by every part of one system.
pub(crate) struct Shared {
    pub(crate) sched: Scheduler,
    pub(crate) io: tokio::runtime::Handle,
    pub(crate) config: Config,
    /// Ask deadlines, kept by the scheduler's monitor thread.
    pub(crate) deadlines: crate::refs::deadline::DeadlineWatch,
    root: Mutex<ChildList>,
    shutting_down: AtomicBool,
    /// Names of actors (`registry/`).
    pub(crate) registry: crate::registry::Registry,
    /// The live table of an observing system (`observe/live.rs`); `None` otherwise.
    #[cfg(feature = "observe")]
    pub(crate) live: Option<Arc<crate::observe::Live>>,
}

/// Children of an actor (or of the root), pruned of stopped ones as it grows.
#[derive(Default)]
pub(crate) struct ChildList {
    cells: Vec<Arc<dyn AnyCell>>,
    prune_at: usize,
}

impl ChildList {
    pub(crate) fn push(&mut self, cell: Arc<dyn AnyCell>) {
        if self.cells.len() >= self.prune_at {
            self.cells.retain(|c| !c.is_stopped());
            self.prune_at = (self.cells.len() * 2).max(16);
        }
        self.cells.push(cell);
    }

    /// Whether any child has not stopped.
    pub(crate) fn any_alive(&self) -> bool {
        self.cells.iter().any(|c| !c.is_stopped())
    }

    /// Stops (or kills) every child and forgets them.
    pub(crate) fn stop_all(&mut self, reason: &StopReason, kill: bool) {
        for c in self.cells.drain(..) {
            if kill {
                c.kill(reason.clone());
            } else {
                c.request_stop(reason.clone());
            }
        }
        self.prune_at = 0;
    }
}

impl Shared {
    pub(crate) fn is_shutting_down(&self) -> bool {
        self.shutting_down.load(Ordering::Acquire)
    }

    /// The time as the runtime's restart windows see it: the virtual clock of a
    /// simulated system (`testkit/`), the real one otherwise.
    pub(crate) fn now(&self) -> Instant {
        match self.sched.sim() {
            Some(sim) => sim.clock().now(),
            None => Instant::now(),
        }
    }

    pub(crate) fn actor_spawned(&self) {
        self.sched.bump(Count::Spawned);
    }

    pub(crate) fn actor_stopped(&self) {
        self.sched.bump(Count::Stopped);
    }

    /// Spawns a top-level actor.
    pub(crate) fn spawn_root<A: Actor>(
        self: &Arc<Self>,
        actor: A,
        opts: SpawnOptions,
    ) -> ActorRef<A> {
        let cell = spawn(self, actor, opts, None);
        self.register_root(cell.clone());
        ActorRef::from_cell(cell)
    }

    /// Adds a top-level actor to the root, or kills it if shutdown has already taken
    /// the root's list (a spawn racing with shutdown must not escape it). The flag is
    /// set before shutdown takes the lock, so whoever takes it second sees the other.
    pub(crate) fn register_root(&self, cell: Arc<dyn AnyCell>) {
        let mut root = self.root.lock();
        if self.is_shutting_down() {
            drop(root);
            cell.kill(StopReason::Shutdown);
        } else {
            root.push(cell);
        }
    }
}

/// A cloneable handle to a running [`System`], for spawning from anywhere (for example
/// from inside a handler: [`Context::system`](crate::Context::system)).
#[derive(Clone)]
pub struct SystemHandle {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for SystemHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SystemHandle").finish_non_exhaustive()
    }
}

impl SystemHandle {
    /// The system's tokio runtime (its I/O and timer driver), for transports and for
    /// I/O done on behalf of actors: odeon's own runtime
    /// ([`SystemBuilder::io_threads`]), or the application's
    /// ([`SystemBuilder::io_handle`]).
    pub fn io(&self) -> tokio::runtime::Handle {
        self.shared.io.clone()
    }

    /// Whether `self` and `other` are handles to the same system (for transports that
    /// keep state per system).
    ///
    /// ```
    /// let (a, b) = (odeon::System::new(), odeon::System::new());
    /// assert!(a.handle().same_system(&a.handle()));
    /// assert!(!a.handle().same_system(&b.handle()));
    /// ```
    pub fn same_system(&self, other: &SystemHandle) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// Spawns a top-level actor with default options.
    ///
    /// Once the system is shutting down (or has shut down), the actor stops at once,
    /// before this returns: its `started` and `stopping` hooks do not run, its
    /// `stopped` hook runs with [`StopReason::Shutdown`], and the returned ref is dead:
    /// [`ActorRef::is_alive`] is `false`, `tell` gives the message back in
    /// [`TellError::Stopped`](crate::TellError::Stopped), and `ask` fails with
    /// [`AskError::Stopped`](crate::AskError::Stopped). The same holds for every way of
    /// spawning (options, supervisors, children spawned from a [`Context`]).
    ///
    ///
    /// # Collection
    /// The actor lives while a strong reference to it exists: the returned
    /// [`ActorRef`], its clones, a [`Recipient`](crate::Recipient), an armed timer or a
    /// running stream. Once the last one is dropped and its mailbox is empty, it stops
    /// with [`StopReason::Unreferenced`] (nothing could ever send it a message again,
    /// short of a [`WeakActorRef`](crate::WeakActorRef) upgraded in time). Hence
    /// `#[must_use]`: `let _ = system.spawn(..)` spawns an actor that is collected
    /// right away. For an actor that should live until stopped, spawn it with
    /// [`SpawnOptions::keep_alive`].
    ///
    /// [`Context`]: crate::Context
    #[must_use = "an actor is stopped (collected) once its last ActorRef is dropped and its mailbox is empty; keep the ref, or spawn it with SpawnOptions::keep_alive()"]
    pub fn spawn<A: Actor>(&self, actor: A) -> ActorRef<A> {
        self.shared.spawn_root(actor, SpawnOptions::default())
    }

    /// Spawns a top-level actor with `opts` (after shutdown: see [`SystemHandle::spawn`];
    /// collection: see there too, and [`SpawnOptions::keep_alive`]).
    #[must_use = "an actor is stopped (collected) once its last ActorRef is dropped and its mailbox is empty; keep the ref, or spawn it with SpawnOptions::keep_alive()"]
    pub fn spawn_with<A: Actor>(&self, actor: A, opts: SpawnOptions) -> ActorRef<A> {
        self.shared.spawn_root(actor, opts)
    }

    /// Starts a top-level supervisor; `children` spawns its children, in start order,
    /// and may add sub-supervisors with [`Children::supervise`] to build a tree.
    pub fn supervise<T>(
        &self,
        spec: SupervisorSpec,
        children: impl FnOnce(&mut Children) -> T,
    ) -> (ActorRef<Supervisor>, T) {
        let (sup, out) = crate::supervision::start(&self.shared, spec, children);
        self.shared.register_root(sup.cell().clone());
        (sup, out)
    }
}

/// The actor runtime.
///
/// ```
/// use odeon::{Actor, Context, Handler, Message, System};
///
/// struct Echo;
/// impl Actor for Echo {}
/// struct Say(String);
/// impl Message for Say { type Reply = String; }
/// impl Handler<Say> for Echo {
///     fn handle(&mut self, msg: Say, _: &mut Context<Self>) -> String { msg.0 }
/// }
///
/// let system = System::new();
/// let echo = system.spawn(Echo);
/// let reply = system.block_on(echo.ask(Say("hi".into()))).unwrap();
/// assert_eq!(reply, "hi");
/// system.shutdown();
/// ```
pub struct System {
    handle: SystemHandle,
    runtime: Option<tokio::runtime::Runtime>,
    done: bool,
}

impl std::fmt::Debug for System {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("System")
            .field("workers", &self.handle.shared.config.workers)
            .finish_non_exhaustive()
    }
}

impl Default for System {
    fn default() -> Self {
        Self::new()
    }
}

impl System {
    /// The embedded default: one worker per core, default budget and monitor.
    ///
    /// # Panics
    /// If the OS refuses the runtime's threads.
    pub fn new() -> Self {
        SystemBuilder::new().build()
    }

    /// A builder for worker count, budget and fairness-monitor settings.
    pub fn builder() -> SystemBuilder {
        SystemBuilder::new()
    }

    pub(crate) fn from_parts(config: Config) -> Self {
        let (runtime, io) = match &config.io_handle {
            Some(handle) => (None, handle.clone()),
            None => {
                let runtime = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(config.io_threads)
                    .thread_name("odeon-io")
                    .enable_all()
                    .build()
                    .expect("the OS refused the I/O driver's thread");
                let io = runtime.handle().clone();
                (Some(runtime), io)
            }
        };
        #[cfg(feature = "observe")]
        let live = crate::observe::Live::new(config.observe);
        let shared = Arc::new(Shared {
            sched: Scheduler::new(config.workers, config.max_spare_workers),
            io,
            deadlines: crate::refs::deadline::DeadlineWatch::new(
                config.workers + config.max_spare_workers,
            ),
            config,
            root: Mutex::new(ChildList::default()),
            shutting_down: AtomicBool::new(false),
            registry: crate::registry::Registry::default(),
            #[cfg(feature = "observe")]
            live,
        });
        Scheduler::start(&shared);
        Self::with_shared(shared, runtime)
    }

    /// A system run by `odeon::testkit`'s deterministic scheduler: no worker, no
    /// monitor, no I/O thread (a current-thread runtime nobody drives gives `io()` a
    /// handle); ask deadlines follow the simulation's virtual clock.
    pub(crate) fn deterministic(config: Config, sim: Arc<crate::testkit::core::SimCore>) -> Self {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a current-thread runtime starts no thread");
        #[cfg(feature = "observe")]
        let live = crate::observe::Live::new(config.observe);
        let shared = Arc::new(Shared {
            deadlines: crate::refs::deadline::DeadlineWatch::new_virtual(sim.clock().clone()),
            sched: Scheduler::deterministic(sim),
            io: runtime.handle().clone(),
            config,
            root: Mutex::new(ChildList::default()),
            shutting_down: AtomicBool::new(false),
            registry: crate::registry::Registry::default(),
            #[cfg(feature = "observe")]
            live,
        });
        Self::with_shared(shared, Some(runtime))
    }

    fn with_shared(shared: Arc<Shared>, runtime: Option<tokio::runtime::Runtime>) -> Self {
        System {
            handle: SystemHandle { shared },
            runtime,
            done: false,
        }
    }

    /// A cloneable handle for spawning from other threads or actors.
    pub fn handle(&self) -> SystemHandle {
        self.handle.clone()
    }

    /// Spawns a top-level actor with default options. It is collected (stopped) once
    /// its last strong reference is dropped: see [`SystemHandle::spawn`].
    #[must_use = "an actor is stopped (collected) once its last ActorRef is dropped and its mailbox is empty; keep the ref, or spawn it with SpawnOptions::keep_alive()"]
    pub fn spawn<A: Actor>(&self, actor: A) -> ActorRef<A> {
        self.handle.spawn(actor)
    }

    /// Spawns a top-level actor with `opts` (bounded mailbox, own thread,
    /// [`keep_alive`](SpawnOptions::keep_alive)).
    #[must_use = "an actor is stopped (collected) once its last ActorRef is dropped and its mailbox is empty; keep the ref, or spawn it with SpawnOptions::keep_alive()"]
    pub fn spawn_with<A: Actor>(&self, actor: A, opts: SpawnOptions) -> ActorRef<A> {
        self.handle.spawn_with(actor, opts)
    }

    /// Starts a top-level supervisor (see [`Supervisor`]); `children` spawns its
    /// children, in start order, and may add sub-supervisors with
    /// [`Children::supervise`] to build a tree.
    pub fn supervise<T>(
        &self,
        spec: SupervisorSpec,
        children: impl FnOnce(&mut Children) -> T,
    ) -> (ActorRef<Supervisor>, T) {
        self.handle.supervise(spec, children)
    }

    /// Runs a future to completion on the calling thread (for example an `ask` from
    /// `main`), with the system's tokio runtime as the context of tokio timers and I/O.
    /// Must not be called from inside a handler.
    ///
    /// Inside an async context (a `#[tokio::main]` application) this does not panic as
    /// tokio's own `block_on` would, but it still blocks the thread, and with it every
    /// task of a current-thread runtime: there, `.await` the future instead. (A tokio
    /// timer or socket created before the call belongs to the application's runtime;
    /// on a current-thread one it cannot make progress while this blocks.)
    ///
    /// With a runtime lent by [`SystemBuilder::io_handle`], outside an async context
    /// this is that handle's `block_on`: on a current-thread runtime, tokio timers and
    /// I/O then progress only while another thread drives that runtime.
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        let io = &self.handle.shared.io;
        if tokio::runtime::Handle::try_current().is_err() {
            return match self.runtime.as_ref() {
                // `SystemBuilder::block_on_spin`: only on the system's own multi-thread
                // runtime, whose I/O driver runs on its own threads (a current-thread
                // runtime is driven by its `block_on`, which must then be its own).
                Some(rt)
                    if !self.handle.shared.config.block_on_spin.is_zero()
                        && rt.handle().runtime_flavor()
                            == tokio::runtime::RuntimeFlavor::MultiThread =>
                {
                    let _io = rt.enter();
                    spin_wait::block_on(future, self.handle.shared.config.block_on_spin)
                }
                Some(rt) => rt.block_on(future),
                None => io.block_on(future),
            };
        }
        // tokio refuses to start a runtime inside another one; poll on this thread.
        // Unconstrained: the enclosing tokio task's cooperative budget is never renewed
        // while this blocks it, and once spent every tokio resource would answer
        // "pending, try again" forever.
        let _io = io.enter();
        futures_executor::block_on(tokio::task::unconstrained(future))
    }

    /// Blocks until the system is quiescent: every actor idle, no message in flight, no
    /// async handler pending and no timer armed (ActorFoundry's termination condition).
    pub fn run_until_quiescent(&self) {
        self.wait_quiescent(None);
    }

    /// Like [`System::run_until_quiescent`] with a limit; returns whether quiescence was
    /// reached.
    pub fn wait_quiescent(&self, timeout: Option<Duration>) -> bool {
        let sched = &self.handle.shared.sched;
        // A limit too far out to represent (`Duration::MAX`) is no limit.
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        sched.wait_until(deadline, || sched.totals().is_some_and(|t| t[0] == t[1]))
    }

    /// Benches every worker but the first `n` as the throttle would
    /// ([`SystemBuilder::adaptive_workers`]), until the monitor decides otherwise. For
    /// tests of the benched state; not part of the supported API.
    #[doc(hidden)]
    pub fn bench_workers_for_test(&self, n: usize) {
        self.handle.shared.sched.set_active(n);
    }

    /// Number of actors spawned and not yet stopped.
    pub fn live_actors(&self) -> u64 {
        let sched = &self.handle.shared.sched;
        loop {
            if let Some(t) = sched.totals() {
                return t[2].saturating_sub(t[3]);
            }
        }
    }

    /// Stops every actor (running its hooks), then the runtime. Returns `false` if some
    /// actor could not be stopped within the shutdown timeout.
    ///
    /// Every actor is killed ([`ActorRef::kill`]) with [`StopReason::Shutdown`]: a
    /// synchronous handler finishes, an async handler that is awaiting is cancelled.
    /// Actors spawned afterwards (through a [`SystemHandle`] or a [`Context`]) stop at
    /// once: see [`SystemHandle::spawn`].
    ///
    /// Blocks the calling thread until the actors have stopped (at most the shutdown
    /// timeout, [`SystemBuilder::shutdown_timeout`]). It never panics, inside an async
    /// context or outside one, but in async code prefer [`System::shutdown_async`],
    /// which does not block the executor's thread. Dropping a `System` shuts it down
    /// the same way.
    ///
    /// [`Context`]: crate::Context
    pub fn shutdown(mut self) -> bool {
        self.shutdown_inner()
    }

    /// [`System::shutdown`] for async code: the waiting happens on a thread of its own,
    /// so the executor's thread stays free (on a current-thread runtime, its other
    /// tasks keep running meanwhile). Works on any executor.
    ///
    /// ```
    /// # let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    /// # rt.block_on(async {
    /// use odeon::{Actor, Context, Handler, Message, System};
    ///
    /// struct Echo;
    /// impl Actor for Echo {}
    /// struct Ping;
    /// impl Message for Ping { type Reply = &'static str; }
    /// impl Handler<Ping> for Echo {
    ///     fn handle(&mut self, _: Ping, _: &mut Context<Self>) -> &'static str { "pong" }
    /// }
    ///
    /// // Inside `#[tokio::main]`:
    /// let system = System::new();
    /// let echo = system.spawn(Echo);
    /// assert_eq!(echo.ask(Ping).await, Ok("pong"));
    /// assert!(system.shutdown_async().await);
    /// # });
    /// ```
    pub async fn shutdown_async(self) -> bool {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let slot = Arc::new(Mutex::new(Some(self)));
        let theirs = slot.clone();
        let waiter = std::thread::Builder::new()
            .name("odeon-shutdown".into())
            .spawn(move || {
                let system = theirs.lock().take();
                let _ = tx.send(system.is_none_or(|mut s| s.shutdown_inner()));
            });
        if let Err(e) = waiter {
            tracing::warn!(error = %e, "no thread for an async shutdown; shutting down in place");
            let system = slot.lock().take();
            return system.is_none_or(|mut s| s.shutdown_inner());
        }
        drop(slot);
        rx.await.unwrap_or(false)
    }

    fn shutdown_inner(&mut self) -> bool {
        if self.done {
            return true;
        }
        self.done = true;
        let shared = &self.handle.shared;
        shared.shutting_down.store(true, Ordering::Release);
        shared.root.lock().stop_all(&StopReason::Shutdown, true);
        // A timeout too far out to represent (`Duration::MAX`) waits as long as it takes.
        let deadline = Instant::now().checked_add(shared.config.shutdown_timeout);
        let sched = &shared.sched;
        let all_stopped = match sched.sim() {
            // Nobody else runs a simulated system's turns: this thread does.
            Some(sim) => sim.shut_down(sched),
            None => sched.wait_until(deadline, || sched.totals().is_some_and(|t| t[2] == t[3])),
        };
        if !all_stopped {
            tracing::warn!("shutdown timed out: some actors did not stop");
        }
        sched.shutdown();
        if let Some(rt) = self.runtime.take() {
            if tokio::runtime::Handle::try_current().is_ok() {
                // Waiting for a runtime to stop inside an async context panics ("Cannot
                // drop a runtime in a context where blocking is not allowed").
                rt.shutdown_background();
            } else {
                rt.shutdown_timeout(Duration::from_secs(1));
            }
        }
        all_stopped
    }
}

impl Drop for System {
    fn drop(&mut self) {
        self.shutdown_inner();
    }
}
