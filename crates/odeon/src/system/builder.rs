//! Configuring a system.

use std::time::Duration;

use crate::System;
use crate::defaults;

/// Settings of a system. Every field defaults to the value in [`defaults`](crate::defaults).
#[derive(Clone, Debug)]
pub(crate) struct Config {
    pub(crate) workers: usize,
    pub(crate) budget: usize,
    pub(crate) linger_rounds: u32,
    pub(crate) stall_threshold: Duration,
    pub(crate) monitor_interval: Duration,
    pub(crate) max_spare_workers: usize,
    pub(crate) ask_timeout: Duration,
    pub(crate) shutdown_timeout: Duration,
    pub(crate) adaptive_workers: bool,
    /// How long `System::block_on` spins for a wake-up before it parks.
    pub(crate) block_on_spin: Duration,
    /// Threads of odeon's own tokio runtime (unused with `io_handle`).
    pub(crate) io_threads: usize,
    /// The application's runtime, if odeon runs on it instead of its own.
    pub(crate) io_handle: Option<tokio::runtime::Handle>,
    /// Spans and metrics per handled message (`observe/`).
    #[cfg(feature = "observe")]
    pub(crate) observe: bool,
}

/// Builds a [`System`].
///
/// ```
/// use std::time::Duration;
/// let system = odeon::System::builder()
///     .workers(2)
///     .budget(32)
///     .linger_rounds(0)
///     .stall_threshold(Duration::from_millis(5))
///     .max_spare_workers(2)
///     .build();
/// # drop(system);
/// ```
#[derive(Clone, Debug)]
pub struct SystemBuilder {
    config: Config,
}

impl Default for SystemBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl SystemBuilder {
    /// Defaults: one worker per core.
    pub fn new() -> Self {
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self {
            config: Config {
                workers,
                budget: defaults::BUDGET,
                linger_rounds: defaults::LINGER_ROUNDS,
                stall_threshold: defaults::STALL_THRESHOLD,
                monitor_interval: defaults::MONITOR_INTERVAL,
                max_spare_workers: defaults::MAX_SPARE_WORKERS,
                ask_timeout: defaults::ASK_TIMEOUT,
                shutdown_timeout: defaults::SHUTDOWN_TIMEOUT,
                adaptive_workers: defaults::ADAPTIVE_WORKERS,
                block_on_spin: defaults::BLOCK_ON_SPIN,
                io_threads: defaults::IO_THREADS,
                io_handle: None,
                #[cfg(feature = "observe")]
                observe: false,
            },
        }
    }

    /// Worker threads (at least 1).
    pub fn workers(mut self, n: usize) -> Self {
        self.config.workers = n.max(1);
        self
    }

    /// Messages per turn before an actor with more mail goes to the back (at least 1).
    pub fn budget(mut self, messages: usize) -> Self {
        self.config.budget = messages.max(1);
        self
    }

    /// How long an actor whose mailbox ran dry waits for its next message before it
    /// gives up its turn, when its thread has nothing else to run, in rounds of 16
    /// spin-loop hints (about 420 ns each on an AMD EPYC, where a `PAUSE` takes 26 ns;
    /// default [`defaults::LINGER_ROUNDS`]). `0` turns lingering off: threads
    /// spin less when the system is nearly idle, but a steady stream of messages pays
    /// a rescheduling per burst.
    pub fn linger_rounds(mut self, rounds: u32) -> Self {
        self.config.linger_rounds = rounds;
        self
    }

    /// Whether the monitor may bench workers while fewer of them handle more messages
    /// per second (default [`defaults::ADAPTIVE_WORKERS`]). With message-bound work whose
    /// handlers do next to nothing, moving actors between cores can cost more than the
    /// extra core gives; the monitor then measures, by short probes, whether one worker
    /// fewer is faster, and keeps whichever is. A stuck worker or an idle pool brings
    /// every worker back at once. `false` keeps every worker taking work all the time.
    pub fn adaptive_workers(mut self, on: bool) -> Self {
        self.config.adaptive_workers = on;
        self
    }

    /// How long [`System::block_on`] spins, looking for the wake-up of the future it
    /// waits for, before it parks the calling thread (default
    /// [`defaults::BLOCK_ON_SPIN`]: zero, no spin).
    ///
    /// For callers that block on asks whose replies come back within a few tens of
    /// microseconds, typically remote asks: a reply that lands during the spin is
    /// taken with no futex wake-up on either side, so the caller's thread never
    /// leaves its CPU (on a VM whose idle vCPUs halt, waking a parked thread costs
    /// ~35–40 µs). Each wait costs up to this much CPU time when the reply is slower;
    /// on a machine with fewer cores than busy threads the spin takes a core that
    /// another thread of the round trip may need, so measure before turning it on
    /// (`docs/bench/remote-latency-2026-11-28b.md`). Applies on the system's own
    /// runtime only (not with [`SystemBuilder::io_handle`], nor inside an async
    /// context, where `block_on` polls as before).
    ///
    /// ```
    /// use std::time::Duration;
    /// use odeon::{Actor, Context, Handler, Message, System};
    ///
    /// struct Echo;
    /// impl Actor for Echo {}
    /// struct Ping(u32);
    /// impl Message for Ping { type Reply = u32; }
    /// impl Handler<Ping> for Echo {
    ///     fn handle(&mut self, p: Ping, _: &mut Context<Self>) -> u32 { p.0 }
    /// }
    ///
    /// let system = System::builder().block_on_spin(Duration::from_micros(30)).build();
    /// let echo = system.spawn(Echo);
    /// assert_eq!(system.block_on(echo.ask(Ping(4))), Ok(4));
    /// system.shutdown();
    /// ```
    pub fn block_on_spin(mut self, spin: Duration) -> Self {
        self.config.block_on_spin = spin;
        self
    }

