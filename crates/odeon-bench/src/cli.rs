//! The command line, and the settings it resolves to.

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use savina::{Bench, catalog};

/// Runs the Savina suite on odeon and its peers, interleaved, and reports.
#[derive(Parser, Debug)]
#[command(name = "odeon-bench", version)]
pub struct Args {
    /// Use the catalog's quick parameters, 1 JVM warm-up iteration and a 60 s timeout.
    #[arg(long)]
    pub quick: bool,

    /// Run only these benchmarks (catalog ids; they still run in catalog order).
    #[arg(long, value_delimiter = ',', value_name = "ID,..")]
    pub only: Vec<String>,

    /// Run only the runtime configurations whose name starts with one of these
    /// (`actix` selects `actix/single` and `actix/per-core`).
    #[arg(long, value_delimiter = ',', value_name = "NAME,..")]
    pub runtimes: Vec<String>,

    /// Processes started per (benchmark, runtime).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: u32,

    /// Where the reports go [default: odeon-bench in the cargo target dir].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Seconds before a driver process is killed [default: 300, 60 with --quick].
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: Option<u64>,

    /// Worker threads a runtime may use [default: the number of cores].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub threads: Option<u64>,

    /// Add a runtime configuration NAME whose driver is COMMAND (split on spaces),
    /// e.g. an older build of odeon; a built-in NAME is replaced. A NAME that starts
    /// with "odeon" is a build of odeon: shown, but never taken as the best peer.
    /// Repeatable.
    #[arg(long = "driver", value_name = "NAME=COMMAND")]
    pub drivers: Vec<String>,

    /// Do not build: run the driver binaries and scripts as they are.
    #[arg(long)]
    pub no_build: bool,
}

/// A runtime configuration given with `--driver`.
#[derive(Clone, Debug, PartialEq)]
pub struct CustomDriver {
    /// Its name in reports.
    pub name: String,
    /// Program and leading arguments.
    pub argv: Vec<String>,
}

/// The resolved settings of a session.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Quick parameters.
    pub quick: bool,
    /// The benchmarks to run, in catalog order.
    pub benches: Vec<&'static Bench>,
    /// Name prefixes of the runtimes to run; empty: all.
    pub runtime_filter: Vec<String>,
    /// Runs per (benchmark, runtime).
    pub runs: u32,
    /// Explicit output directory.
    pub out: Option<PathBuf>,
    /// Per-process timeout.
    pub timeout: Duration,
    /// `--threads` for every driver.
    pub threads: usize,
    /// `--driver` configurations.
    pub drivers: Vec<CustomDriver>,
    /// Build before running.
    pub build: bool,
}

impl Args {
    /// Checks what clap cannot (benchmark ids, `--driver` syntax) and fills defaults.
    pub fn resolve(self) -> Result<Settings, String> {
        let benches = select_benches(&self.only)?;
        let drivers = self
            .drivers
            .iter()
            .map(|d| parse_driver(d))
            .collect::<Result<Vec<_>, _>>()?;
        let default_timeout = if self.quick { 60 } else { 300 };
        Ok(Settings {
            quick: self.quick,
            benches,
            runtime_filter: self
                .runtimes
                .into_iter()
                .filter(|r| !r.is_empty())
                .collect(),
            runs: self.runs,
            out: self.out,
            timeout: Duration::from_secs(self.timeout.unwrap_or(default_timeout)),
            threads: self
                .threads
                .map_or_else(savina::protocol::default_threads, |t| t as usize),
            drivers,
            build: !self.no_build,
        })
    }
}

/// The catalog entries named by `only` (all when empty), in catalog order.
fn select_benches(only: &[String]) -> Result<Vec<&'static Bench>, String> {
    let wanted: Vec<&str> = only
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .collect();
    if let Some(unknown) = wanted.iter().find(|id| catalog::find(id).is_none()) {
        let ids: Vec<_> = catalog::ALL.iter().map(|b| b.id).collect();
        return Err(format!(
            "--only: unknown benchmark {unknown:?} (known: {})",
            ids.join(",")
        ));
    }
    Ok(catalog::ALL
        .iter()
        .filter(|b| wanted.is_empty() || wanted.contains(&b.id))
        .collect())
}

/// `NAME=COMMAND` of `--driver`.
fn parse_driver(spec: &str) -> Result<CustomDriver, String> {
    let (name, command) = spec
        .split_once('=')
        .ok_or_else(|| format!("--driver {spec:?}: expected NAME=COMMAND"))?;
    let argv: Vec<String> = command.split_whitespace().map(str::to_owned).collect();
    if name.trim().is_empty() || argv.is_empty() {
        return Err(format!("--driver {spec:?}: expected NAME=COMMAND"));
    }
    Ok(CustomDriver {
        name: name.trim().to_owned(),
        argv,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<Settings, String> {
        let argv = std::iter::once("odeon-bench").chain(line.split_whitespace());
        Args::try_parse_from(argv)
            .map_err(|e| e.to_string())?
            .resolve()
    }

    #[test]
    fn defaults_run_everything_five_times() {
        let s = parse("").unwrap();
        assert_eq!(s.benches.len(), catalog::ALL.len());
        assert_eq!(s.runs, 5);
        assert!(!s.quick && s.build);
        assert_eq!(s.timeout, Duration::from_secs(300));
        assert!(s.runtime_filter.is_empty() && s.drivers.is_empty() && s.out.is_none());
    }

    #[test]
    fn quick_shortens_the_timeout_unless_given() {
        assert_eq!(parse("--quick").unwrap().timeout, Duration::from_secs(60));
        let s = parse("--quick --timeout 7").unwrap();
        assert_eq!(s.timeout, Duration::from_secs(7));
    }

    #[test]
    fn only_keeps_catalog_order() {
        let s = parse("--only counting,pingpong --runs 2 --out /tmp/x").unwrap();
        let ids: Vec<_> = s.benches.iter().map(|b| b.id).collect();
        assert_eq!(ids, ["pingpong", "counting"]);
        assert_eq!(s.runs, 2);
        assert_eq!(s.out, Some(PathBuf::from("/tmp/x")));
    }

    #[test]
    fn runtimes_and_drivers_parse() {
        let s = parse("--runtimes odeon,actix --driver old=/bin/echo%a --threads 1").unwrap();
        assert_eq!(s.runtime_filter, ["odeon", "actix"]);
        assert_eq!(s.threads, 1);
        let d = parse_driver("old=/opt/savina-odeon --x 1").unwrap();
        assert_eq!(d.name, "old");
        assert_eq!(d.argv, ["/opt/savina-odeon", "--x", "1"]);
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        assert!(
            parse("--only nosuch")
                .unwrap_err()
                .contains("unknown benchmark")
        );
        assert!(parse("--runs 0").is_err());
        assert!(parse("--runs many").is_err());
        assert!(parse("--timeout 0").is_err());
        assert!(
            parse("--driver nameonly")
                .unwrap_err()
                .contains("NAME=COMMAND")
        );
        assert!(parse("--driver =cmd").is_err());
        assert!(parse("--bogus").is_err());
    }
}
