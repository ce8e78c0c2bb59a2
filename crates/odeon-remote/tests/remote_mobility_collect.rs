//! Collection of forwarding entries (design §3.7, step 10): a node the actor left
//! drops its table entry and its stub once nothing routes through it.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]

mod common;
mod mobile_util;

use common::eventually;
use mobile_util::*;

#[test]
fn nodes_an_actor_left_forget_it_once_traffic_settles() {
    let nodes = cluster(&["h", "a", "b", "c"], |b| b);
    let (h, a, b, c) = (&nodes[0], &nodes[1], &nodes[2], &nodes[3]);
    let tally = h.system.spawn(Tally::default());
    h.node().register("tally", &tally).unwrap();
    let from_c = lookup(c, "tally");
    // Born on h, moved there to a, then a → b → c, with traffic from h and c between
    // the moves (so that both route through a and b at some point).
    let mut sent = 0;
    for next in [a, b, c] {
        send_numbered(&tally, 1, sent..sent + 50);
        send_numbered(&from_c, 2, sent..sent + 50);
        sent += 50;
        move_to(&from_c, next);
    }
    send_numbered(&tally, 1, sent..sent + 50);
    send_numbered(&from_c, 2, sent..sent + 50);
    sent += 50;
    let log = h.system.block_on(tally.ask(Log)).unwrap();
    let log_c = c.system.block_on(from_c.ask(Log)).unwrap();
    assert!(log_c.len() >= log.len());
    assert_each_once_in_order(&log_c, &[(1, sent), (2, sent)]);
    // a and b keep nothing once every holder switched away and released its pin.
    for m in [a, b] {
        let counts = eventually(WAIT, || {
            let counts = m.node().mobile_counts();
            (counts == (0, 0)).then_some(counts)
        });
        assert_eq!(
            counts,
            Some((0, 0)),
            "{} still holds (entries, stubs) = {:?}",
            m.node().id(),
            m.node().mobile_counts()
        );
    }
    // The host keeps its entry, the birth node its directory entry.
    assert_eq!(c.node().mobile_counts(), (1, 0));
    assert_eq!(h.node().mobile_counts().0, 1);
    // And the actor is still reached from everywhere, a and b included (fresh
    // entries there, numbered after the forgotten ones).
    let from_a = lookup(a, "tally");
    let from_b = lookup(b, "tally");
    send_numbered(&from_a, 3, 0..20);
    send_numbered(&from_b, 4, 0..20);
    send_numbered(&tally, 1, sent..sent + 20);
    let log = eventually(WAIT, || {
        let log = c.system.block_on(from_c.ask(Log)).ok()?;
        (log.len() as u64 == 2 * sent + 60).then_some(log)
    })
    .unwrap_or_else(|| {
        let log = c.system.block_on(from_c.ask(Log)).unwrap();
        let per = |s| log.iter().filter(|(x, _)| *x == s).count();
        panic!(
            "missing messages: per sender {:?}",
            [per(1), per(2), per(3), per(4)]
        )
    });
    assert_each_once_in_order(&log, &[(1, sent + 20), (2, sent), (3, 20), (4, 20)]);
}

#[test]
fn a_node_holding_a_remote_ref_keeps_its_entry_until_the_ref_is_dropped() {
    let nodes = cluster(&["h", "a", "b"], |b| b);
    let (h, a, b) = (&nodes[0], &nodes[1], &nodes[2]);
    let tally = h.system.spawn(Tally::default());
    h.node().register("tally", &tally).unwrap();
    let from_b = lookup(b, "tally");
    from_b.tell(Note(1, 0)).unwrap();
    assert_eq!(b.system.block_on(from_b.ask(Log)).unwrap(), [(1, 0)]);
    assert_eq!(b.node().mobile_counts(), (1, 0));
    move_to(&from_b, a);
    // b's own ref still routes through its entry: it stays.
    from_b.tell(Note(1, 1)).unwrap();
    assert_eq!(
        b.system.block_on(from_b.ask(Log)).unwrap(),
        [(1, 0), (1, 1)]
    );
    assert_eq!(b.node().mobile_counts(), (1, 0));
    drop(from_b);
    let counts = eventually(WAIT, || {
        let counts = b.node().mobile_counts();
        (counts == (0, 0)).then_some(counts)
    });
    assert_eq!(
        counts,
        Some((0, 0)),
        "b forgets the actor once its ref is gone"
    );
    // A fresh ref on b numbers on from the forgotten entry: the host, which took b's
    // messages up to 2, takes the next ones (not dropped as stragglers).
    let again = lookup(b, "tally");
    again.tell(Note(1, 2)).unwrap();
    again.tell(Note(1, 3)).unwrap();
    assert_eq!(
        b.system.block_on(again.ask(Log)).unwrap(),
        [(1, 0), (1, 1), (1, 2), (1, 3)]
    );
}

