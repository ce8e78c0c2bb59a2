//! Step 3's drain and its shortcut (issue 14): a target whose route to the actor
//! carried messages drains it before Ready; one whose route carried nothing since it
//! was last drained answers Ready at once. Both must keep every message exactly once
//! and in per-sender order.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]

mod common;
mod mobile_util;

use std::sync::mpsc;
use std::time::Duration;

use common::eventually;
use mobile_util::*;
use odeon_remote::MigrateExt;

/// Waits (bounded) until the actor's log, asked through `via` on `m`, holds `total`
/// messages, and returns it; panics with the per-sender counts otherwise.
fn log_of(m: &common::Member, via: &odeon::ActorRef<Tally>, total: usize) -> Vec<(u32, u64)> {
    eventually(WAIT, || {
        let log = m.system.block_on(via.ask(Log)).ok()?;
        (log.len() == total).then_some(log)
    })
    .unwrap_or_else(|| {
        let log = m.system.block_on(via.ask(Log)).unwrap();
        let per = |s| log.iter().filter(|(x, _)| *x == s).count();
        panic!(
            "expected {total} messages, have {} (per sender {:?})",
            log.len(),
            [per(1), per(2)]
        )
    })
}

#[test]
fn a_target_whose_route_carries_its_own_messages_drains_it_before_ready() {
    // Born on h (behind a proxy), moved to b. c routes through h (its ref came from
    // the birth node's registry). The proxy holds c's messages on their way to h;
    // then the actor is asked to move from b to c. c's route carried messages that
    // are not at the actor yet: c must drain it (a flush behind them) before Ready, so
    // the move cannot finish while they are held. Had c answered Ready at once, it
    // would run the actor, take its next messages ahead of the held ones, and then
    // drop those as stragglers (step 9): a loss this test would report.
    let tune = |b: odeon_remote::NodeBuilder| {
        b.mobile::<Tally>()
            .lost_after(Duration::from_secs(10))
            .request_timeout(Duration::from_secs(60))
    };
    let (h, ph) = common::Member::start_behind_proxy("h", &[], tune);
    common::name_node(&h.system.handle(), "h");
    // Both dial h first, through the proxy: the links to h go through it.
    let b = start("b", &[ph.addr()], tune);
    let c = start("c", &[ph.addr()], tune);
    for m in [&h, &b, &c] {
        eventually(WAIT, || (m.node().peers().len() == 2).then_some(())).expect("the nodes link");
    }
    let tally = h.system.spawn(Tally::default());
    h.node().register("tally", &tally).unwrap();
    let from_c = lookup(&c, "tally");
    move_to(&tally, &b);
    let on_b = lookup(&b, "tally");
    ph.pause();
    send_numbered(&from_c, 2, 0..20);
    let migration = on_b.migrate_to(c.node().id());
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|s| {
        s.spawn(|| {
            let _ = tx.send(b.system.block_on(migration));
        });
        // Not an assertion on time: a wrong shortcut finishes the move while the
        // proxy holds c's messages, and the check at the end finds them lost.
        let early = rx.recv_timeout(Duration::from_secs(2)).ok();
        // On c's route, or held by c while prepared (or, after a move that did not
        // wait, straight into the mailbox).
        send_numbered(&from_c, 2, 20..40);
        ph.restore();
        let outcome = early.or_else(|| rx.recv_timeout(WAIT).ok());
        assert!(
            matches!(outcome, Some(Ok(_))),
            "the move to c: {:?}",
            outcome.map(|o| o.map(|_| ()))
        );
    });
    send_numbered(&from_c, 2, 40..60);
    send_numbered(&tally, 1, 0..20);
    let log = log_of(&c, &from_c, 80);
    assert_each_once_in_order(&log, &[(1, 20), (2, 60)]);
}

#[test]
fn a_target_whose_route_carried_nothing_takes_the_actor_at_once_and_loses_nothing() {
    // c never sent on its route (through h), so it answers Ready without a drain;
    // h sends throughout, forwarded through b and then through b or straight to c.
    let nodes = cluster(&["h", "b", "c"], |b| b);
    let (h, b, c) = (&nodes[0], &nodes[1], &nodes[2]);
    let tally = h.system.spawn(Tally::default());
    h.node().register("tally", &tally).unwrap();
    let from_c = lookup(c, "tally");
    move_to(&tally, b);
    send_numbered(&tally, 1, 0..500);
    let on_b = lookup(b, "tally");
    on_b.tell(GoTo(c.node().id().clone()))
        .expect("tell accepted");
    send_numbered(&tally, 1, 500..1_000);
    eventually(WAIT, || hosted_on(c).then_some(())).expect("the actor reached c");
    send_numbered(&from_c, 2, 0..100);
    send_numbered(&tally, 1, 1_000..1_100);
    // And back to b: b's route (to c, the source) leads straight to it.
    move_to(&from_c, b);
    send_numbered(&from_c, 2, 100..200);
    let log = log_of(h, &tally, 1_300);
    assert_each_once_in_order(&log, &[(1, 1_100), (2, 200)]);
}
