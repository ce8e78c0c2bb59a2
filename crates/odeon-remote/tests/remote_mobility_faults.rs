//! Mobility under faults (design §4): relocation (step 11) after the loss of the node
//! an actor left or of its birth node, a clear error once its host is lost, mobile
//! refs inside messages, and an offer too large for a frame.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]

mod common;
mod mobile_util;

use std::time::Duration;

use common::{Member, eventually};
use mobile_util::*;
use odeon::{ActorRef, AskError, TellError};
use odeon_remote::MigrateExt;

/// A node crashes: no leave, every link cut at once.
fn crash(m: Member) {
    let mut m = m;
    drop(m.node.take());
    drop(m);
}

/// Waits until `m` no longer counts `gone` among its peers.
fn until_lost(m: &Member, gone: &odeon_remote::wire::NodeId) {
    eventually(WAIT, || (!m.node().peers().contains(gone)).then_some(()))
        .unwrap_or_else(|| panic!("{} declares {gone} lost", m.node().id()));
}

/// An ask that fails instead of hanging.
fn log_of(m: &Member, r: &ActorRef<Tally>) -> Vec<(u32, u64)> {
    m.system
        .block_on(r.ask(Log).timeout(Duration::from_secs(20)))
        .expect("the log is answered")
}

#[test]
fn refs_relocate_to_the_host_after_the_birth_node_is_lost_even_refs_resolved_later() {
    let mut nodes = cluster(&["h", "t", "x"], |b| b);
    let (x, t) = (nodes.pop().unwrap(), nodes.pop().unwrap());
    let h = nodes.pop().unwrap();
    let tally = h.system.spawn(Tally::default());
    h.node().register("tally", &tally).unwrap();
    // x holds a ref and has sent nothing: its route is the birth node h.
    let from_x = lookup(&x, "tally");
    assert_eq!(x.node().mobile_counts(), (1, 0));
    let moved = h.system.block_on(tally.migrate_to(t.node().id()));
    assert_eq!(moved.map(|m| m.epoch), Ok(1));
    let h_id = h.node().id().clone();
    let on_t = lookup(&t, "tally");
    assert!(on_t.is_local(), "the actor runs on t");
    drop(tally);
    crash(h);
    until_lost(&x, &h_id);
    until_lost(&t, &h_id);
    // x's route died with h: it relocates (probes through every live node) and finds
    // the host.
    send_numbered(&from_x, 1, 0..30);
    let log = log_of(&x, &from_x);
    assert_each_once_in_order(&log, &[(1, 30)]);
    // A node that never met h gets a ref naming it (the host registers the actor
    // under a new name): the ref relocates from the start instead of being dead.
    let y = start("y", &[t.addr()], |b| b);
    t.node().register("moved-tally", &on_t).unwrap();
    let from_y = eventually(WAIT, || {
        y.system
            .block_on(y.node().lookup::<Tally>("moved-tally"))
            .ok()
    })
    .expect("y finds the name");
    assert!(!from_y.is_local());
    send_numbered(&from_y, 2, 0..30);
    let log = log_of(&y, &from_y);
    assert_each_once_in_order(&log, &[(1, 30), (2, 30)]);
}

#[test]
fn senders_reach_the_actor_after_the_node_it_left_is_lost() {
    let mut nodes = cluster(&["h", "s", "t", "x"], |b| b);
    let x = nodes.pop().unwrap();
    let t = nodes.pop().unwrap();
    let s = nodes.pop().unwrap();
    let h = nodes.pop().unwrap();
    let tally = h.system.spawn(Tally::default());
    h.node().register("tally", &tally).unwrap();
    let from_x = lookup(&x, "tally");
    move_to(&from_x, &s);
    // x and h send while the actor is on s: their routes lead through s.
    send_numbered(&from_x, 1, 0..40);
    send_numbered(&tally, 2, 0..40);
    eventually(WAIT, || (log_of(&x, &from_x).len() == 80).then_some(()))
        .expect("the first 80 arrive");
    move_to(&from_x, &t);
    let s_id = s.node().id().clone();
    crash(s);
    for m in [&h, &t, &x] {
        until_lost(m, &s_id);
    }
    // The actor lives on at t; every message sent after the loss arrives, in order
    // per sender (only messages a crashed node held may be missing).
    send_numbered(&from_x, 1, 40..80);
    send_numbered(&tally, 2, 40..80);
    let log = eventually(WAIT, || {
        let log = x
            .system
            .block_on(from_x.ask(Log).timeout(Duration::from_secs(5)))
            .ok()?;
        let mine = |who: u32| log.iter().filter(|(s, _)| *s == who).count();
        (mine(1) == 80 && mine(2) == 80).then_some(log)
    })
    .expect("every message sent after the loss arrives");
    assert_each_once_in_order(&log, &[(1, 80), (2, 80)]);
    assert!(hosted_on(&t));
}

