//! Reservations held from another node (issue 16), on loopback nodes in one process,
//! as documented in `odeon::sharing` and `Reservation`:
//! - while a holder on node b holds the reservation of an actor on node a, the actor
//!   handles only what b sends through it, in order; other mail (local, and from a
//!   third node) waits and then flows in order;
//! - the lease is kept at the actor's node: a slow holder is cut off there;
//! - losing the holder's node ends the reservation at the actor's node;
//! - reserving a stopped actor, or one on a lost node, fails with a typed error.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]

mod common;

use std::time::Duration;

use common::sharing::*;
use common::*;
use odeon::{ActorRef, AskError, Ended, Reservation, ReserveError, TellError};

#[test]
fn a_remote_reservation_is_exclusive_and_keeps_its_order() {
    let [a, b, c] = members(["a", "b", "c"]);
    let local = counter_on(&a, "c");
    let from_b = lookup_from::<Counter>(&b, "c");
    let from_c = lookup_from::<Counter>(&c, "c");

    let r = b.system.block_on(from_b.reserve()).expect("granted");
    assert!(r.is_active());
    assert_eq!(r.ended(), None);
    // Other senders, local and from node c, while b holds the actor.
    for v in [1_000, 2_000] {
        local.tell(Add(v)).unwrap();
        from_c.tell(Add(v + 1)).unwrap();
    }
    let late_local = a.system.handle().io().spawn({
        let local = local.clone();
        async move { local.ask(History).await }
    });
    let late_c = c.system.handle().io().spawn({
        let from_c = from_c.clone();
        async move { from_c.ask(History).await }
    });
    for v in 1..=40 {
        r.tell(Add(v)).unwrap();
        if v % 10 == 0 {
            // Give the other senders' mail every chance to get in.
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let mine: Vec<u64> = (1..=40).collect();
    assert_eq!(
        b.system.block_on(r.ask(History).timeout(GUARD)),
        Ok(mine.clone()),
        "only the holder's messages, in order"
    );
    assert!(!late_local.is_finished() && !late_c.is_finished());
    r.release();

    // Each late ask follows its sender's tells (per-pair FIFO); after both, all of
    // the other mail has been handled.
    let seen_local = a.system.block_on(late_local).unwrap().unwrap();
    assert_eq!(&seen_local[..40], &mine[..]);
    let seen_c = c.system.block_on(late_c).unwrap().unwrap();
    assert_eq!(&seen_c[..40], &mine[..]);
    let seen = a.system.block_on(local.ask(History)).unwrap();
    assert_eq!(seen.len(), 44);
    assert_eq!(&seen[..40], &mine[..]);
    let others: Vec<u64> = seen[40..].to_vec();
    let locals: Vec<u64> = others.iter().copied().filter(|v| v % 2 == 0).collect();
    let remotes: Vec<u64> = others.iter().copied().filter(|v| v % 2 == 1).collect();
    assert_eq!(locals, vec![1_000, 2_000], "local mail kept its order");
    assert_eq!(remotes, vec![1_001, 2_001], "node c's mail kept its order");
}

#[test]
fn two_remote_holders_take_turns_in_request_order() {
    let [a, b, c] = members(["a", "b", "c"]);
    let local = counter_on(&a, "c");
    let from_b = lookup_from::<Counter>(&b, "c");
    let from_c = lookup_from::<Counter>(&c, "c");

    let first = b.system.block_on(from_b.reserve()).unwrap();
    let second = c.system.handle().io().spawn({
        let from_c = from_c.clone();
        async move {
            let r = from_c.reserve().await?;
            let before = r.ask(History).await.map_err(|_| ReserveError::Stopped)?;
            r.tell(Add(7)).map_err(|_| ReserveError::Stopped)?;
            Ok::<_, ReserveError>(before)
        }
    });
    std::thread::sleep(Duration::from_millis(200));
    assert!(!second.is_finished(), "the second waits for the first");
    for v in [1, 2, 3] {
        first.tell(Add(v)).unwrap();
    }
    drop(first);
    let before = c.system.block_on(second).unwrap().unwrap();
    assert_eq!(
        before,
        vec![1, 2, 3],
        "the first holder's messages, then the second's"
    );
    assert_eq!(
        a.system.block_on(local.ask(History).timeout(GUARD)),
        Ok(vec![1, 2, 3, 7])
    );
}

#[test]
fn the_lease_is_kept_at_the_actors_node_and_cuts_off_a_slow_holder() {
    let [a, b] = members(["a", "b"]);
    for t in 0..10 {
        let name = format!("c{t}");
        let local = counter_on(&a, &name);
        let remote = lookup_from::<Counter>(&b, &name);
        let r = b
            .system
            .block_on(remote.reserve().lease(Duration::from_millis(300)))
            .unwrap();
        // The lease runs from the grant, on node a's wall clock. On a loaded machine
        // it may run out before the holder's first ask gets there, which is then
        // refused, as documented; such a try shows nothing of the cut-off and is
        // made again, on a fresh actor.
        if b.system.block_on(r.ask(Add(1)).timeout(GUARD)) != Ok(1) {
            eventually(GUARD, || {
                (r.ended() == Some(Ended::LeaseExpired)).then_some(())
            })
            .expect("the holder's ask failed with its lease still running");
            continue;
        }
        lease_cut_off(&a, &b, &local, &r);
        return;
    }
    panic!("the lease ran out before the holder's first ask in 10 tries");
}

/// After the holder's first ask (`Add(1)`) through `r` was answered.
fn lease_cut_off(a: &Member, b: &Member, local: &ActorRef<Counter>, r: &Reservation<Counter>) {
    // The holder goes quiet (and sends no release: its own count of the lease sends
    // nothing); local mail is served only because node a ends the lease there.
    assert_eq!(
        a.system.block_on(local.ask(Add(10)).timeout(GUARD)),
        Ok(11),
        "mail flows after the lease"
    );
    // The holder is cut off: its ask fails, as its own view says.
    eventually(GUARD, || {
        (r.ended() == Some(Ended::LeaseExpired)).then_some(())
    })
    .expect("the holder sees the lease expire");
    assert!(!r.is_active());
    assert_eq!(b.system.block_on(r.ask(Add(100))), Err(AskError::Stopped));
    assert!(matches!(r.tell(Add(100)), Err(TellError::Stopped(_))));
    assert_eq!(a.system.block_on(local.ask(History)), Ok(vec![1, 10]));
}

#[test]
fn losing_the_holders_node_ends_its_reservation_and_other_mail_flows() {
    let [a, mut b] = members(["a", "b"]);
    let local = counter_on(&a, "c");
    let remote = lookup_from::<Counter>(&b, "c");
    // A lease far longer than the test: only the loss of node b can end it.
    let r = b
        .system
        .block_on(remote.reserve().lease(Duration::from_secs(600)))
        .unwrap();
    assert_eq!(b.system.block_on(r.ask(Add(5)).timeout(GUARD)), Ok(5));
    let waiting = a.system.handle().io().spawn({
        let local = local.clone();
        async move { local.ask(History).await }
    });
    std::thread::sleep(Duration::from_millis(100));
    assert!(!waiting.is_finished(), "held back by the reservation");
    // Node b dies with the reservation held (no release is sent).
    std::mem::forget(r);
    drop(b.node.take());
    let seen = a
        .system
        .block_on(async { tokio::time::timeout(GUARD, waiting).await })
        .expect("node a ends the reservation when it loses node b")
        .unwrap();
    assert_eq!(seen, Ok(vec![5]));
    assert_eq!(a.system.block_on(local.ask(Add(1))), Ok(6));
}

#[test]
fn the_holder_sees_the_loss_of_the_actors_node() {
    let [mut a, b] = members(["a", "b"]);
    let _local = counter_on(&a, "c");
    let remote = lookup_from::<Counter>(&b, "c");
    let r = b.system.block_on(remote.reserve()).unwrap();
    drop(a.node.take());
    eventually(GUARD, || (r.ended() == Some(Ended::NodeLost)).then_some(()))
        .expect("the holder sees node a lost");
    assert_eq!(b.system.block_on(r.ask(Add(1))), Err(AskError::Unreachable));
    assert_eq!(
        b.system.block_on(remote.reserve()).err(),
        Some(ReserveError::Unreachable)
    );
}

#[test]
fn reserving_a_stopped_remote_actor_fails_with_stopped() {
    let [a, b] = members(["a", "b"]);
    let local = counter_on(&a, "c");
    let remote = lookup_from::<Counter>(&b, "c");
    local.stop();
    eventually(GUARD, || (!local.is_alive()).then_some(())).expect("stopped");
    let got = b
        .system
        .block_on(async { tokio::time::timeout(GUARD, remote.reserve()).await })
        .expect("answered");
    assert_eq!(got.err(), Some(ReserveError::Stopped));
}

#[test]
fn a_reservation_given_up_before_its_grant_frees_the_actor() {
    let [a, b] = members(["a", "b"]);
    let local = counter_on(&a, "c");
    let remote = lookup_from::<Counter>(&b, "c");
    // The actor is held locally, so b's request waits; b then gives up.
    let held = a.system.block_on(local.reserve()).unwrap();
    let gave_up = b.system.block_on(async {
        tokio::time::timeout(Duration::from_millis(200), remote.reserve()).await
    });
    assert!(gave_up.is_err(), "still waiting when given up");
    drop(held);
    // Nothing holds the actor now: mail from b flows.
    assert_eq!(b.system.block_on(remote.ask(Add(2)).timeout(GUARD)), Ok(2));
    let r = b.system.block_on(remote.reserve()).unwrap();
    assert_eq!(
        b.system.block_on(r.ask(History).timeout(GUARD)),
        Ok(vec![2])
    );
}
