//! The checker can fail: each test breaks one part of the protocol on purpose (a
//! [`Bug`]) and asserts that the explorer finds the property that part protects,
//! with a trace. Without these, a checker that never complains would pass every
//! test in `protocol.rs`.

mod common;

use common::{all, base, client};
use odeon_mobility_model::{Bug, Config, Property, exhaustive, find};

const LIMIT: u64 = 3_000_000;

/// Fails unless the search found `expected`; prints how it got there.
fn assert_found(name: &str, report: &odeon_mobility_model::Report, expected: Property) {
    let v = report
        .violation
        .as_ref()
        .unwrap_or_else(|| panic!("{name}: no violation in {} states", report.states));
    println!(
        "{name}: {:?} found after {} states, trace of {} steps",
        v.property,
        report.states,
        v.trace.len()
    );
    assert_eq!(v.property, expected, "{name}: {}", v.explain());
}

fn one_move_two_senders(bugs: Vec<Bug>) -> Config {
    Config {
        clients: vec![client(1, &[false, true]), client(2, &[false, false])],
        bugs,
        ..base(3)
    }
}

fn crash_anywhere(bugs: Vec<Bug>) -> Config {
    Config {
        clients: vec![client(1, &[false, true])],
        max_moves: 2,
        max_crashes: 1,
        crashable: all(3),
        timeouts: true,
        bugs,
        ..base(3)
    }
}

#[test]
fn a_sender_that_switches_without_a_flush_gets_messages_dropped() {
    // Its direct messages overtake the ones still being forwarded; the host's
    // straggler check then drops the overtaken ones: a loss with no crash.
    let cfg = one_move_two_senders(vec![Bug::SwitchWithoutFlush]);
    let r = exhaustive(&cfg, LIMIT);
    assert_found("switch without flush", &r, Property::ExactlyOnce);
}

#[test]
fn a_sender_that_switches_without_a_flush_breaks_fifo_when_nothing_drops_stragglers() {
    let cfg = one_move_two_senders(vec![Bug::SwitchWithoutFlush, Bug::NoStragglerCheck]);
    let r = find(&cfg, LIMIT, Property::Fifo);
    assert_found(
        "switch without flush, no straggler check",
        &r,
        Property::Fifo,
    );
}

#[test]
fn a_target_that_answers_ready_before_draining_its_route_breaks_fifo() {
    // The target's own earlier messages, still on their way through a forwarder,
    // arrive after its clients' later ones, which go straight into the mailbox.
    let cfg = Config {
        clients: vec![client(1, &[false, false]), client(2, &[false, false])],
        max_moves: 2,
        bugs: vec![Bug::ReadyWithoutDrain, Bug::NoStragglerCheck],
        ..base(3)
    };
    let r = find(&cfg, LIMIT, Property::Fifo);
    assert_found("ready without drain", &r, Property::Fifo);
}

#[test]
fn without_the_straggler_check_a_crashed_forwarder_breaks_fifo() {
    // A message a forwarder passed on just before it crashed arrives after its
    // sender, having relocated, sent the next one by another path.
    let cfg = crash_anywhere(vec![Bug::NoStragglerCheck]);
    let r = find(&cfg, LIMIT, Property::Fifo);
    assert_found("no straggler check", &r, Property::Fifo);
}

#[test]
fn a_source_that_forgets_the_actor_before_the_commit_loses_it_with_the_target() {
    // One-phase hand-over: the target dies before the snapshot arrives, and nobody
    // has the actor, though no node with custody of it (in the real protocol) died.
    let cfg = crash_anywhere(vec![Bug::SourceDiscardsBeforeCommit]);
    let r = find(&cfg, LIMIT, Property::ActorSurvives);
    assert_found("source discards before commit", &r, Property::ActorSurvives);
}

#[test]
fn a_target_that_runs_the_actor_before_the_commit_makes_two_copies() {
    let cfg = Config {
        clients: vec![client(1, &[false, true])],
        timeouts: true,
        bugs: vec![Bug::TargetActivatesWithoutCommit],
        ..base(3)
    };
    let r = find(&cfg, LIMIT, Property::SingleOwner);
    assert_found("target activates without commit", &r, Property::SingleOwner);
}

#[test]
fn a_forwarder_that_forgets_before_its_holders_flush_gets_stray_frames() {
    let cfg = Config {
        clients: vec![client(1, &[false, true])],
        max_moves: 3,
        bugs: vec![Bug::GcWithoutFlush],
        ..base(3)
    };
    let r = find(&cfg, LIMIT, Property::NoStrayFrames);
    assert_found("gc without flush", &r, Property::NoStrayFrames);
}

/// Two moves (the second from node 1 to node 2, whose route still leads to the birth
/// node) with senders on both targets: the drain shortcut's guard matters.
fn two_moves_senders_on_targets(bugs: Vec<Bug>) -> Config {
    Config {
        clients: vec![client(1, &[false, false]), client(2, &[false, false])],
        max_moves: 2,
        bugs,
        ..base(3)
    }
}

#[test]
fn a_target_that_skips_the_drain_after_sending_on_its_route_loses_messages() {
    // Its numbered messages, still on their way through a forwarder, arrive after it
    // activated; its high-water mark jumped past them, so the host drops them as
    // stragglers: a loss with no crash.
    let cfg = two_moves_senders_on_targets(vec![Bug::SkipDrainOnUsedRoute]);
    let r = find(&cfg, LIMIT, Property::ExactlyOnce);
    assert_found("drain skipped on a used route", &r, Property::ExactlyOnce);
}

#[test]
fn a_target_that_skips_the_drain_after_sending_on_its_route_breaks_fifo() {
    // Without the straggler check they are handled, after its clients' later ones.
    let cfg = two_moves_senders_on_targets(vec![Bug::SkipDrainOnUsedRoute, Bug::NoStragglerCheck]);
    let r = find(&cfg, LIMIT, Property::Fifo);
    assert_found(
        "drain skipped on a used route, no straggler check",
        &r,
        Property::Fifo,
    );
}
