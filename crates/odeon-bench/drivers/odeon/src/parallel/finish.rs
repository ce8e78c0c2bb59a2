//! The end of every timed region: wait for the benchmark's results, then shut down.
//!
//! Savina (§1.1) times from the creation of the actor system to the moment every actor
//! has exited and shutdown has started. Here the actors that end a protocol hand their
//! results to the driver thread over a channel before they stop; `System::shutdown` then
//! waits for every actor to have stopped and ends the runtime, inside the timed region.

use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use odeon::System;

/// How often the driver looks for a deadlock while it waits.
const POLL: Duration = Duration::from_millis(200);

/// Waits for `count` results on `rx`, shuts `system` down and returns the time since
/// `start` with the results, in arrival order. A protocol that deadlocks (the system
/// goes quiescent before every result is in) or whose actors all stop without answering
/// is an error, never a hang.
pub(crate) fn finish<T>(
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
                failure = Some("every actor stopped without reporting its result");
                break;
            }
            Err(RecvTimeoutError::Timeout) => {
                // Quiescent: no message in flight and every actor idle, so nothing can
                // produce a result any more (unless it was sent just now).
                if system.wait_quiescent(Some(Duration::ZERO)) {
                    results.extend(rx.try_iter());
                    if results.len() < count {
                        failure = Some("deadlock: the system went quiescent without a result");
                    }
                    break;
                }
            }
        }
    }
    let clean = system.shutdown();
    let elapsed = start.elapsed();
    let check = match (failure, clean) {
        (Some(e), _) => Err(e.to_owned()),
        (None, false) => Err("some actor did not stop at shutdown".to_owned()),
        (None, true) => Ok(results),
    };
    (elapsed, check)
}
