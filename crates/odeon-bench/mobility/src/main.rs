//! `odeon-mobility-bench`: SALSA Lite's mobility benchmarks on odeon (issue 14).
//! See [`HELP`] (`odeon-mobility-bench --help`).

mod local;
mod moves;
mod stats;
mod steps;
mod theater;

use std::process::ExitCode;

use local::LocalSizes;
use theater::TheaterSizes;

/// The help text.
const HELP: &str = "\
odeon-mobility-bench: what mobility costs in odeon (SALSA Lite's benchmarks, issue 14)

usage: odeon-mobility-bench <bench>... [options]
       odeon-mobility-bench all [options]

benchmarks (one process; the nodes are linked over loopback):
  thread-ring      a token round a ring of plain, remote-capable and mobile actors:
                   nanoseconds per message, interleaved rounds, median [min-max]
                   (targets: remote-capable +0%, mobile at most +5%)
  create           creating plain, remote-capable and mobile actors: ns per actor
                   (targets: remote-capable at most +10%, mobile at most +50%)
  migration-rings  N actors each moving M times round three nodes, all at once:
                   moves per second, per-move latency p50/p99 (asked to arrived)
                   (targets: p50 under 200 us, at least 10,000 moves/s)
  big-state        one actor with a big state (1 MiB) moving round three nodes
  queued           one actor with 10,000 queued messages moving to another node
  move-steps       one small actor moving round three nodes: the median time of
                   each step of a move (freeze, offer, ready, commit, activate)

benchmark on three processes (this one starts itself twice more, on loopback):
  theater-rings    rings of remote-capable and of mobile actors spread over three
                   nodes, a token round each ring, all rings at once: messages per
                   second in aggregate, interleaved rounds, median [min-max]

options (defaults are small: each benchmark runs in seconds):
  --rounds R       interleaved rounds of thread-ring and create,
                   after one warm-up round that is not counted       (default 7)
  --ring N         actors in the ring                                (default 503)
  --hops H         token hops per thread-ring run                    (default 2000000)
  --create N       actors created per create run                     (default 100000)
  --actors A,B,..  actor counts of migration-rings                   (default 1,10,100)
  --moves M        moves per actor in migration-rings and big-state  (default 100)
  --state-bytes B  the state of big-state                            (default 1048576)
  --queued Q       queued messages of queued                         (default 10000)
  --repeat K       moves measured by queued                          (default 5)
  --rings A,B,..   ring counts of theater-rings                      (default 1,10,100,320)
  --ring-size S    actors per ring of theater-rings                  (default 3)
  --theater-msgs M messages per theater-rings run, shared by its rings (default 20000)

Build with --release: `cargo run --release -p odeon-mobility-bench -- all`.
Numbers from a shared or loaded machine are only indicative.";

/// The parsed command line.
#[derive(Debug)]
struct Args {
    benches: Vec<String>,
    local: LocalSizes,
    actors: Vec<usize>,
    moves: u32,
    state_bytes: usize,
    queued: u64,
    repeat: u32,
    theater: TheaterSizes,
}

const BENCHES: [&str; 7] = [
    "thread-ring",
    "create",
    "migration-rings",
    "big-state",
    "queued",
    "theater-rings",
    "move-steps",
];

fn counts(flag: &str, v: Option<String>) -> Result<Vec<usize>, String> {
    let v = v.ok_or_else(|| format!("{flag} needs a value"))?;
    v.split(',')
        .map(|n| n.trim().parse::<usize>().map(|n| n.max(1)))
        .collect::<Result<_, _>>()
        .map_err(|_| format!("{flag}: {v:?} is not a list of numbers"))
}

