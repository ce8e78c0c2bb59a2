//! Configurations and assertions shared by the model's tests.

#![allow(dead_code)]

use odeon_mobility_model::{Client, Config, Event, NodeSet, Report};

/// A client on `node` sending `script` in order (`true` = ask, `false` = tell).
pub(crate) fn client(node: u8, script: &[bool]) -> Client {
    Client {
        node,
        asks: script.to_vec(),
    }
}

/// `nodes` nodes, no client, one move, no crash, no refusal, no timeout, no defect.
pub(crate) fn base(nodes: u8) -> Config {
    Config {
        nodes,
        clients: Vec::new(),
        max_moves: 1,
        max_crashes: 0,
        crashable: 0,
        refusers: 0,
        timeouts: false,
        bugs: Vec::new(),
    }
}

/// Every node of a configuration with `nodes` nodes.
pub(crate) fn all(nodes: u8) -> NodeSet {
    (1u8 << nodes) - 1
}

/// Fails with the trace and the final state if a property broke, or if an exhaustive
/// search stopped at its state limit; prints the counts (`--nocapture` shows them).
pub(crate) fn assert_holds(name: &str, report: &Report) {
    println!(
        "{name}: {} states, {} terminal states, longest run {} steps",
        report.states, report.terminals, report.max_depth
    );
    if let Some(v) = &report.violation {
        panic!("{name}: {}", v.explain());
    }
    assert!(!report.truncated, "{name}: the state limit was reached");
}

/// Fails unless every event in `events` happened in some explored run (the
/// configuration really exercised what the test is about).
pub(crate) fn assert_reached(name: &str, report: &Report, events: &[Event]) {
    for e in events {
        assert!(
            e.in_mask(report.events),
            "{name}: {e:?} never happened (seen: {:?})",
            Event::ALL
                .iter()
                .filter(|x| x.in_mask(report.events))
                .collect::<Vec<_>>()
        );
    }
}
