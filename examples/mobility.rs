//! Live actor migration: a counter on node `a` receives numbered messages from a
//! sender on `a` and a sender on `b` (two nodes in one process, linked over loopback)
//! while it moves a↔b ten times. At the end it checks that every sender's messages
//! were handled exactly once and in the order sent, and exits non-zero if not.
//!
//! Run: `cargo run --release -p odeon-examples --example mobility`
//! (`examples/tests/mobility_demo.rs` runs the same code in `cargo test`.)

#[path = "mobility/counter.rs"]
mod counter;
#[path = "mobility/demo.rs"]
mod demo;

use std::process::ExitCode;

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
    match demo::run(10, 2_000) {
        Ok(s) => {
            println!(
                "ok: {} messages ({} from a, {} from b), each exactly once and in order, \
                 across {} moves ({} from a, {} from b)",
                s.counted,
                s.sent[0],
                s.sent[1],
                s.arrivals.len(),
                s.moved[0],
                s.moved[1]
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("mobility demo FAILED:\n{e}");
            ExitCode::FAILURE
        }
    }
}