fn parse(mut it: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut a = Args {
        benches: Vec::new(),
        local: LocalSizes {
            rounds: 7,
            ring: 503,
            hops: 2_000_000,
            create: 100_000,
        },
        actors: vec![1, 10, 100],
        moves: 100,
        state_bytes: 1 << 20,
        queued: 10_000,
        repeat: 5,
        theater: TheaterSizes {
            rings: vec![1, 10, 100, 320],
            ring_size: 3,
            msgs: 20_000,
            rounds: 7,
        },
    };
    fn num<T: std::str::FromStr>(flag: &str, v: Option<String>) -> Result<T, String> {
        let v = v.ok_or_else(|| format!("{flag} needs a value"))?;
        v.parse()
            .map_err(|_| format!("{flag}: {v:?} is not a number"))
    }
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--rounds" => a.local.rounds = num::<usize>(&arg, it.next())?.max(1),
            "--ring" => a.local.ring = num::<usize>(&arg, it.next())?.max(2),
            "--hops" => a.local.hops = num(&arg, it.next())?,
            "--create" => a.local.create = num::<usize>(&arg, it.next())?.max(1),
            "--actors" => a.actors = counts(&arg, it.next())?,
            "--rings" => a.theater.rings = counts(&arg, it.next())?,
            "--ring-size" => a.theater.ring_size = num::<usize>(&arg, it.next())?.max(2),
            "--theater-msgs" => a.theater.msgs = num::<u64>(&arg, it.next())?.max(1),
            "--moves" => a.moves = num::<u32>(&arg, it.next())?.max(1),
            "--state-bytes" => a.state_bytes = num(&arg, it.next())?,
            "--queued" => a.queued = num(&arg, it.next())?,
            "--repeat" => a.repeat = num::<u32>(&arg, it.next())?.max(1),
            "all" => a.benches.extend(BENCHES.map(String::from)),
            b if BENCHES.contains(&b) => a.benches.push(b.to_string()),
            other => return Err(format!("unknown argument {other:?} (see --help)")),
        }
    }
    a.theater.rounds = a.local.rounds;
    if a.benches.is_empty() {
        return Err("name a benchmark, or all (see --help)".into());
    }
    Ok(a)
}

fn run(a: &Args) -> Result<(), String> {
    for bench in &a.benches {
        match bench.as_str() {
            "thread-ring" => local::thread_ring(a.local)?,
            "create" => local::create(a.local)?,
            "migration-rings" => moves::migration_rings(&a.actors, a.moves)?,
            "big-state" => moves::big_state(a.state_bytes, a.moves.min(20))?,
            "theater-rings" => theater::theater_rings(&a.theater)?,
            "move-steps" => steps::move_steps(a.moves)?,
            _ => moves::queued(a.queued, a.repeat)?,
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1).peekable();
    if args.peek().is_some_and(|a| a == theater::CHILD) {
        let rest: Vec<String> = args.skip(1).collect();
        return match theater::child_main(&rest) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("odeon-mobility-bench: {e}");
                ExitCode::FAILURE
            }
        };
    }
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
            eprintln!("odeon-mobility-bench: {e}");
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
        let a = args(
            "thread-ring queued --rounds 3 --actors 1,32 --queued 7 --rings 2,5 --ring-size 4",
        )
        .unwrap();
        assert_eq!(a.benches, ["thread-ring", "queued"]);
        assert_eq!(a.local.rounds, 3);
        assert_eq!(a.theater.rounds, 3);
        assert_eq!(a.actors, [1, 32]);
        assert_eq!(a.queued, 7);
        assert_eq!(a.theater.rings, [2, 5]);
        assert_eq!(a.theater.ring_size, 4);
        assert_eq!(args("all").unwrap().benches.len(), BENCHES.len());
        assert!(args("").is_err());
        assert!(args("warp").is_err());
        assert!(args("create --rounds x").is_err());
    }

    /// Every one-process benchmark, tiny: they run to the end and their checks pass
    /// (`theater-rings` starts the bench binary itself: `tests/theater.rs`).
    #[test]
    fn every_benchmark_runs_at_a_tiny_size() {
        let a = args(
            "thread-ring create migration-rings big-state queued move-steps --rounds 1 --ring 4 --hops 100 --create 10 --actors 1,3 --moves 4 \
             --state-bytes 4096 --queued 50 --repeat 1",
        )
        .unwrap();
        run(&a).unwrap();
    }
}
