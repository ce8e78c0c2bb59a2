//! The interleaved session: every runtime once, then every runtime again.
//!
//! For each benchmark (catalog order), for run 1..=N, for each configuration, one
//! process is started. So the order is A B C A B C ..., and a drift of the machine
//! (another job starting, the CPU heating up and throttling) lands on every runtime
//! alike instead of on whichever happened to run last. A configuration that is n/a
//! or FAILED for a benchmark is not started again for it.

use std::process::Command;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use savina::Bench;

use crate::parse::{self, Attempt};
use crate::prepare::Ready;
use crate::process;
use crate::results::{BenchResult, Cell, CellState};

/// What to run.
#[derive(Clone, Debug)]
pub struct Plan<'a> {
    /// Benchmarks, in order.
    pub benches: &'a [&'static Bench],
    /// Configurations, in order.
    pub runtimes: &'a [Ready],
    /// Runs per (benchmark, configuration).
    pub runs: u32,
    /// Quick parameters.
    pub quick: bool,
    /// `--threads` for every driver.
    pub threads: usize,
    /// Per-process time limit.
    pub timeout: Duration,
}

impl Plan<'_> {
    /// Processes the plan starts at most.
    pub fn total(&self) -> u64 {
        (self.benches.len() * self.runtimes.len()) as u64 * u64::from(self.runs)
    }
}

/// A progress bar for `plan` (hidden when stderr is not a terminal).
pub fn progress_bar(plan: &Plan) -> ProgressBar {
    let bar = ProgressBar::new(plan.total());
    if let Ok(style) =
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// Runs the plan; one result per benchmark, one cell per configuration.
pub fn run_all(plan: &Plan, bar: &ProgressBar) -> Vec<BenchResult> {
    let mut results = Vec::with_capacity(plan.benches.len());
    for bench in plan.benches {
        let params: Vec<(String, String)> = bench
            .params(plan.quick)
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        let mut cells = vec![Cell::new(); plan.runtimes.len()];
        for run in 1..=plan.runs {
            for (runtime, cell) in plan.runtimes.iter().zip(cells.iter_mut()) {
                bar.set_message(format!(
                    "{} · {} · run {run}/{}",
                    bench.id, runtime.name, plan.runs
                ));
                if cell.wants_more() {
                    let finished =
                        process::run(command(plan, runtime, bench.id, &params), plan.timeout);
                    record(cell, parse::interpret(bench.id, &finished));
                    if let CellState::Failed(why) = &cell.state {
                        bar.suspend(|| {
                            eprintln!("FAILED {} on {} (run {run}): {why}", bench.id, runtime.name)
                        });
                    }
                }
                bar.inc(1);
            }
        }
        results.push(BenchResult {
            bench,
            params,
            cells,
        });
    }
    bar.finish_and_clear();
    results
}

/// The driver command line for one run.
pub fn command(plan: &Plan, runtime: &Ready, id: &str, params: &[(String, String)]) -> Command {
    let mut cmd = Command::new(&runtime.program);
    cmd.args(&runtime.prefix)
        .arg(id)
        .args(&runtime.suffix)
        .args(["--iterations", "1"])
        .args(["--warmup", &runtime.warmup.to_string()])
        .args(["--threads", &plan.threads.to_string()])
        .args(
            params
                .iter()
                .flat_map(|(k, v)| [format!("-{k}"), v.clone()]),
        )
        .envs(runtime.env.iter().map(|(k, v)| (k, v)));
    cmd
}

/// Folds one attempt into the cell.
fn record(cell: &mut Cell, attempt: Attempt) {
    match attempt {
        Attempt::Measured { ns, detail } => {
            cell.times_ns.push(ns);
            cell.detail = detail;
        }
        Attempt::Unsupported => cell.state = CellState::Unsupported,
        Attempt::Failed(why) => cell.state = CellState::Failed(why),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn command_line_follows_the_protocol() {
        let ready = Ready {
            name: "pekko/jdk17".into(),
            program: PathBuf::from("bash"),
            prefix: vec!["run.sh".into()],
            suffix: vec!["--variant".into(), "jdk17".into()],
            env: vec![("JAVA_HOME".into(), "/j".into())],
            warmup: 3,
        };
        let benches = [savina::catalog::find("threadring").unwrap()];
        let plan = Plan {
            benches: &benches,
            runtimes: std::slice::from_ref(&ready),
            runs: 2,
            quick: true,
            threads: 2,
            timeout: Duration::from_secs(1),
        };
        let params = [
            ("n".to_owned(), "10".to_owned()),
            ("r".to_owned(), "2000".to_owned()),
        ];
        let cmd = command(&plan, &ready, "threadring", &params);
        let args: Vec<_> = cmd
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let expected =
            "run.sh threadring --variant jdk17 --iterations 1 --warmup 3 --threads 2 -n 10 -r 2000";
        assert_eq!(args.join(" "), expected);
        assert_eq!(plan.total(), 2);
    }

    #[test]
    fn a_failure_after_times_keeps_them_but_stops_the_cell() {
        let mut cell = Cell::new();
        record(
            &mut cell,
            Attempt::Measured {
                ns: 5,
                detail: "ok".into(),
            },
        );
        record(&mut cell, Attempt::Failed("timed out after 60 s".into()));
        assert_eq!(cell.times_ns, [5]);
        assert!(!cell.wants_more());
        assert_eq!(cell.valid_times(), None);
    }
}
