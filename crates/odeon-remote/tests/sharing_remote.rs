//! Atomic batches, reservations and remote refs (issue 16), on two loopback nodes in
//! one process: what happens today, as documented in `odeon::sharing`.
//! - a batch or a reservation of a *remote* ref fails with a typed `Remote` error and
//!   sends nothing (never a silent partial or interleaved delivery);
//! - a reservation taken on the actor's own node holds back mail from other nodes
//!   too, which is then handled in order once it ends.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]

mod common;

use std::time::Duration;

use common::*;
use odeon::{ActorRef, AskError, BatchError, ReserveError};

fn counter_on(a: &Member, name: &str) -> ActorRef<Counter> {
    let r = a.system.spawn(Counter {
        total: 0,
        seen: Vec::new(),
    });
    a.node().register(name, &r).unwrap();
    r
}

#[test]
fn a_batch_to_a_remote_actor_is_refused_whole_with_a_typed_error() {
    let a = Member::start("a", &[]);
    let b = Member::start("b", &[a.addr()]);
    let local = counter_on(&a, "c");
    let remote = b.system.block_on(b.node().lookup::<Counter>("c")).unwrap();

    let res = remote.atomic(|batch| {
        batch.tell(Add(1));
        batch.ask(Add(2))
    });
    assert_eq!(res.err(), Some(BatchError::Remote));

    // The ask of a batch that was never sent fails at once, and says why.
    let mut batch = remote.batch();
    batch.tell(Add(3));
    let reply = batch.ask(Add(4));
    assert_eq!(batch.send(), Err(BatchError::Remote));
    assert_eq!(b.system.block_on(reply), Err(AskError::Unreachable));

    // Nothing of either batch arrived; plain remote mail still does.
    assert_eq!(b.system.block_on(remote.ask(Add(10))), Ok(10));
    assert_eq!(a.system.block_on(local.ask(History)), Ok(vec![10]));
}

#[test]
fn a_remote_actor_cannot_be_reserved_and_says_so() {
    let a = Member::start("a", &[]);
    let b = Member::start("b", &[a.addr()]);
    let _local = counter_on(&a, "c");
    let remote = b.system.block_on(b.node().lookup::<Counter>("c")).unwrap();
    let got = b.system.block_on(remote.reserve());
    assert_eq!(got.err(), Some(ReserveError::Remote));
    // The actor was not reserved: it still serves remote mail at once.
    assert_eq!(b.system.block_on(remote.ask(Add(5))), Ok(5));
}

#[test]
fn a_reservation_holds_back_mail_from_other_nodes_until_it_ends() {
    let a = Member::start("a", &[]);
    let b = Member::start("b", &[a.addr()]);
    let local = counter_on(&a, "c");
    let remote = b.system.block_on(b.node().lookup::<Counter>("c")).unwrap();

    let r = a.system.block_on(local.reserve()).unwrap();
    for v in [100, 200, 300] {
        remote.tell(Add(v)).unwrap();
    }
    // Node B's mail has had time to arrive and is waiting behind the reservation.
    let late = b.system.handle().io().spawn({
        let remote = remote.clone();
        async move { remote.ask(History).await }
    });
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(a.system.block_on(r.ask(Add(1))), Ok(1));
    assert_eq!(a.system.block_on(r.ask(History)), Ok(vec![1]));
    r.release();
    let seen = b.system.block_on(late).unwrap().unwrap();
    assert_eq!(seen, vec![1, 100, 200, 300], "remote mail kept its order");
}