#[test]
fn after_a_round_trip_a_ref_to_the_stub_equals_a_ref_to_the_cell_it_came_back_to() {
    use std::collections::hash_map::DefaultHasher;
    use std::hash::{Hash, Hasher};
    let hash = |r: &odeon::ActorRef<Tally>| {
        let mut h = DefaultHasher::new();
        r.hash(&mut h);
        h.finish()
    };
    let nodes = cluster(&["a", "b"], |b| b);
    let (a, b) = (&nodes[0], &nodes[1]);
    let tally = a.system.spawn(Tally::default());
    a.node().register("tally", &tally).unwrap();
    let from_b = lookup(b, "tally");
    // A → B → A: `tally` still points at the stub the actor left on a; the actor
    // came back into a new cell there.
    move_to(&from_b, b);
    move_to(&from_b, a);
    let back = a.system.block_on(from_b.ask(Me)).unwrap();
    let back_on_a = a.system.block_on(tally.ask(Me)).unwrap();
    assert!(back_on_a.is_local());
    assert_eq!(back_on_a, tally, "the new cell's ref equals the stub's");
    assert_eq!(tally, back_on_a);
    assert_eq!(hash(&back_on_a), hash(&tally));
    assert_eq!(back_on_a.id(), tally.id());
    // And both equal the remote ref on b.
    assert_eq!(back, from_b);
    // Both still reach the actor (the stub's path has one more step: no order
    // between the two).
    tally.tell(Note(1, 0)).unwrap();
    back_on_a.tell(Note(2, 0)).unwrap();
    let mut log = eventually(WAIT, || {
        let log = a.system.block_on(back_on_a.ask(Log)).ok()?;
        (log.len() == 2).then_some(log)
    })
    .expect("both arrive");
    log.sort();
    assert_eq!(log, [(1, 0), (2, 0)]);
}

#[test]
fn a_local_ref_to_a_stub_the_node_let_go_still_travels_as_the_same_actor() {
    let nodes = cluster(&["h", "a", "b", "x"], |b| b);
    let (h, a, b, x) = (&nodes[0], &nodes[1], &nodes[2], &nodes[3]);
    let tally = h.system.spawn(Tally::default());
    h.node().register("tally", &tally).unwrap();
    let from_x = lookup(x, "tally");
    move_to(&from_x, a);
    let on_a = lookup(a, "tally");
    assert!(on_a.is_local());
    move_to(&from_x, b);
    // a let its stub go (no other node routes through it) but keeps the entry: a
    // local ref to the stub is still held there.
    let counts = eventually(WAIT, || {
        let c = a.node().mobile_counts();
        (c == (1, 0)).then_some(c)
    });
    assert_eq!(counts, Some((1, 0)), "{:?}", a.node().mobile_counts());
    // That ref, sent inside a message, is still written as the actor itself.
    on_a.tell(Keep(on_a.clone())).unwrap();
    let kept = eventually(WAIT, || x.system.block_on(from_x.ask(Kept)).ok().flatten())
        .expect("the ref was kept");
    assert_eq!(kept, from_x);
    kept.tell(Note(1, 0)).unwrap();
    assert_eq!(x.system.block_on(from_x.ask(Log)).unwrap(), [(1, 0)]);
}
