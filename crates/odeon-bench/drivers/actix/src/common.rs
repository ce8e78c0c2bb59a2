//! What every benchmark shares: the two actix configurations, actor placement, and
//! Savina's termination latch.
//!
//! Savina times an iteration from the creation of the actor system until every actor
//! has exited (§1.1). actix has no such notion (an actix `System` runs until someone
//! calls `System::stop`), so this module supplies Savina's latch: every actor holds a
//! [`Live`] token, taken when it is spawned and released when actix drops the actor
//! after it stopped; the last token released stops the system. [`run_system`] times
//! from `System::new` to the return of `SystemRunner::run`, i.e. until every actor
//! has been dropped and the system has been told to stop.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix::{Actor, Addr, Arbiter, ArbiterHandle, Context, System};
use savina::Params;

/// The configuration asked for by `--variant`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Variant {
    /// Every actor in one `System` on the current thread: actix's fastest setup for
    /// message-bound work (no cross-thread wake-ups at all).
    Single,
    /// One `Arbiter` (a thread with its own event loop) per core, actors spread over
    /// them round-robin: the Savina-like multi-core deployment.
    PerCore(usize),
}

impl Variant {
    /// The variant of `params`, or why it is not one.
    pub(crate) fn of(params: &Params) -> Result<Self, String> {
        match params.variant.as_str() {
            "" | "single" => Ok(Self::Single),
            "per-core" => Ok(Self::PerCore(params.threads.max(1))),
            other => Err(format!(
                "unknown variant {other:?} (actix knows \"single\" and \"per-core\")"
            )),
        }
    }
}

/// Where new actors go and the latch counting the live ones; cheap to clone, and
/// `Send`, so actors that create actors (Fibonacci, the Chameneos mall, ...) keep one.
#[derive(Clone)]
pub(crate) struct Rt {
    shared: Arc<Shared>,
}

struct Shared {
    /// Empty in the single-threaded variant: actors start on the current arbiter.
    arbiters: Vec<ArbiterHandle>,
    /// The round-robin cursor over `arbiters`.
    next: AtomicUsize,
    /// Actors spawned and not yet dropped, plus the driver while it sets up.
    live: AtomicUsize,
    system: System,
}

/// One live actor (or the driver's set-up phase) in Savina's latch. Dropping the last
/// one stops the system. Actors keep theirs as a field, so it is released exactly when
/// actix drops the stopped actor.
pub(crate) struct Live {
    shared: Arc<Shared>,
}

impl Drop for Live {
    fn drop(&mut self) {
        if self.shared.live.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.shared.system.stop();
        }
    }
}

impl Rt {
    /// Takes a latch token.
    pub(crate) fn enter(&self) -> Live {
        self.shared.live.fetch_add(1, Ordering::AcqRel);
        Live {
            shared: Arc::clone(&self.shared),
        }
    }

    /// Starts an actor built by `make` (which gets its context, e.g. for
    /// `ctx.address()`, and its latch token): on the current arbiter in the
    /// single-threaded variant, on the next arbiter round-robin in the per-core one.
    pub(crate) fn spawn<A, F>(&self, make: F) -> Addr<A>
    where
        A: Actor<Context = Context<A>>,
        F: FnOnce(&mut Context<A>, Live) -> A + Send + 'static,
    {
        let live = self.enter();
        let arbiters = &self.shared.arbiters;
        if arbiters.is_empty() {
            A::create(move |ctx| make(ctx, live))
        } else {
            let i = self.shared.next.fetch_add(1, Ordering::Relaxed) % arbiters.len();
            A::start_in_arbiter(&arbiters[i], move |ctx| make(ctx, live))
        }
    }
}

/// Runs one iteration: creates the system (and the arbiters of the per-core
/// variant), calls `setup` on the system's thread to create the actors and send the
/// first messages, and runs until every actor has exited. Returns the timed region.
/// The arbiter threads are joined after the clock stops (they were already told to
/// stop with the system).
pub(crate) fn run_system(variant: Variant, setup: impl FnOnce(&Rt)) -> Duration {
    let start = Instant::now();
    let runner = System::new();
    let arbiters: Vec<Arbiter> = match variant {
        Variant::Single => Vec::new(),
        Variant::PerCore(threads) => (0..threads).map(|_| Arbiter::new()).collect(),
    };
    let rt = Rt {
        shared: Arc::new(Shared {
            arbiters: arbiters.iter().map(Arbiter::handle).collect(),
            next: AtomicUsize::new(0),
            live: AtomicUsize::new(0),
            system: System::current(),
        }),
    };
    runner.block_on(async {
        // The driver counts as live while it sets up, so that actors finishing before
        // the last one is created cannot stop the system early.
        let _setting_up = rt.enter();
        setup(&rt);
    });
    drop(rt);
    // `run` only fails if the stop signal's sender vanished, which cannot happen
    // while `Shared` holds the system.
    let _ = runner.run();
    let elapsed = start.elapsed();
    for arbiter in arbiters {
        let _ = arbiter.join();
    }
    elapsed
}

/// A value an actor hands back to the driver (a count, a sum), read after the run.
pub(crate) struct Slot<T>(Arc<Mutex<Option<T>>>);

impl<T> Clone for Slot<T> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<T> Slot<T> {
    pub(crate) fn new() -> Self {
        Self(Arc::new(Mutex::new(None)))
    }

    pub(crate) fn put(&self, value: T) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(value);
    }

    /// The value, or an error naming what never reported.
    pub(crate) fn take(&self, what: &str) -> Result<T, String> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .ok_or_else(|| format!("{what} never reported"))
    }
}

/// Savina's work unit of the fork-join benchmarks: sin(37.2)², which must be positive
/// (the check keeps the computation from being optimised away). `black_box` keeps the
/// compiler from folding it into a constant.
pub(crate) fn sin_squared_work() -> bool {
    let s = std::hint::black_box(37.2f64).sin();
    s * s > 0.0
}
