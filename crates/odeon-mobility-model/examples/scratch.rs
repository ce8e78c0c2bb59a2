//! scratch
use odeon_mobility_model::*;
use std::time::Instant;

fn c(node: u8, asks: &[bool]) -> Client {
    Client {
        node,
        asks: asks.to_vec(),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let which = args.get(1).map(String::as_str).unwrap_or("a");
    let base = Config {
        nodes: 3,
        clients: vec![],
        max_moves: 1,
        max_crashes: 0,
        crashable: 0,
        refusers: 0,
        timeouts: false,
        bugs: vec![],
    };
    let cfg = match which {
        "a" => Config {
            clients: vec![c(1, &[false, true]), c(2, &[false, false])],
            ..base
        },
        "b" => Config {
            clients: vec![c(1, &[false, true]), c(2, &[false, false])],
            max_moves: 2,
            ..base
        },
        "c" => Config {
            clients: vec![c(1, &[false, true])],
            max_moves: 2,
            max_crashes: 1,
            crashable: 0b111,
            timeouts: true,
            ..base
        },
        "d" => Config {
            nodes: 4,
            clients: vec![
                c(1, &[false, true, false]),
                c(2, &[true, false, false]),
                c(3, &[false, false, true]),
                c(0, &[false, true]),
            ],
            max_moves: 4,
            max_crashes: 1,
            crashable: 0b1111,
            refusers: 0b1000,
            timeouts: true,
            ..base
        },
        "e" => Config {
            nodes: 4,
            clients: vec![
                c(1, &[false, true, false]),
                c(2, &[true, false, false]),
                c(3, &[false, false, true]),
            ],
            max_moves: 4,
            max_crashes: 2,
            crashable: 0b1111,
            timeouts: true,
            ..base
        },
        "f" => Config {
            nodes: 4,
            clients: vec![
                c(1, &[false, true, false, false]),
                c(2, &[true, false, false, true]),
                c(3, &[false, false, true, false]),
            ],
            max_moves: 5,
            ..base
        },
        "g" => Config {
            clients: vec![c(1, &[false, true]), c(2, &[true, false])],
            max_moves: 3,
            max_crashes: 1,
            crashable: 0b111,
            timeouts: true,
            ..base
        },
        "h" => Config {
            clients: vec![c(1, &[false, true]), c(2, &[true])],
            max_moves: 2,
            ..base
        },
        "i" => Config {
            clients: vec![c(1, &[false, true]), c(2, &[false])],
            max_moves: 2,
            max_crashes: 1,
            crashable: 1,
            ..base
        },
        "j" => Config {
            clients: vec![c(1, &[false, true])],
            max_moves: 2,
            refusers: 0b100,
            timeouts: true,
            ..base
        },
        "k" => Config {
            clients: vec![c(1, &[false, true])],
            max_moves: 3,
            ..base
        },
        "l" => Config {
            clients: vec![c(1, &[false, true]), c(2, &[false])],
            max_moves: 2,
            max_crashes: 1,
            crashable: 0b111,
            ..base
        },
        "m" => Config {
            clients: vec![c(1, &[false, true])],
            max_moves: 2,
            max_crashes: 1,
            crashable: 1,
            timeouts: true,
            ..base
        },
        "n" => Config {
            clients: vec![c(1, &[true]), c(2, &[false])],
            max_moves: 2,
            max_crashes: 1,
            crashable: 1,
            ..base
        },
        _ => panic!(),
    };
    let mut cfg = cfg;
    for b in std::env::var("BUG")
        .unwrap_or_default()
        .split(',')
        .filter(|b| !b.is_empty())
    {
        cfg.bugs.push(match b {
            "flush" => Bug::SwitchWithoutFlush,
            "discard" => Bug::SourceDiscardsBeforeCommit,
            "activate" => Bug::TargetActivatesWithoutCommit,
            "gc" => Bug::GcWithoutFlush,
            "drain" => Bug::ReadyWithoutDrain,
            "straggler" => Bug::NoStragglerCheck,
            _ => panic!(),
        });
    }
    let t = Instant::now();
    let r = if args.get(2).map(String::as_str) == Some("fifo") {
        find(&cfg, 5_000_000, Property::Fifo)
    } else if args.get(2).map(String::as_str) == Some("walk") {
        let seed: u64 = args.get(3).map(|s| s.parse().unwrap()).unwrap_or(1);
        let n: u64 = args.get(4).map(|s| s.parse().unwrap()).unwrap_or(10_000);
        random_walks(&cfg, seed, n)
    } else {
        let limit: u64 = args.get(2).map(|s| s.parse().unwrap()).unwrap_or(2_000_000);
        exhaustive(&cfg, limit)
    };
    println!(
        "{which}: states {} terminals {} depth {} truncated {} events {:?} in {:?}",
        r.states,
        r.terminals,
        r.max_depth,
        r.truncated,
        Event::ALL
            .iter()
            .filter(|e| e.in_mask(r.events))
            .collect::<Vec<_>>(),
        t.elapsed()
    );
    if let Some(v) = r.violation {
        println!("{}", v.explain());
        if std::env::var("REPLAY").is_ok() {
            let mut st = State::initial(&cfg);
            let mut prev = describe(&st);
            for (i, a) in v.trace.iter().enumerate() {
                apply(&cfg, &mut st, *a);
                let now = describe(&st);
                println!("--- step {i}: {a:?}");
                for (x, y) in prev.lines().zip(now.lines()) {
                    if x != y && (x.starts_with("node") || x.starts_with("link")) {
                        println!("  {y}");
                    }
                }
                for y in now
                    .lines()
                    .filter(|l| l.starts_with("link") && !prev.contains(*l))
                {
                    println!("  + {y}");
                }
                prev = now;
            }
        }
    }
}