    /// How long one turn may hold a worker before the monitor calls it stuck.
    pub fn stall_threshold(mut self, d: Duration) -> Self {
        self.config.stall_threshold = d;
        self
    }

    /// How often the monitor looks at busy workers.
    pub fn monitor_interval(mut self, d: Duration) -> Self {
        self.config.monitor_interval = d.max(Duration::from_micros(100));
        self
    }

    /// The most spare workers the monitor may add for stuck ones.
    pub fn max_spare_workers(mut self, n: usize) -> Self {
        self.config.max_spare_workers = n;
        self
    }

    /// Default deadline of [`ActorRef::ask`](crate::ActorRef::ask) (5 s). Deadlines of
    /// a second or more are kept by the system's monitor thread, with no timer per ask,
    /// and fire up to one monitor tick late (see [`Ask`](crate::Ask)); shorter ones get
    /// a timer each.
    pub fn ask_timeout(mut self, d: Duration) -> Self {
        self.config.ask_timeout = d;
        self
    }

    /// How long [`System::shutdown`] waits for actors to stop.
    pub fn shutdown_timeout(mut self, d: Duration) -> Self {
        self.config.shutdown_timeout = d;
        self
    }

    /// The settings, for systems built elsewhere (`odeon::testkit`'s simulation).
    pub(crate) fn into_config(self) -> Config {
        self.config
    }

    /// Threads of odeon's own tokio runtime, which runs its timers
    /// ([`Context::send_after`](crate::Context::send_after)), streams
    /// ([`Context::add_stream`](crate::Context::add_stream)), the transports of
    /// odeon-remote and the tasks that async handlers spawn (at least 1; default
    /// [`defaults::IO_THREADS`]).
    ///
    /// Why one by default: actors run on odeon's own workers, not on this runtime, which
    /// only waits for sockets and timers. A second I/O thread measured no gain on remote
    /// round trips (the previous measurement of the project), and costs a thread.
    /// Raise it when tasks spawned from handlers do real work on the runtime.
    ///
    /// Ignored if [`SystemBuilder::io_handle`] is set.
    ///
    /// ```
    /// let system = odeon::System::builder().io_threads(2).build();
    /// assert_eq!(system.handle().io().metrics().num_workers(), 2);
    /// # drop(system);
    /// ```
    pub fn io_threads(mut self, n: usize) -> Self {
        self.config.io_threads = n.max(1);
        self
    }

    /// Runs odeon's timers, streams, transports and spawned tasks on the application's
    /// tokio runtime instead of a runtime of its own. odeon does not own that runtime:
    /// shutting the system down (or dropping it) stops the actors and their timers and
    /// streams, but never the runtime, which the application keeps running and stops.
    ///
    /// The handle's clock then drives [`Context::send_after`](crate::Context::send_after)
    /// and [`Context::send_interval`](crate::Context::send_interval) (and their
    /// [`ActorRef`](crate::ActorRef) counterparts, armed from outside), so a test runtime
    /// with paused time (`tokio::time::pause`) controls them. Ask deadlines do not run
    /// on tokio time: they are kept by the system's monitor thread on the wall clock
    /// (see [`Ask`](crate::Ask)).
    ///
    /// On a current-thread runtime, timers and I/O make progress only while that
    /// runtime's thread is free to run them: await asks there, rather than
    /// [`System::block_on`] them.
    ///
    /// ```
    /// # let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    /// # rt.block_on(async {
    /// // Inside `#[tokio::main]`:
    /// let system = odeon::System::builder()
    ///     .io_handle(tokio::runtime::Handle::current())
    ///     .build();
    /// // ... spawn actors, await asks ...
    /// assert!(system.shutdown_async().await); // the application's runtime keeps running
    /// # });
    /// ```
    pub fn io_handle(mut self, handle: tokio::runtime::Handle) -> Self {
        self.config.io_handle = Some(handle);
        self
    }

    /// Turns on spans and metrics (cargo feature `observe`; default `false`): an
    /// `odeon.handle` span per handled message and the `odeon_*` metrics through the
    /// [`metrics`] facade, recorded by whatever recorder the application installed.
    /// The metric names are the constants of [`odeon::observe`](crate::observe).
    ///
    /// Compiled in but off, each hook costs one load of an unchanging flag and one
    /// well-predicted branch; without the feature there is no hook at all.
    ///
    /// ```
    /// let system = odeon::System::builder().observe(true).build();
    /// # drop(system);
    /// ```
    #[cfg(feature = "observe")]
    pub fn observe(mut self, on: bool) -> Self {
        self.config.observe = on;
        self
    }

    /// Starts the system.
    ///
    /// # Panics
    /// If the OS refuses the runtime's threads (the I/O runtime's or the workers').
    pub fn build(self) -> System {
        #[cfg(feature = "observe")]
        if self.config.observe {
            crate::observe::switch_on_process();
        }
        System::from_parts(self.config)
    }
}