#[test]
fn sends_fail_with_unreachable_once_the_host_itself_is_lost() {
    // z never touches the actor: it has no entry, and must still answer x's
    // relocation probe (`Gone`), or x would wait for it forever.
    let mut nodes = cluster(&["h", "t", "x", "z"], |b| b);
    let z = nodes.pop().unwrap();
    let x = nodes.pop().unwrap();
    let t = nodes.pop().unwrap();
    let h = nodes.pop().unwrap();
    let tally = h.system.spawn(Tally::default());
    h.node().register("tally", &tally).unwrap();
    let from_x = lookup(&x, "tally");
    move_to(&from_x, &t);
    send_numbered(&from_x, 1, 0..10);
    assert_eq!(log_of(&x, &from_x).len(), 10);
    let t_id = t.node().id().clone();
    crash(t);
    until_lost(&x, &t_id);
    until_lost(&h, &t_id);
    until_lost(&z, &t_id);
    assert_eq!(z.node().mobile_counts(), (0, 0));
    // Relocation finds no copy: the route is dead, and sends say so.
    let failed = eventually(WAIT, || match from_x.tell(Note(1, 99)) {
        Err(TellError::Unreachable(_)) => Some(()),
        _ => None,
    });
    assert!(failed.is_some(), "a tell is refused as unreachable");
    let ask = x
        .system
        .block_on(from_x.ask(Log).timeout(Duration::from_secs(20)));
    assert!(matches!(ask, Err(AskError::Unreachable)), "{ask:?}");
    // A local ref to the birth node's stub: its ask fails the same way.
    let ask = h
        .system
        .block_on(tally.ask(Log).timeout(Duration::from_secs(20)));
    assert!(matches!(ask, Err(AskError::Unreachable)), "{ask:?}");
}

#[test]
fn a_mobile_ref_travels_inside_a_message() {
    let nodes = cluster(&["h", "t", "x"], |b| b);
    let (h, t, x) = (&nodes[0], &nodes[1], &nodes[2]);
    let tally = h.system.spawn(Tally::default());
    h.node().register("tally", &tally).unwrap();
    let from_x = lookup(x, "tally");
    move_to(&from_x, t);
    // x's ref is a mobile endpoint: it is written with the actor's birth identity.
    let id = x
        .system
        .block_on(
            from_x
                .ask(Hold(from_x.clone()))
                .timeout(Duration::from_secs(20)),
        )
        .expect("a message carrying a mobile ref is sent");
    assert_eq!(id, tally.id().as_u64());
    // The ref the actor sends back is its own, decoded on x as the same actor.
    let me = x
        .system
        .block_on(from_x.ask(Me).timeout(Duration::from_secs(20)))
        .expect("a reply carrying a mobile ref");
    assert_eq!(me, from_x);
    me.tell(Note(1, 0)).unwrap();
    assert_eq!(log_of(x, &from_x), [(1, 0)]);
}

/// Issue 14: an offer whose state is larger than a frame used to fail the move
/// (`NotSent`); its state now travels in chunks (`migration/chunk.rs`), and the move
/// commits with nothing lost.
#[test]
fn a_state_larger_than_a_frame_moves_in_chunks_and_loses_nothing() {
    let tune = |b: odeon_remote::NodeBuilder| b.max_frame(64 * 1024);
    let nodes = cluster(&["h", "t"], tune);
    let (h, t) = (&nodes[0], &nodes[1]);
    let tally = h.system.spawn(Tally {
        ballast: vec![7; 256 * 1024],
        ..Tally::default()
    });
    h.node().register("tally", &tally).unwrap();
    send_numbered(&tally, 1, 0..50);
    let got = h.system.block_on(async {
        tokio::time::timeout(Duration::from_secs(60), tally.migrate_to(t.node().id())).await
    });
    let got = got.expect("the move ends within the guard");
    assert!(got.is_ok(), "{got:?}");
    send_numbered(&tally, 1, 50..100);
    let log = h.system.block_on(tally.ask(Log)).unwrap();
    assert_each_once_in_order(&log, &[(1, 100)]);
    assert!(hosted_on(t), "the actor runs on t");
    let failures = h.system.block_on(tally.ask(Failures)).unwrap();
    assert!(failures.is_empty(), "{failures:?}");
}
