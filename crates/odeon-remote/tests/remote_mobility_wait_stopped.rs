//! `wait_stopped` (a watch) started on any ref to a moved actor after it stopped
//! resolves at once with its reason (issue 14). It used to hang on the birth node's
//! local ref in about half the rounds: the host's watch of its own dead cell fired
//! at once, but its key was kept as if still armed, so later watchers were never told.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]

mod common;
mod mobile_util;

use std::time::Duration;

use mobile_util::*;
use odeon::{ActorRef, StopReason, System};

/// Waits for `r` to stop, failing instead of hanging (a guard, not a timing check).
fn wait(system: &System, r: &ActorRef<Tally>) -> Option<StopReason> {
    let w = r.wait_stopped();
    system
        .block_on(async { tokio::time::timeout(Duration::from_secs(20), w).await })
        .ok()
}

#[test]
fn wait_stopped_after_the_stop_resolves_on_every_ref_to_a_moved_actor() {
    let nodes = cluster(&["h", "a", "b"], |b| b);
    let (h, a, b) = (&nodes[0], &nodes[1], &nodes[2]);
    for i in 0..20 {
        let name = format!("t{i}");
        let tally = h.system.spawn(Tally::default());
        h.node().register(&name, &tally).unwrap();
        tally.tell(GoTo(a.node().id().clone())).unwrap();
        let from_b = common::eventually(WAIT, || {
            let r = b.system.block_on(b.node().lookup::<Tally>(&name)).ok()?;
            (b.system.block_on(r.ask(Where)).ok()? == "a").then_some(r)
        })
        .expect("the actor runs on a, seen from b");
        let from_a = common::eventually(WAIT, || {
            a.system.block_on(a.node().lookup::<Tally>(&name)).ok()
        })
        .expect("a finds the name");
        from_b.stop();
        assert_eq!(
            wait(&b.system, &from_b),
            Some(StopReason::Normal),
            "round {i}: b"
        );
        assert_eq!(
            wait(&a.system, &from_a),
            Some(StopReason::Normal),
            "round {i}: a"
        );
        // Started after the actor stopped, on the node it was born on and left.
        assert_eq!(
            wait(&h.system, &tally),
            Some(StopReason::Normal),
            "round {i}: h"
        );
        // Once more on each: a watch of a stopped actor is never left waiting.
        assert_eq!(
            wait(&h.system, &tally),
            Some(StopReason::Normal),
            "round {i}: h again"
        );
        assert_eq!(
            wait(&b.system, &from_b),
            Some(StopReason::Normal),
            "round {i}: b again"
        );
    }
}
