//! Explores one named configuration from the command line, for work on the protocol
//! beyond what the tests run (bigger searches, more walks, other seeds, defects).
//!
//! ```text
//! cargo run --release -p odeon-mobility-model --example explore -- CONFIG [MODE]
//!   CONFIG  one of the names below
//!   MODE    exhaustive [MAX_STATES]     (default; MAX_STATES 5000000)
//!           walks SEED COUNT            seeded random schedules
//!           find PROPERTY [MAX_STATES]  search for one property only (e.g. Fifo)
//! BUGS=SwitchWithoutFlush,NoStragglerCheck ...   adds deliberate defects
//! TRACE=1                                       prints the state after each step of a violation
//! ```

use std::time::Instant;

use odeon_mobility_model::{
    Bug, Client, Config, Event, Property, State, apply, describe, exhaustive, find, random_walks,
};

fn client(node: u8, script: &[bool]) -> Client {
    Client {
        node,
        asks: script.to_vec(),
    }
}

/// The named configurations (the tests use some of them).
fn config(name: &str) -> Option<Config> {
    let base = Config {
        nodes: 3,
        clients: vec![client(1, &[false, true])],
        max_moves: 1,
        max_crashes: 0,
        crashable: 0,
        refusers: 0,
        timeouts: false,
        bugs: Vec::new(),
    };
    let two_senders = vec![client(1, &[false, true]), client(2, &[false, false])];
    let four = vec![
        client(1, &[false, true, false]),
        client(2, &[true, false, false]),
        client(3, &[false, false, true]),
    ];
    Some(match name {
        "one-move" => Config {
            clients: two_senders,
            ..base
        },
        "two-moves-two-senders" => Config {
            clients: two_senders,
            max_moves: 2,
            ..base
        },
        "three-moves" => Config {
            max_moves: 3,
            ..base
        },
        "crash-anywhere" => Config {
            max_moves: 2,
            max_crashes: 1,
            crashable: 0b111,
            timeouts: true,
            ..base
        },
        "birth-crash" => Config {
            clients: vec![client(1, &[true]), client(2, &[false])],
            max_moves: 2,
            max_crashes: 1,
            crashable: 0b001,
            ..base
        },
        "refusal" => Config {
            max_moves: 2,
            refusers: 0b100,
            timeouts: true,
            ..base
        },
        "crash-two-senders" => Config {
            clients: two_senders,
            max_moves: 3,
            max_crashes: 1,
            crashable: 0b111,
            timeouts: true,
            ..base
        },
        "four-nodes" => Config {
            nodes: 4,
            clients: vec![
                client(1, &[false, true, false, false]),
                client(2, &[true, false, false, true]),
                client(3, &[false, false, true, false]),
            ],
            max_moves: 5,
            ..base
        },
        "four-nodes-crash" => Config {
            nodes: 4,
            clients: [four.clone(), vec![client(0, &[false, true])]].concat(),
            max_moves: 4,
            max_crashes: 1,
            crashable: 0b1111,
            refusers: 0b1000,
            timeouts: true,
            ..base
        },
        "four-nodes-two-crashes" => Config {
            nodes: 4,
            clients: four,
            max_moves: 4,
            max_crashes: 2,
            crashable: 0b1111,
            timeouts: true,
            ..base
        },
        _ => return None,
    })
}

fn bug(name: &str) -> Bug {
    match name {
        "SwitchWithoutFlush" => Bug::SwitchWithoutFlush,
        "SourceDiscardsBeforeCommit" => Bug::SourceDiscardsBeforeCommit,
        "TargetActivatesWithoutCommit" => Bug::TargetActivatesWithoutCommit,
        "GcWithoutFlush" => Bug::GcWithoutFlush,
        "ReadyWithoutDrain" => Bug::ReadyWithoutDrain,
        "NoStragglerCheck" => Bug::NoStragglerCheck,
        other => panic!("unknown defect {other}"),
    }
}

fn property(name: &str) -> Property {
    let all = [
        Property::SingleOwner,
        Property::AtMostOnce,
        Property::Fifo,
        Property::OneReplyPerAsk,
        Property::NoStrayFrames,
        Property::ExactlyOnce,
        Property::AsksAnswered,
        Property::ActorSurvives,
        Property::Progress,
        Property::ForwardersCollected,
    ];
    all.into_iter()
        .find(|p| format!("{p:?}") == name)
        .unwrap_or_else(|| panic!("unknown property {name}"))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(mut cfg) = args.first().and_then(|n| config(n)) else {
        eprintln!(
            "usage: explore CONFIG [exhaustive [MAX] | walks SEED COUNT | find PROPERTY [MAX]]"
        );
        std::process::exit(2);
    };
    let bugs = std::env::var("BUGS").unwrap_or_default();
    cfg.bugs = bugs.split(',').filter(|b| !b.is_empty()).map(bug).collect();
    let arg = |i: usize, default: u64| {
        args.get(i)
            .map_or(default, |s| s.parse().expect("a number"))
    };
    let started = Instant::now();
    let report = match args.get(1).map(String::as_str) {
        None | Some("exhaustive") => exhaustive(&cfg, arg(2, 5_000_000)),
        Some("walks") => random_walks(&cfg, arg(2, 1), arg(3, 10_000)),
        Some("find") => find(&cfg, arg(3, 5_000_000), property(&args[2])),
        Some(other) => panic!("unknown mode {other}"),
    };
    let seen: Vec<_> = Event::ALL
        .iter()
        .filter(|e| e.in_mask(report.events))
        .collect();
    println!(
        "{}: {} states, {} terminal, longest run {}, truncated {}, {:?}\nevents: {seen:?}",
        args[0],
        report.states,
        report.terminals,
        report.max_depth,
        report.truncated,
        started.elapsed()
    );
    let Some(v) = report.violation else {
        println!("no violation");
        return;
    };
    println!("{}", v.explain());
    if std::env::var("TRACE").is_ok() {
        let mut st = State::initial(&cfg);
        for (i, a) in v.trace.iter().enumerate() {
            apply(&cfg, &mut st, *a);
            println!("--- step {i}: {a:?}\n{}", describe(&st));
        }
    }
    std::process::exit(1);
}
