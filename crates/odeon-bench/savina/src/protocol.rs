//! How the runner talks to a driver: one process per run, results on stdout.
//!
//! Every runtime (odeon, actix, kameo, ractor, Erlang, Pekko, CAF) has a *driver*: a
//! program that runs one benchmark and reports. The runner starts it as
//!
//! ```text
//! <driver> <bench-id> [--variant V] [--iterations K] [--warmup W] [--threads T] [--quick]
//!          [-flag value]...
//! ```
//!
//! 1. `bench-id` is an id of [`crate::catalog`]. `-flag value` pairs are Savina's own
//!    flags (`-n 40000`). The runner always passes every parameter of the benchmark;
//!    Rust drivers start from the catalog's defaults (or quick values with `--quick`)
//!    so that they can also be run by hand.
//! 2. `--threads T` is the most worker threads the runtime may use (default: the
//!    number of cores). `--variant V` picks a configuration of that runtime (actix:
//!    `single` or `per-core`).
//! 3. The driver runs `W` warm-up iterations (default 0), then `K` measured ones
//!    (default 1), each timed from the creation of the actor system to the moment
//!    every actor has finished, as Savina times them.
//! 4. For every iteration, warm-up included, it prints one line to stdout:
//!    `SAVINA-RESULT {json}` with the fields of [`ResultLine`]. Every other line is
//!    ignored by the runner.
//! 5. Each iteration checks its own result (counts, checksums, sortedness, expected
//!    values). A wrong answer is `"valid": false` with the reason in `detail`.
//! 6. Exit status: 0 when every iteration validated, 3 when one did not, 2 for bad
//!    arguments (with a message on stderr), 4 when the driver does not implement the
//!    benchmark (after printing `SAVINA-UNSUPPORTED <bench-id>`).

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::catalog::{self, Bench};

/// The prefix of a result line.
pub const RESULT_PREFIX: &str = "SAVINA-RESULT ";
/// The prefix of the line a driver prints for a benchmark it does not implement.
pub const UNSUPPORTED_PREFIX: &str = "SAVINA-UNSUPPORTED ";
/// Exit status: a result did not validate.
pub const EXIT_INVALID: i32 = 3;
/// Exit status: bad arguments.
pub const EXIT_USAGE: i32 = 2;
/// Exit status: benchmark not implemented by this driver.
pub const EXIT_UNSUPPORTED: i32 = 4;

/// One iteration's report, as printed after [`RESULT_PREFIX`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResultLine {
    /// The benchmark id.
    pub bench: String,
    /// The runtime (`odeon`, `actix`, ...).
    pub runtime: String,
    /// The runtime's configuration, empty for its only one.
    #[serde(default)]
    pub variant: String,
    /// 0-based, counted separately for warm-up and measured iterations.
    pub iteration: u32,
    /// A warm-up iteration, not to be counted.
    pub warmup: bool,
    /// Wall-clock time of the iteration, in nanoseconds.
    pub ns: u64,
    /// Whether the result validated.
    pub valid: bool,
    /// What was checked (`"40000 round trips"`) or why it failed.
    pub detail: String,
}

impl ResultLine {
    /// Parses a driver's stdout line; `None` for any line that is not a result.
    pub fn parse(line: &str) -> Option<Result<Self, serde_json::Error>> {
        let json = line.trim().strip_prefix(RESULT_PREFIX)?;
        Some(serde_json::from_str(json))
    }
}

/// What one iteration of a benchmark produced.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The timed region.
    pub elapsed: Duration,
    /// `Ok(what was checked)` or `Err(why the result is wrong)`.
    pub check: Result<String, String>,
}

impl Outcome {
    /// An outcome from a duration and a check.
    pub fn new(elapsed: Duration, check: Result<String, String>) -> Self {
        Self { elapsed, check }
    }

    /// Times `run`, which returns the check.
    pub fn timed(run: impl FnOnce() -> Result<String, String>) -> Self {
        let start = Instant::now();
        let check = run();
        Self::new(start.elapsed(), check)
    }
}

/// `Ok("<what> = <expected>")` when `got == expected`, else an `Err` naming both.
pub fn expect_eq<T: PartialEq + fmt::Debug>(
    what: &str,
    got: T,
    expected: T,
) -> Result<String, String> {
    if got == expected {
        Ok(format!("{what} = {expected:?}"))
    } else {
        Err(format!("{what}: got {got:?}, expected {expected:?}"))
    }
}

