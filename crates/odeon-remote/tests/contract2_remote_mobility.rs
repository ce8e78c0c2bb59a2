//! Second contract pass over issue 15's outside calls and the sharing errors on a
//! mobile actor: a stale local ref to an actor that moved away ("an actor that moved
//! away" is [`DrainError::NotLocal`]; a batch "holds the same for a local ref to a
//! mobile actor that has moved": [`BatchError::Remote`], its asks `Unreachable`), a
//! draining actor refuses to move (its drain signal cannot travel), and the stop
//! reason of a moved actor seen from every node.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]

mod common;
mod mobile_util;

use std::time::Duration;

use mobile_util::*;
use odeon::{ActorRef, AskError, BatchError, DrainError, ReserveError, StopReason};

fn wait(m: &common::Member, r: &ActorRef<Tally>) -> StopReason {
    let done = r.wait_stopped();
    m.system.block_on(async {
        tokio::time::timeout(WAIT, done)
            .await
            .unwrap_or_else(|_| panic!("the wait on {} did not end in time", m.node().id()))
    })
}

#[test]
fn a_stale_local_ref_to_a_moved_actor_is_not_local_for_drains_batches_and_reservations() {
    let nodes = cluster(&["h", "a"], |b| b);
    let (h, a) = (&nodes[0], &nodes[1]);
    let tally = h.system.spawn(Tally::default());
    h.node().register("tally", &tally).unwrap();
    move_to(&tally, a);
    assert!(tally.is_local(), "the birth node's ref stays a local ref");

    assert_eq!(tally.stop_gracefully(), Err(DrainError::NotLocal));

    let mut batch = tally.batch();
    batch.tell(Note(1, 1));
    let reply = batch.ask(Log);
    assert_eq!(batch.send(), Err(BatchError::Remote));
    assert_eq!(h.system.block_on(reply), Err(AskError::Unreachable));
    assert_eq!(
        tally
            .atomic(|b| {
                b.tell(Note(1, 2));
            })
            .err(),
        Some(BatchError::Remote)
    );

    let reserved = h.system.block_on(async {
        tokio::time::timeout(WAIT, tally.reserve())
            .await
            .expect("reserve answered in time")
    });
    assert_eq!(reserved.err(), Some(ReserveError::Remote));

    // Nothing of the above reached the actor, which still answers through the stub,
    // to ask_wait as to ask.
    tally.prefetch();
    let log = h
        .system
        .block_on(tally.ask_wait(Log).timeout(WAIT))
        .unwrap();
    assert!(log.is_empty(), "a refused batch arrived: {log:?}");
    assert_eq!(
        h.system.block_on(tally.ask(Where).timeout(WAIT)).unwrap(),
        "a"
    );
}

#[test]
fn a_draining_actor_refuses_to_move_and_drains_where_it_is() {
    let nodes = cluster(&["h", "a"], |b| b);
    let (h, a) = (&nodes[0], &nodes[1]);
    let tally = h.system.spawn(Tally::default());
    send_numbered(&tally, 1, 0..5);
    tally
        .tell(GoTo(a.node().id().clone()))
        .expect("tell accepted");
    let at = tally.ask(Where).timeout(WAIT);
    let log = tally.ask(Log).timeout(WAIT);
    tally.stop_gracefully().unwrap();
    assert_eq!(
        h.system.block_on(at).unwrap(),
        "h",
        "it moved while draining"
    );
    assert_eq!(h.system.block_on(log).unwrap().len(), 5);
    assert_eq!(wait(h, &tally), StopReason::Normal);
}

#[test]
fn a_moved_actor_stopped_from_a_third_node_stops_normally_as_seen_from_every_node() {
    let nodes = cluster(&["h", "a", "b"], |b| b);
    let (h, a, b) = (&nodes[0], &nodes[1], &nodes[2]);
    let tally = h.system.spawn(Tally::default());
    h.node().register("tally", &tally).unwrap();
    move_to(&tally, a);
    let from_a = lookup(a, "tally");
    let from_b = lookup(b, "tally");
    assert_eq!(
        b.system.block_on(from_b.ask(Where).timeout(WAIT)).unwrap(),
        "a"
    );
    // The waits begin before the stop. (A wait begun on h's stale ref after the
    // moved actor stopped sometimes never ended: reported, not covered here.)
    let waits = [
        (b, from_b.wait_stopped()),
        (a, from_a.wait_stopped()),
        (h, tally.wait_stopped()),
    ];
    from_b.stop();
    for (m, done) in waits {
        let reason = m
            .system
            .block_on(async { tokio::time::timeout(WAIT, done).await });
        assert_eq!(
            reason.unwrap_or_else(|_| panic!("the wait on {} did not end", m.node().id())),
            StopReason::Normal
        );
    }
    // Known stopped everywhere: sends fail rather than vanish.
    let asked = h
        .system
        .block_on(tally.ask(Log).timeout(Duration::from_secs(20)));
    assert!(asked.is_err(), "{asked:?}");
}
