//! `odeon-bench`: runs the Savina actor benchmark suite on odeon and its peers, side
//! by side, and reports how odeon compares.
//!
//! Savina is the standard suite for actor runtimes: S. M. Imam and V. Sarkar,
//! *Savina – An Actor Benchmark Suite: Enabling Empirical Evaluation of Actor
//! Libraries*, AGERE! 2014 (4th International Workshop on Programming based on
//! Actors, Agents, and Decentralized Control), ACM. Its 30 workloads, as
//! implemented here, are specified in `shared/savina.md`; the contract every driver
//! follows is the `savina` crate beside this one.
//!
//! ```text
//! cargo run --release -p odeon-bench -- [--quick] [--only ID,..] [--runtimes NAME,..]
//!                                       [--runs N] [--out DIR]
//! ```
//!
//! A session, step by step:
//!
//! 1. [`cli`]: the command line resolves to [`cli::Settings`].
//! 2. [`runtimes`]: the configurations (odeon, actix/single, actix/per-core, kameo,
//!    ractor, erlang, caf, pekko/jdkNN for every JDK found), filtered by `--runtimes`.
//! 3. [`prepare`]: one `cargo build` for the Rust drivers, `build.sh` for the others;
//!    a configuration that cannot be built is skipped with the reason shown.
//! 4. [`run`]: for each benchmark, N rounds of one process per configuration
//!    (interleaved: A B C A B C), each read by [`parse`] into a time, n/a or FAILED.
//! 5. [`stats`]: median [min–max] per cell, odeon's ratio to the best peer.
//! 6. [`report`]: the table on stdout, `results.json`, `results.md`, `ratios.svg`.

mod cli;
mod parse;
mod prepare;
mod process;
mod report;
mod results;
mod run;
mod runtimes;
mod stats;

use std::path::Path;
use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Args, Settings};
use crate::prepare::Workspace;
use crate::report::{Machine, Meta, Report};
use crate::run::Plan;

fn main() -> ExitCode {
    let settings = match Args::parse().resolve() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("odeon-bench: {e}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = ctrlc::set_handler(|| {
        process::interrupted();
        eprintln!("\nodeon-bench: interrupted");
        std::process::exit(130);
    }) {
        eprintln!(
            "odeon-bench: no Ctrl-C handler ({e}); an interrupted run may leave a driver behind"
        );
    }
    match session(&settings) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("odeon-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Everything after argument parsing. Failed or n/a runs are results, not errors:
/// only a session that cannot run at all, or cannot write its reports, is an error.
fn session(s: &Settings) -> Result<(), String> {
    let date = report::meta::utc_now();
    let ws = Workspace::locate();
    let jdks = runtimes::discover_jdks(Path::new(runtimes::JVM_ROOT));
    let configs = runtimes::select(runtimes::builtin(&jdks), &s.drivers, &s.runtime_filter)?;
    let (ready, skipped) = prepare::prepare(&configs, &ws, s.build, s.quick);
    for skip in &skipped {
        eprintln!("skipping {}: {}", skip.name, skip.reason);
    }
    if ready.is_empty() {
        return Err("no runtime configuration is ready to run".to_owned());
    }
    let plan = Plan {
        benches: &s.benches,
        runtimes: &ready,
        runs: s.runs,
        quick: s.quick,
        threads: s.threads,
        timeout: s.timeout,
    };
    let bar = run::progress_bar(&plan);
    let benches = run::run_all(&plan, &bar);
    let report = Report {
        meta: Meta {
            date,
            machine: Machine::probe(),
            argv: report::meta::own_argv(),
            quick: s.quick,
            runs: s.runs,
            threads: s.threads,
            timeout_s: s.timeout.as_secs(),
        },
        runtimes: ready.iter().map(|r| r.name.clone()).collect(),
        skipped,
        benches,
    };
    print!("{}", report::table::render(&report));
    let out = s
        .out
        .clone()
        .unwrap_or_else(|| ws.target_dir.join("odeon-bench"));
    let written = report::write_files(&report, &out)
        .map_err(|e| format!("cannot write the reports to {}: {e}", out.display()))?;
    for path in written {
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}
