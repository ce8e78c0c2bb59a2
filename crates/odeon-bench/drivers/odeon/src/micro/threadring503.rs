//! ActorFoundry's classic ThreadRing (not a Savina benchmark of its own): the Thread
//! Ring protocol of `threadring.rs` with 503 actors and 10,000,000 hops (the catalog's
//! defaults for `threadring503`), so that results compare with ActorFoundry's and the
//! Computer Language Benchmarks Game's figures.

use savina::{Outcome, Params};

/// One timed iteration: the same code as Thread Ring, with this benchmark's parameters.
pub(crate) fn run(params: &Params) -> Outcome {
    super::threadring::run(params)
}
