//! A fault hook for the multi-process tests (`examples/tests/mobility_kill.rs`): with
//! the hidden cargo feature `__test-abort` compiled in and `ODEON_TEST_ABORT_AT=<step>`
//! in its environment, a process calls `std::process::abort()` when its migration code
//! reaches that step, so that a test kills it at an exact point of the protocol
//! instead of at a random time. Without the feature the calls compile to nothing.
//!
//! Steps (the numbers are the protocol's, `mod.rs`):
//! - `offer`: the source, frozen, about to ship `MigrateOffer` (step 2);
//! - `ready`: the target, prepared, about to send `MigrateReady` (step 3);
//! - `commit`: the source, committed, about to send `MigrateCommit` (step 4);
//! - `activate`: the target, `MigrateCommit` received, about to run the actor (step 5);
//! - `forward`: a node that is not the host, about to forward another node's message
//!   (steps 7–8).
//!
//! The variable is read once, at the first step reached; an unknown value is reported
//! on standard error and ignored.

/// A point of the protocol where a process may be made to abort.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    Offer,
    Ready,
    Commit,
    Activate,
    Forward,
}

#[cfg(feature = "__test-abort")]
fn armed() -> Option<Step> {
    static AT: std::sync::OnceLock<Option<Step>> = std::sync::OnceLock::new();
    *AT.get_or_init(|| {
        let value = std::env::var("ODEON_TEST_ABORT_AT").ok()?;
        let step = match value.as_str() {
            "offer" => Step::Offer,
            "ready" => Step::Ready,
            "commit" => Step::Commit,
            "activate" => Step::Activate,
            "forward" => Step::Forward,
            other => {
                eprintln!("ODEON_TEST_ABORT_AT={other:?}: no such step; ignored");
                return None;
            }
        };
        Some(step)
    })
}

/// Aborts the process if it was told to at `step`.
#[cfg(feature = "__test-abort")]
pub(crate) fn reached(step: Step) {
    if armed() == Some(step) {
        eprintln!("ODEON_TEST_ABORT_AT: aborting at {step:?}");
        std::process::abort();
    }
}

/// Without the `__test-abort` feature: nothing.
#[cfg(not(feature = "__test-abort"))]
#[inline(always)]
pub(crate) fn reached(_: Step) {}
