//! `odeon-sharing-bench`: Encore's ping benchmark on odeon (issue 16): what a bestowed
//! handle, an atomic batch and a reservation cost beside a plain `tell`.
//! See [`HELP`] (`odeon-sharing-bench --help`) and the README beside `src/` for the
//! figures and what made a bestowed use cost more than a plain `tell` in CPU time.

mod ping;
mod remote;
// The same median/spread helpers as the mobility benchmark: one copy, shared.
#[path = "../../mobility/src/stats.rs"]
mod stats;

use std::process::ExitCode;

/// The help text.
const HELP: &str = "\
odeon-sharing-bench: what safe sharing costs in odeon (Encore's ping, issue 16)

usage: odeon-sharing-bench ping|remote [options]

ping: N empty messages to one actor from one sender, then an ask for the count;
nanoseconds per message of wall time and of CPU time (all threads, from
/proc/self/task/*/schedstat), interleaved rounds, median [min-max]:
  plain      ActorRef::tell
  bestowed   Bestowed::tell to an object the actor owns        (target at most 1.2x plain)
  batch      one ActorRef::atomic batch per ping                (target at most 1.1x plain)
  reserved   the whole stream through one Reservation           (target at most 1.05x plain)

remote: N empty messages from node b to an actor on node a (two nodes in one
process, loopback), ns per message, interleaved rounds, median [min-max]:
  tells10    remote tells, ten at a time
  batch10    one atomic batch of ten tells per ten messages (one frame each)
  tells      remote tells (the baseline of reserved)
  reserved   the whole stream through one remote Reservation

options:
  --messages N     messages per run                      (default 1000000)
  --rounds R       interleaved rounds, after one warm-up round  (default 7)
  --only A,B,..    run only these variants (e.g. for a profiler)

Build with --release: `cargo run --release -p odeon-sharing-bench -- ping`.
Numbers from a shared or loaded machine are only indicative.";

/// The parsed command line.
#[derive(Debug)]
struct Args {
    messages: u64,
    rounds: usize,
    variants: Vec<String>,
    remote: bool,
}

fn parse(mut it: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut a = Args {
        messages: 1_000_000,
        rounds: 7,
        variants: ping::VARIANTS.map(String::from).to_vec(),
        remote: false,
    };
    let mut only = None;
    let mut named = false;
    fn num<T: std::str::FromStr>(flag: &str, v: Option<String>) -> Result<T, String> {
        let v = v.ok_or_else(|| format!("{flag} needs a value"))?;
        v.parse()
            .map_err(|_| format!("{flag}: {v:?} is not a number"))
    }
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "ping" => named = true,
            "remote" => {
                named = true;
                a.remote = true;
                a.variants = remote::VARIANTS.map(String::from).to_vec();
            }
            "--messages" => a.messages = num::<u64>(&arg, it.next())?.max(1),
            "--rounds" => a.rounds = num::<usize>(&arg, it.next())?.max(1),
            "--only" => {
                let v = it.next().ok_or("--only needs a value")?;
                only = Some(
                    v.split(',')
                        .map(|s| s.trim().to_string())
                        .collect::<Vec<_>>(),
                );
            }
            other => return Err(format!("unknown argument {other:?} (see --help)")),
        }
    }
    if !named {
        return Err("name a benchmark: ping or remote (see --help)".into());
    }
    if let Some(only) = only {
        let known: &[&str] = if a.remote {
            &remote::VARIANTS
        } else {
            &ping::VARIANTS
        };
        if let Some(bad) = only.iter().find(|v| !known.contains(&v.as_str())) {
            return Err(format!("--only: unknown variant {bad:?}"));
        }
        a.variants = only;
    }
    Ok(a)
}

fn run(a: &Args) -> Result<(), String> {
    let variants: Vec<&str> = a.variants.iter().map(String::as_str).collect();
    if a.remote {
        return remote::remote(&variants, a.messages, a.rounds).map(drop);
    }
    ping::ping(&variants, a.messages, a.rounds).map(drop)
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1).peekable();
    if args
        .peek()
        .is_none_or(|a| a == "--help" || a == "-h" || a == "help")
    {
        println!("{HELP}");
        return ExitCode::SUCCESS;
    }
    match parse(args).and_then(|a| run(&a)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("odeon-sharing-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Result<Args, String> {
        parse(s.split_whitespace().map(String::from))
    }

    #[test]
    fn the_command_line_is_read() {
        let a = args("ping --messages 10 --rounds 2 --only plain,batch").unwrap();
        assert_eq!(a.messages, 10);
        assert_eq!(a.rounds, 2);
        assert_eq!(a.variants, ["plain", "batch"]);
        assert_eq!(args("ping").unwrap().variants.len(), 4);
        assert!(args("").is_err());
        assert!(args("ping --only warp").is_err());
        assert!(args("ping --rounds x").is_err());
        let r = args("remote --only batch10,tells10").unwrap();
        assert!(r.remote);
        assert_eq!(r.variants, ["batch10", "tells10"]);
        assert!(args("remote --only plain").is_err());
    }

    /// Every remote variant, tiny: each run handles every message (checked).
    #[test]
    fn every_remote_variant_runs_at_a_tiny_size() {
        let samples = remote::remote(&remote::VARIANTS, 200, 1).unwrap();
        assert_eq!(samples.len(), 4);
        assert!(samples.iter().all(|s| s.len() == 1));
    }

    /// Every variant, tiny: each run handles every ping (the count is checked).
    #[test]
    fn every_variant_runs_at_a_tiny_size() {
        let samples = ping::ping(&ping::VARIANTS, 500, 2).unwrap();
        assert_eq!(samples.len(), 4);
        assert!(samples.iter().all(|s| s.len() == 2));
    }
}
