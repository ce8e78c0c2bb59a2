//! The concurrency benchmarks of Savina on odeon.

use savina::{Outcome, Params};

/// Runs the benchmark if it belongs to this group.
pub(crate) fn run(params: &Params) -> Option<Outcome> {
    match params.bench().id {
        _ => None,
    }
}
