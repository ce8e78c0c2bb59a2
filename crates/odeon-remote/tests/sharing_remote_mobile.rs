//! Batches and reservations of mobile actors (issue 16), as documented in
//! `odeon::sharing`: a ref to a mobile actor that reaches it through the mobility
//! layer (from another node, or after it moved away) refuses batches and
//! reservations whole with the typed `Remote` errors; a mobile actor reserved on its
//! node that is asked to move ends the reservation, then moves.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]

mod common;
mod mobile_util;

use common::eventually;
use mobile_util::*;
use odeon::{AskError, BatchError, Ended, ReserveError};

#[test]
fn a_mobile_actor_reached_from_another_node_refuses_batches_and_reservations_whole() {
    let nodes = cluster(&["h", "a"], |b| b);
    let (h, a) = (&nodes[0], &nodes[1]);
    let tally = h.system.spawn(Tally::default());
    h.node().register("tally", &tally).unwrap();
    let from_a = lookup(a, "tally");

    let mut batch = from_a.batch();
    batch.tell(Note(1, 1));
    let reply = batch.ask(Log);
    assert_eq!(batch.send(), Err(BatchError::Remote));
    assert_eq!(a.system.block_on(reply), Err(AskError::Unreachable));
    assert_eq!(
        a.system.block_on(from_a.reserve()).err(),
        Some(ReserveError::Remote)
    );
    // Nothing arrived, and the actor was not held.
    assert_eq!(a.system.block_on(from_a.ask(Log)), Ok(vec![]));
}

#[test]
fn a_reserved_mobile_actor_asked_to_move_ends_the_reservation_then_moves() {
    let nodes = cluster(&["h", "a"], |b| b);
    let (h, a) = (&nodes[0], &nodes[1]);
    let tally = h.system.spawn(Tally::default());
    h.node().register("tally", &tally).unwrap();

    let r = h.system.block_on(tally.reserve()).unwrap();
    r.tell(Note(1, 1)).unwrap();
    r.tell(GoTo(a.node().id().clone())).unwrap();
    eventually(WAIT, || {
        (r.ended() == Some(Ended::ActorStopped)).then_some(())
    })
    .expect("the move request ends the reservation");
    eventually(WAIT, || hosted_on(a).then_some(())).expect("the actor moved to a");
    // Through the old local ref (now a stub), batches and reservations say why.
    assert_eq!(
        tally
            .atomic(|b| {
                b.tell(Note(1, 2));
            })
            .err(),
        Some(BatchError::Remote)
    );
    assert_eq!(
        h.system.block_on(tally.reserve()).err(),
        Some(ReserveError::Remote)
    );
    // The actor kept its state and serves mail at its new node.
    let from_a = lookup(a, "tally");
    assert_eq!(a.system.block_on(from_a.ask(Log)), Ok(vec![(1, 1)]));
}
