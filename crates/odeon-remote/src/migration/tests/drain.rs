//! Step 3's drain and its shortcut, frame by frame (model: `receive_handover`, the
//! mutation tests `a_target_that_skips_the_drain_after_sending_on_its_route_*`).

use super::sim::{Sim, Step};
use crate::migration::entry::Place;
use crate::wire::Traffic;

/// Born on 0, moved to 1; node 2 routes through 0 and has sent `sent` messages.
fn moved_to_1_with_sends_from_2(sent: usize) -> Sim {
    let mut sim = Sim::new(3, vec![(2, vec![false; sent + 3])]);
    sim.step(Step::Migrate(0, 1));
    sim.settle();
    assert!(sim.nodes[1].entry.is_host());
    for _ in 0..sent {
        sim.step(Step::Send(0));
    }
    sim
}

#[test]
fn a_target_whose_route_carried_its_messages_drains_it_before_ready() {
    let mut sim = moved_to_1_with_sends_from_2(2);
    // Its two messages are still on the link to the birth node.
    assert_eq!(sim.frames(2, 0).len(), 2);
    sim.step(Step::Migrate(1, 2));
    sim.step(Step::Deliver(1, 2));
    assert!(matches!(sim.nodes[2].entry.place, Place::Prepared(_)));
    assert!(sim.frames(2, 1).is_empty(), "no Ready before the drain");
    assert!(
        matches!(sim.frames(2, 0)[..], [_, _, Traffic::Flush { .. }]),
        "a flush behind its messages: {:?}",
        sim.frames(2, 0)
    );
    // Sent while prepared: held, handled after the drained ones.
    sim.step(Step::Send(0));
    sim.settle();
    sim.step(Step::Send(0));
    sim.settle();
    sim.finish();
    sim.check_clean_end();
    assert!(sim.nodes[2].entry.is_host());
}

#[test]
fn a_target_whose_route_carried_nothing_answers_ready_at_once() {
    let mut sim = moved_to_1_with_sends_from_2(0);
    sim.step(Step::Migrate(1, 2));
    sim.step(Step::Deliver(1, 2));
    assert!(
        matches!(sim.frames(2, 1)[..], [Traffic::MigrateReady { .. }]),
        "Ready at once: {:?}",
        sim.frames(2, 1)
    );
    assert!(sim.frames(2, 0).is_empty(), "no flush");
    sim.step(Step::Send(0));
    sim.settle();
    sim.finish();
    sim.check_clean_end();
    assert!(sim.nodes[2].entry.is_host());
}

#[test]
fn a_switch_that_ends_with_nothing_buffered_leaves_the_route_clean() {
    // Node 2's messages go through 0, which hints it; it flushes and switches to 1.
    // The host's acknowledgement proves everything it sent is there.
    let mut sim = moved_to_1_with_sends_from_2(2);
    assert!(sim.nodes[2].entry.route_used);
    sim.settle();
    assert!(
        !sim.nodes[2].entry.route_used,
        "switched with nothing buffered"
    );
    // Its next message marks the new route used again.
    sim.step(Step::Send(0));
    assert!(sim.nodes[2].entry.route_used);
    sim.settle();
    sim.finish();
    sim.check_clean_end();
}
