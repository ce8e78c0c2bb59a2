//! The micro benchmarks of Savina on odeon (`shared/savina.md` §3.1–3.8), plus
//! ActorFoundry's classic ThreadRing configuration (`threadring503`).
//!
//! Every benchmark is written the way a performance-minded odeon user would write it:
//! synchronous [`Handler`](odeon::Handler)s, `tell`, `ActorRef`s inside messages,
//! `cx.myself()` for "self", `cx.notify` for "send to my own mailbox" and `cx.stop()` for
//! Savina's *exit*, on the default system (one worker per core).
//!
//! # Timing and termination
//! Each iteration is timed (by [`Outcome::timed`]) from the creation of the system to
//! its shutdown, as Savina times it (§1.1). Results travel back to the driver over a
//! `std::sync::mpsc` channel, the equivalent of Savina printing them. Then [`settle`]
//! waits until the system is quiescent and checks that no actor is left alive: the
//! driver still holds a reference to the actors it created while it checks, so no
//! actor can have been collected by odeon's local GC instead of exiting by itself.

mod big;
mod chameneos;
mod counting;
mod fib;
mod fjcreate;
mod fjthrput;
mod pingpong;
mod threadring;
mod threadring503;

use std::hint::black_box;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use odeon::System;
use savina::{Outcome, Params};

/// How long the driver waits for all the results of one iteration before it calls the
/// run hung (the slowest default run takes a few seconds).
const RESULT_TIMEOUT: Duration = Duration::from_secs(300);

/// How long [`settle`] waits for the system to go quiet once every result is in.
const SETTLE_TIMEOUT: Duration = Duration::from_secs(30);

/// Runs the benchmark if it belongs to this group.
pub(crate) fn run(params: &Params) -> Option<Outcome> {
    let outcome = match params.bench().id {
        "pingpong" => pingpong::run(params),
        "threadring" => threadring::run(params),
        "threadring503" => threadring503::run(params),
        "counting" => counting::run(params),
        "fjthrput" => fjthrput::run(params),
        "fjcreate" => fjcreate::run(params),
        "fib" => fib::run(params),
        "chameneos" => chameneos::run(params),
        "big" => big::run(params),
        _ => return None,
    };
    Some(outcome)
}

/// Implements [`odeon::Message`] with no reply for tell-only message types.
macro_rules! tell_only {
    ($($ty:ty),+ $(,)?) => {
        $(impl odeon::Message for $ty {
            type Reply = ();
        })+
    };
}
pub(crate) use tell_only;

/// Receives exactly `count` results, or fails after [`RESULT_TIMEOUT`] in total.
pub(crate) fn recv_n<T>(rx: &Receiver<T>, count: usize) -> Result<Vec<T>, String> {
    let deadline = Instant::now() + RESULT_TIMEOUT;
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(v) => out.push(v),
            Err(RecvTimeoutError::Timeout) => {
                return Err(format!(
                    "timed out with {} of {count} results in",
                    out.len()
                ));
            }
            Err(RecvTimeoutError::Disconnected) => {
                return Err(format!(
                    "every actor went away with {} of {count} results in",
                    out.len()
                ));
            }
        }
    }
    Ok(out)
}

/// Waits until the system is quiet, checks that every actor has exited, and shuts the
/// system down (Savina's "wait until every actor has exited; start shutdown").
///
/// Call it while the driver still holds its references to the actors it created, so
/// that "no actor is alive" proves the protocol made each of them exit.
pub(crate) fn settle(system: System) -> Result<(), String> {
    if !system.wait_quiescent(Some(SETTLE_TIMEOUT)) {
        let live = system.live_actors();
        system.shutdown();
        return Err(format!("the system never went quiet ({live} actors alive)"));
    }
    let live = system.live_actors();
    let stopped_cleanly = system.shutdown();
    if live != 0 {
        return Err(format!("{live} actors never exited"));
    }
    if !stopped_cleanly {
        return Err("shutdown timed out".to_owned());
    }
    Ok(())
}

/// Savina's fork-join work unit (§3.4): sin(37.2)², which must be positive. The
/// argument goes through `black_box` so that the compiler cannot fold it away.
pub(crate) fn sin_squared_work() -> bool {
    let s = black_box(37.2_f64).sin();
    black_box(s * s) > 0.0
}

/// `Ok(detail)` when every check passed, else the first failure.
pub(crate) fn all(checks: Vec<Result<String, String>>) -> Result<String, String> {
    let mut details = Vec::with_capacity(checks.len());
    for c in checks {
        details.push(c?);
    }
    Ok(details.join("; "))
}
