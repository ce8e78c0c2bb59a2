//! The Savina suite on odeon: the driver the `odeon-bench` runner starts (see
//! `savina::protocol` for the command line and the output). Imam & Sarkar, *Savina – An
//! Actor Benchmark Suite*, AGERE! 2014; the workloads are specified in
//! `shared/savina.md`.
//!
//! odeon runs in its default configuration, one worker per core (`--threads` caps it).

mod common;
#[cfg(feature = "concurrency")]
mod concurrency;
#[cfg(feature = "micro")]
mod micro;
#[cfg(feature = "parallel")]
mod parallel;

use savina::{Outcome, Params};

fn run(params: &Params) -> Option<Outcome> {
    #[cfg(feature = "micro")]
    if let Some(outcome) = micro::run(params) {
        return Some(outcome);
    }
    #[cfg(feature = "concurrency")]
    if let Some(outcome) = concurrency::run(params) {
        return Some(outcome);
    }
    #[cfg(feature = "parallel")]
    if let Some(outcome) = parallel::run(params) {
        return Some(outcome);
    }
    let _ = params;
    None
}

fn main() {
    savina::protocol::drive("odeon", run)
}
