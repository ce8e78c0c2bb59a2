//! The end of a timed region for protocols in which every actor exits by itself
//! (bitonicsort, sieve, uct, facloc, piprecision, sor).
//!
//! Savina ends an iteration when every actor has exited (§1.1), not when the result is
//! out: in UCT the root reports before the tree's `Traverse` and `Terminate` waves, and
//! nodes granted children just before the cap still create them. So after the results
//! this waits until the system is quiescent and checks that no actor is left: an actor
//! still alive then never got its exit message, which is a protocol failure, not
//! something for `System::shutdown` to clean up (it would stop it, or time out on
//! actors spawned while it runs). Only then does it shut the system down.

use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use odeon::System;

/// How often the driver looks for a deadlock while it waits for the results.
const POLL: Duration = Duration::from_millis(200);

/// Waits for `count` results on `rx`, then for every actor to have exited, shuts
/// `system` down and returns the time since `start` with the results, in arrival order.
/// A deadlock (quiescent before every result is in) or an actor left alive is an error.
pub(crate) fn finish_exited<T>(
    system: System,
    rx: &Receiver<T>,
    count: usize,
    start: Instant,
) -> (Duration, Result<Vec<T>, String>) {
    let mut results = Vec::with_capacity(count);
    let mut failure = None;
    while results.len() < count {
        match rx.recv_timeout(POLL) {
            Ok(value) => results.push(value),
            Err(RecvTimeoutError::Disconnected) => {
                failure = Some("every actor stopped without reporting its result".to_owned());
                break;
            }
            Err(RecvTimeoutError::Timeout) => {
                if system.wait_quiescent(Some(Duration::ZERO)) {
                    results.extend(rx.try_iter());
                    if results.len() < count {
                        failure = Some("deadlock: quiescent without a result".to_owned());
                    }
                    break;
                }
            }
        }
    }
    if failure.is_none() {
        system.run_until_quiescent();
        let live = system.live_actors();
        if live > 0 {
            failure = Some(format!("{live} actors never exited"));
        }
    }
    let clean = system.shutdown();
    let elapsed = start.elapsed();
    let check = match (failure, clean) {
        (Some(e), _) => Err(e),
        (None, false) => Err("some actor did not stop at shutdown".to_owned()),
        (None, true) => Ok(results),
    };
    (elapsed, check)
}
