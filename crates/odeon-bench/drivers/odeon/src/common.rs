//! What every benchmark shares: the system in its default configuration.

use odeon::System;
use savina::Params;

/// odeon's default system (one worker per core), capped at `--threads`.
///
/// Built with the `observe` feature, the environment variable `ODEON_OBSERVE=1`
/// switches observing on (`docs/observe.md`, "Measured"): spans and metrics with no
/// subscriber and no recorder installed, which is the cost odeon itself adds.
#[allow(dead_code)] // not every feature set uses it
pub(crate) fn system(params: &Params) -> System {
    let cores = savina::protocol::default_threads();
    #[cfg(feature = "observe")]
    if std::env::var_os("ODEON_OBSERVE").is_some_and(|v| v == "1") {
        return System::builder()
            .workers(params.threads.min(cores))
            .observe(true)
            .build();
    }
    if params.threads >= cores {
        System::new()
    } else {
        System::builder().workers(params.threads).build()
    }
}
