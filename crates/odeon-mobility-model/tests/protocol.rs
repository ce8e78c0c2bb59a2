//! The protocol as designed keeps every property, over every interleaving of small
//! configurations (exhaustive) and many random schedules of larger ones (seeded walks).
//! Each test also checks that its configuration reached what it is about (the
//! `sometimes` events), so that a passing test cannot be a vacuous one.

mod common;

use common::{all, assert_holds, assert_reached, base, client};
use odeon_mobility_model::{Config, Event, HOME, bit, exhaustive, random_walks};

/// Exhaustive searches stop here; every configuration below stays well under it.
const LIMIT: u64 = 3_000_000;

#[test]
fn one_move_with_senders_on_two_nodes_keeps_every_property() {
    let cfg = Config {
        clients: vec![client(1, &[false, true]), client(2, &[false, false])],
        ..base(3)
    };
    let r = exhaustive(&cfg, LIMIT);
    assert_holds("one move, two senders", &r);
    assert_reached(
        "one move, two senders",
        &r,
        &[
            Event::Moved,
            Event::Activated,
            Event::Forwarded,
            Event::Switched,
        ],
    );
}

#[test]
fn repeated_and_chained_moves_keep_every_property() {
    // Three moves from any host to any node: A->B->C, A->B->A, A->B->C->A, ...
    let cfg = Config {
        clients: vec![client(1, &[false, true])],
        max_moves: 3,
        ..base(3)
    };
    let r = exhaustive(&cfg, LIMIT);
    assert_holds("three moves", &r);
    assert_reached(
        "three moves",
        &r,
        &[
            Event::Moved,
            Event::Forwarded,
            Event::Switched,
            Event::ForwarderCollected,
            Event::HandledAfterTwoMoves,
            Event::DrainSkipped,
        ],
    );
}

#[test]
fn a_target_skips_the_drain_only_when_its_route_is_clean_and_every_property_holds() {
    // Senders on both targets and two moves: the second target's route sometimes
    // carried its own or forwarded messages (it drains) and sometimes nothing (it
    // answers Ready at once). The mutation tests show the guard is needed.
    let cfg = Config {
        clients: vec![client(1, &[false, true]), client(2, &[false])],
        max_moves: 2,
        ..base(3)
    };
    let r = exhaustive(&cfg, LIMIT);
    assert_holds("drain shortcut", &r);
    assert_reached(
        "drain shortcut",
        &r,
        &[
            Event::DrainSkipped,
            Event::Switched,
            Event::Forwarded,
            Event::HandledAfterTwoMoves,
        ],
    );
}

#[test]
fn a_crash_of_any_node_at_any_step_keeps_every_property() {
    // Two moves, one crash of any node at any moment, and hand-over timeouts that may
    // fire at any moment: targets lost mid-move, sources lost after the hand-over,
    // the birth node lost, forwarders lost with messages on them.
    let cfg = Config {
        clients: vec![client(1, &[false, true])],
        max_moves: 2,
        max_crashes: 1,
        crashable: all(3),
        timeouts: true,
        ..base(3)
    };
    let r = exhaustive(&cfg, LIMIT);
    assert_holds("crash anywhere", &r);
    assert_reached(
        "crash anywhere",
        &r,
        &[
            Event::ResumedAtSource,
            Event::Relocating,
            Event::Relocated,
            Event::StragglerDropped,
            Event::ActorLost,
        ],
    );
}

#[test]
fn the_birth_node_crashing_leaves_the_actor_reachable() {
    let cfg = Config {
        clients: vec![client(1, &[true]), client(2, &[false])],
        max_moves: 2,
        max_crashes: 1,
        crashable: bit(HOME),
        ..base(3)
    };
    let r = exhaustive(&cfg, LIMIT);
    assert_holds("birth node crash", &r);
    assert_reached(
        "birth node crash",
        &r,
        &[Event::Moved, Event::Relocating, Event::Relocated],
    );
}

#[test]
fn a_refused_or_timed_out_move_leaves_the_actor_running_where_it_was() {
    let cfg = Config {
        clients: vec![client(1, &[false, true])],
        max_moves: 2,
        refusers: bit(2),
        timeouts: true,
        ..base(3)
    };
    let r = exhaustive(&cfg, LIMIT);
    assert_holds("refusal and timeout", &r);
    assert_reached(
        "refusal and timeout",
        &r,
        &[Event::Refused, Event::ResumedAtSource, Event::Moved],
    );
}

/// Four nodes, a sender on each, up to five moves: random schedules.
#[test]
fn random_schedules_of_four_nodes_and_five_moves_keep_every_property() {
    let cfg = Config {
        clients: vec![
            client(1, &[false, true, false, false]),
            client(2, &[true, false, false, true]),
            client(3, &[false, false, true, false]),
        ],
        max_moves: 5,
        ..base(4)
    };
    let r = random_walks(&cfg, 0x0de0_0001, 30_000);
    assert_holds("four nodes, five moves (walks)", &r);
    assert_reached(
        "four nodes, five moves (walks)",
        &r,
        &[
            Event::Switched,
            Event::ForwarderCollected,
            Event::HandledAfterTwoMoves,
        ],
    );
}

/// Four nodes, senders on all of them (the birth node too), four moves, a refusing
/// node, timeouts and a crash of any node: random schedules.
#[test]
fn random_schedules_with_crashes_refusals_and_timeouts_keep_every_property() {
    let cfg = Config {
        clients: vec![
            client(1, &[false, true, false]),
            client(2, &[true, false, false]),
            client(3, &[false, false, true]),
            client(0, &[false, true]),
        ],
        max_moves: 4,
        max_crashes: 1,
        crashable: all(4),
        refusers: bit(3),
        timeouts: true,
        ..base(4)
    };
    let r = random_walks(&cfg, 0x0de0_0002, 30_000);
    assert_holds("four nodes, crashes (walks)", &r);
    assert_reached(
        "four nodes, crashes (walks)",
        &r,
        &[
            Event::Refused,
            Event::ResumedAtSource,
            Event::Relocated,
            Event::ActorLost,
        ],
    );
}

/// Two crashes among four nodes.
#[test]
fn random_schedules_with_two_crashes_keep_every_property() {
    let cfg = Config {
        clients: vec![
            client(1, &[false, true, false]),
            client(2, &[true, false, false]),
            client(3, &[false, false, true]),
        ],
        max_moves: 4,
        max_crashes: 2,
        crashable: all(4),
        timeouts: true,
        ..base(4)
    };
    let r = random_walks(&cfg, 0x0de0_0003, 30_000);
    assert_holds("four nodes, two crashes (walks)", &r);
    assert_reached(
        "four nodes, two crashes (walks)",
        &r,
        &[Event::Relocated, Event::ActorLost],
    );
}
