//! What every benchmark shares: the system in its default configuration.

use odeon::System;
use savina::Params;

/// odeon's default system (one worker per core), capped at `--threads`.
#[allow(dead_code)] // not every feature set uses it
pub(crate) fn system(params: &Params) -> System {
    let cores = savina::protocol::default_threads();
    if params.threads >= cores {
        System::new()
    } else {
        System::builder().workers(params.threads).build()
    }
}