/// A benchmark's parameters and the run's settings.
#[derive(Clone, Debug)]
pub struct Params {
    bench: &'static Bench,
    values: BTreeMap<String, String>,
    /// The most worker threads the runtime may use.
    pub threads: usize,
    /// The runtime configuration asked for (empty: the default one).
    pub variant: String,
}

impl Params {
    /// The catalog's parameters for `bench` (quick ones if asked), default settings.
    pub fn for_bench(bench: &'static Bench, quick: bool) -> Self {
        Self {
            bench,
            values: bench
                .params(quick)
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect(),
            threads: default_threads(),
            variant: String::new(),
        }
    }

    /// The benchmark.
    pub fn bench(&self) -> &'static Bench {
        self.bench
    }

    /// Sets a parameter; an unknown flag or an unparsable value is an error.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        if !self.bench.defaults.iter().any(|(k, _)| *k == key) {
            let known: Vec<_> = self
                .bench
                .defaults
                .iter()
                .map(|(k, _)| format!("-{k}"))
                .collect();
            return Err(format!(
                "{}: unknown parameter -{key} (known: {})",
                self.bench.id,
                known.join(" ")
            ));
        }
        if value.parse::<f64>().is_err() {
            return Err(format!(
                "{}: -{key} {value:?} is not a number",
                self.bench.id
            ));
        }
        // A parameter whose default is an integer takes integers only, so that `get`
        // never meets a value it cannot parse.
        let integral = self
            .bench
            .defaults
            .iter()
            .any(|(k, d)| *k == key && d.parse::<i128>().is_ok());
        if integral && value.parse::<u64>().is_err() {
            return Err(format!(
                "{}: -{key} {value:?} is not a non-negative integer",
                self.bench.id
            ));
        }
        self.values.insert(key.to_owned(), value.to_owned());
        Ok(())
    }

    /// A parameter parsed as `T`. Panics on a key the catalog does not list for this
    /// benchmark: that is a bug in the driver, not bad input (values are checked when
    /// they are set).
    pub fn get<T: FromStr>(&self, key: &str) -> T {
        let raw = self
            .values
            .get(key)
            .unwrap_or_else(|| panic!("{}: the catalog has no parameter {key}", self.bench.id));
        match raw.parse() {
            Ok(v) => v,
            Err(_) => panic!(
                "{}: -{key} {raw:?} does not fit {}",
                self.bench.id,
                std::any::type_name::<T>()
            ),
        }
    }

    /// Every parameter, as `-flag value` arguments for a driver.
    pub fn to_args(&self) -> Vec<String> {
        self.values
            .iter()
            .flat_map(|(k, v)| [format!("-{k}"), v.clone()])
            .collect()
    }
}

/// The number of cores.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A parsed driver command line.
#[derive(Clone, Debug)]
pub struct Invocation {
    /// Parameters and settings.
    pub params: Params,
    /// Measured iterations.
    pub iterations: u32,
    /// Warm-up iterations.
    pub warmup: u32,
}

impl Invocation {
    /// Parses the arguments after the program name.
    pub fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<Self, String> {
        let mut args = args.into_iter().peekable();
        let id = args.next().ok_or_else(usage)?;
        let bench =
            catalog::find(&id).ok_or_else(|| format!("unknown benchmark {id:?}\n{}", usage()))?;
        let rest: Vec<String> = args.collect();
        let quick = rest.iter().any(|a| a == "--quick");
        let mut inv = Self {
            params: Params::for_bench(bench, quick),
            iterations: 1,
            warmup: 0,
        };
        let mut i = 0;
        while i < rest.len() {
            let flag = rest[i].as_str();
            if flag == "--quick" {
                i += 1;
                continue;
            }
            let value = rest
                .get(i + 1)
                .ok_or_else(|| format!("{flag} needs a value"))?;
            let number = |v: &str| {
                v.parse::<u32>()
                    .map_err(|_| format!("{flag} {v:?} is not a count"))
            };
            match flag {
                "--variant" => inv.params.variant = value.clone(),
                "--iterations" => inv.iterations = number(value)?,
                "--warmup" => inv.warmup = number(value)?,
                "--threads" => inv.params.threads = number(value)?.max(1) as usize,
                f if f.starts_with('-') && !f.starts_with("--") => {
                    inv.params.set(&f[1..], value)?
                }
                f => return Err(format!("unexpected argument {f:?}\n{}", usage())),
            }
            i += 2;
        }
        Ok(inv)
    }
}

