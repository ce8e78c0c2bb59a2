//! The concurrency benchmarks of Savina on odeon (`shared/savina.md` §3.9–3.16), and
//! Trapezoid (§3.28), a parallelism benchmark kept here because it shares the
//! scatter/gather shape and the timing helper.
//!
//! Every iteration follows Savina §1.1: the clock starts before the system is created
//! and stops when every actor has exited. Exits are counted the way Savina's Akka
//! wrapper counts them, with a countdown [`Latch`]: each actor holds an [`Exit`] token
//! in its state, and odeon drops an actor's state as soon as it stops (`cx.stop()`),
//! so the latch reaches zero exactly when the last actor has exited. Then the system
//! is shut down, outside the clock (odeon's shutdown joins its threads; Savina only
//! *starts* the shutdown inside the timed region).

mod banking;
mod barber;
mod bndbuffer;
mod cigsmok;
mod concdict;
mod concsll;
mod logmap;
mod philosopher;
mod trapezoid;

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use odeon::System;
use savina::{Outcome, Params};

use crate::common;

/// Runs the benchmark if it belongs to this group.
pub(crate) fn run(params: &Params) -> Option<Outcome> {
    let outcome = match params.bench().id {
        "concdict" => concdict::run(params),
        "concsll" => concsll::run(params),
        "bndbuffer" => bndbuffer::run(params),
        "philosopher" => philosopher::run(params),
        "barber" => barber::run(params),
        "cigsmok" => cigsmok::run(params),
        "logmap" => logmap::run(params),
        "banking" => banking::run(params),
        "trapezoid" => trapezoid::run(params),
        _ => return None,
    };
    Some(outcome)
}

/// How long an iteration may take before it is reported as hung (a protocol that
/// never lets every actor exit must fail, not hang the runner).
const HANG_LIMIT: Duration = Duration::from_secs(600);

/// The deadline of the asks that may legitimately wait behind a long queue of earlier
/// work (Logistic Map's `GetTerm` waits for every `NextTerm` before it). odeon's
/// default of 5 s is meant for services, not for a loaded benchmark machine.
pub(crate) const ASK_PATIENCE: Duration = HANG_LIMIT;

/// Savina's termination latch: up by one per actor created, down by one per exit.
#[derive(Clone)]
pub(crate) struct Latch(Arc<LatchState>);

struct LatchState {
    live: Mutex<usize>,
    all_exited: Condvar,
}

/// One live actor's share of the [`Latch`]. Kept in the actor's state: odeon drops the
/// state when the actor stops, which counts the exit.
pub(crate) struct Exit(Latch);

impl Latch {
    fn new() -> Self {
        Self(Arc::new(LatchState {
            live: Mutex::new(0),
            all_exited: Condvar::new(),
        }))
    }

    /// Counts one more actor; its exit is the drop of the returned token.
    pub(crate) fn enter(&self) -> Exit {
        *self.0.live.lock().unwrap_or_else(PoisonError::into_inner) += 1;
        Exit(self.clone())
    }

    /// Waits until every counted actor has exited; `false` after `limit`.
    fn wait(&self, limit: Duration) -> bool {
        let live = self.0.live.lock().unwrap_or_else(PoisonError::into_inner);
        let (live, _) = self
            .0
            .all_exited
            .wait_timeout_while(live, limit, |n| *n > 0)
            .unwrap_or_else(PoisonError::into_inner);
        *live == 0
    }
}

impl Exit {
    /// A token for an actor this one creates (it is counted before this one can exit).
    pub(crate) fn enter(&self) -> Exit {
        self.0.enter()
    }
}

impl Drop for Exit {
    fn drop(&mut self) {
        let mut live = self.0.0.live.lock().unwrap_or_else(PoisonError::into_inner);
        *live -= 1;
        if *live == 0 {
            self.0.0.all_exited.notify_all();
        }
    }
}

/// One timed iteration: creates the system, lets `start` spawn the actors and send the
/// first messages, waits until every actor has exited, then shuts the system down.
/// Returns the timed region, or an error if the actors did not all exit.
///
/// Whatever `start` returns (the driver's references to the actors it made) is held
/// until then. Savina's actors live until they exit; every actor here is kept
/// referenced until its own exit (by the driver, by the actor that owns it, or by
/// itself), because odeon's local actor GC can collect an actor whose only
/// references travel in messages while it is still running: an actor that finds its
/// mailbox empty, then sees a pending GC check and a zero count, stops as
/// `Unreferenced` even if a message (and the reference's drop) arrived in between.
pub(crate) fn timed<K>(
    params: &Params,
    start: impl FnOnce(&System, &Latch) -> K,
) -> Result<Duration, String> {
    let began = Instant::now();
    let system = common::system(params);
    let latch = Latch::new();
    let keep = start(&system, &latch);
    let all_exited = latch.wait(HANG_LIMIT);
    let elapsed = began.elapsed();
    drop(keep);
    system.shutdown();
    if all_exited {
        Ok(elapsed)
    } else {
        Err(format!(
            "not every actor exited within {} s",
            HANG_LIMIT.as_secs()
        ))
    }
}

/// An outcome from the timed region and the checks made on what the actors reported.
pub(crate) fn outcome(
    timed: Result<Duration, String>,
    check: impl FnOnce() -> Result<String, String>,
) -> Outcome {
    match timed {
        Ok(elapsed) => Outcome::new(elapsed, check()),
        Err(why) => Outcome::new(HANG_LIMIT, Err(why)),
    }
}

/// Savina's `busyWait(k)`: `k` calls of Java's `Math.random()` whose results are
/// thrown away. Java's `Math.random()` is an unseeded `java.util.Random`; the values
/// do not matter, only the work, so each actor keeps its own generator.
pub(crate) fn busy_wait(random: &mut savina::rng::JavaRandom, calls: i32) {
    for _ in 0..calls {
        std::hint::black_box(random.next_double());
    }
}

/// A seed for the unseeded busy-work generators (any value will do).
pub(crate) fn busy_seed() -> i64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    i64::from(nanos)
}

/// Whether the run uses Savina's default parameters, for which `shared/savina.md` §5
/// gives expected values.
pub(crate) fn is_default(params: &Params) -> bool {
    params.to_args() == Params::for_bench(params.bench(), false).to_args()
}

#[cfg(test)]
mod tests {
    use savina::catalog;

    use super::*;

    /// Every benchmark of the group validates at `--quick` sizes.
    #[test]
    fn every_benchmark_validates_at_quick_sizes() {
        for id in [
            "concdict",
            "concsll",
            "bndbuffer",
            "philosopher",
            "barber",
            "cigsmok",
            "logmap",
            "banking",
            "trapezoid",
        ] {
            let bench = catalog::find(id).expect("in the catalog");
            let params = Params::for_bench(bench, true);
            let outcome = run(&params).expect("implemented");
            assert!(outcome.check.is_ok(), "{id}: {:?}", outcome.check);
        }
    }

    #[test]
    fn the_latch_opens_when_the_last_token_drops() {
        let latch = Latch::new();
        let first = latch.enter();
        let second = first.enter();
        drop(first);
        assert!(!latch.wait(Duration::from_millis(1)));
        drop(second);
        assert!(latch.wait(Duration::from_millis(1)));
    }
}