fn usage() -> String {
    let ids: Vec<_> = catalog::ALL.iter().map(|b| b.id).collect();
    format!(
        "usage: <driver> <bench> [--variant V] [--iterations K] [--warmup W] [--threads T] [--quick] [-flag value]...\nbenchmarks: {}",
        ids.join(" ")
    )
}

/// The `main` of a Rust driver: parses the command line, runs the iterations through
/// `run` and prints the result lines. `run` returns `None` for a benchmark the driver
/// does not implement. Never returns.
pub fn drive(runtime: &str, run: impl Fn(&Params) -> Option<Outcome>) -> ! {
    let inv = match Invocation::parse(std::env::args().skip(1)) {
        Ok(inv) => inv,
        Err(e) => {
            eprintln!("{runtime}: {e}");
            std::process::exit(EXIT_USAGE);
        }
    };
    let bench = inv.params.bench().id;
    let mut all_valid = true;
    let runs = (0..inv.warmup)
        .map(|i| (i, true))
        .chain((0..inv.iterations).map(|i| (i, false)));
    for (iteration, warmup) in runs {
        let Some(outcome) = run(&inv.params) else {
            println!("{UNSUPPORTED_PREFIX}{bench}");
            std::process::exit(EXIT_UNSUPPORTED);
        };
        let line = ResultLine {
            bench: bench.to_owned(),
            runtime: runtime.to_owned(),
            variant: inv.params.variant.clone(),
            iteration,
            warmup,
            ns: u64::try_from(outcome.elapsed.as_nanos()).unwrap_or(u64::MAX),
            valid: outcome.check.is_ok(),
            detail: match outcome.check {
                Ok(d) | Err(d) => d,
            },
        };
        all_valid &= line.valid;
        let json = serde_json::to_string(&line).expect("a ResultLine always serializes");
        println!("{RESULT_PREFIX}{json}");
    }
    std::process::exit(if all_valid { 0 } else { EXIT_INVALID });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn flags_override_defaults_and_settings_parse() {
        let inv = Invocation::parse(args(
            "threadring -r 7 --iterations 3 --threads 1 --variant single",
        ))
        .unwrap();
        assert_eq!(inv.params.get::<u64>("r"), 7);
        assert_eq!(inv.params.get::<u64>("n"), 100);
        assert_eq!((inv.iterations, inv.warmup, inv.params.threads), (3, 0, 1));
        assert_eq!(inv.params.variant, "single");
        assert_eq!(inv.params.to_args(), args("-n 100 -r 7"));
    }

    #[test]
    fn quick_then_explicit_flags_win() {
        let inv = Invocation::parse(args("pingpong -n 5 --quick")).unwrap();
        assert_eq!(inv.params.get::<u32>("n"), 5);
        let inv = Invocation::parse(args("pingpong --quick")).unwrap();
        assert_eq!(inv.params.get::<u32>("n"), 2000);
    }

    #[test]
    fn bad_input_is_a_clear_error() {
        assert!(
            Invocation::parse(args("nosuch"))
                .unwrap_err()
                .contains("unknown benchmark")
        );
        assert!(
            Invocation::parse(args("pingpong -x 1"))
                .unwrap_err()
                .contains("unknown parameter -x")
        );
        assert!(
            Invocation::parse(args("pingpong -n ten"))
                .unwrap_err()
                .contains("not a number")
        );
        for bad in ["pingpong -n 1.5", "pingpong -n -3"] {
            let err = Invocation::parse(args(bad)).unwrap_err();
            assert!(err.contains("not a non-negative integer"), "{err}");
        }
        let logmap = Invocation::parse(args("logmap -r 3.5")).unwrap();
        assert_eq!(logmap.params.get::<f64>("r"), 3.5);
        assert!(
            Invocation::parse(args("pingpong -n"))
                .unwrap_err()
                .contains("needs a value")
        );
        assert!(
            Invocation::parse(args("pingpong --iterations -1"))
                .unwrap_err()
                .contains("not a count")
        );
    }

    #[test]
    fn result_lines_round_trip_and_other_lines_are_ignored() {
        let line = ResultLine {
            bench: "pingpong".into(),
            runtime: "odeon".into(),
            variant: String::new(),
            iteration: 0,
            warmup: false,
            ns: 42,
            valid: true,
            detail: "40000 round trips".into(),
        };
        let text = format!("{RESULT_PREFIX}{}", serde_json::to_string(&line).unwrap());
        assert_eq!(ResultLine::parse(&text).unwrap().unwrap(), line);
        assert!(ResultLine::parse("hello").is_none());
        assert!(ResultLine::parse("SAVINA-RESULT {").unwrap().is_err());
    }
}
