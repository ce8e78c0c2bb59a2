//! Atomic batches to remote refs (issue 16), on loopback nodes in one process, as
//! documented in `odeon::sharing` and `Batch::send`:
//! - a batch to a remote actor travels as one frame and is handled back to back: no
//!   other sender's message, local or remote, lands between its messages, and its
//!   asks get their replies;
//! - a batch that cannot be sent whole fails whole with a typed error, sending
//!   nothing;
//! - a reservation taken on the actor's own node holds back mail from other nodes
//!   too, which is then handled in order once it ends.
//!
//! Reservations held from another node are in `sharing_remote_reserve.rs`.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]

mod common;

use std::collections::HashMap;
use std::time::Duration;

use common::sharing::*;
use common::*;
use odeon::{ActorRef, AskError, BatchError};

#[test]
fn a_remote_batch_is_handled_whole_and_its_asks_are_answered() {
    let [a, b] = members(["a", "b"]);
    let local = counter_on(&a, "c");
    let remote = lookup_from::<Counter>(&b, "c");
    assert!(!remote.is_local());

    let (first, last) = remote
        .atomic(|batch| {
            let first = batch.ask(Add(1));
            batch.tell(Add(2)).tell(Add(3));
            (first, batch.ask(Add(4)))
        })
        .unwrap();
    assert_eq!(b.system.block_on(first.timeout(GUARD)), Ok(1));
    assert_eq!(b.system.block_on(last.timeout(GUARD)), Ok(10));
    assert_eq!(a.system.block_on(local.ask(History)), Ok(vec![1, 2, 3, 4]));

    // An empty batch sends nothing and succeeds, as locally.
    assert_eq!(remote.batch().send(), Ok(()));
}

/// Value of message `i` of batch `n` from sender `s`; `i == PLAIN` marks a plain tell.
fn tag(s: u64, n: u64, i: u64) -> u64 {
    s * 1_000_000 + n * 100 + i
}
const PLAIN: u64 = 50;
const BATCH_LEN: u64 = 6;
const BATCHES: u64 = 25;

/// Sends `BATCHES` batches (five tells then an ask) and as many plain tells, mixed;
/// returns each batch's ask reply with its value.
async fn send_batches(target: ActorRef<Counter>, sender: u64) -> Vec<(u64, u64)> {
    let mut replies = Vec::new();
    for n in 0..BATCHES {
        let ask = target
            .atomic(|batch| {
                for i in 1..BATCH_LEN {
                    batch.tell(Add(tag(sender, n, i)));
                }
                batch.ask(Add(tag(sender, n, BATCH_LEN)))
            })
            .expect("the batch is sent");
        target
            .tell(Add(tag(sender, n, PLAIN)))
            .expect("the tell is sent");
        if n % 5 == 4 {
            // Let other senders in between, sometimes with a batch in flight.
            tokio::task::yield_now().await;
        }
        replies.push((tag(sender, n, BATCH_LEN), ask));
    }
    let mut out = Vec::new();
    for (v, ask) in replies {
        out.push((
            v,
            ask.timeout(GUARD)
                .await
                .expect("the batch's ask is answered"),
        ));
    }
    out
}

#[test]
fn no_other_message_lands_inside_a_remote_batch_under_many_senders() {
    let [a, b, c] = members(["a", "b", "c"]);
    let local = counter_on(&a, "c");
    let from_b = lookup_from::<Counter>(&b, "c");
    let from_c = lookup_from::<Counter>(&c, "c");

    // Senders 1-3 on node b, 4-5 on node c (remote), 6-7 on node a (local refs).
    let mut threads = Vec::new();
    for (s, target, io) in [
        (1, from_b.clone(), b.system.handle().io()),
        (2, from_b.clone(), b.system.handle().io()),
        (3, from_b.clone(), b.system.handle().io()),
        (4, from_c.clone(), c.system.handle().io()),
        (5, from_c.clone(), c.system.handle().io()),
        (6, local.clone(), a.system.handle().io()),
        (7, local.clone(), a.system.handle().io()),
    ] {
        threads.push(std::thread::spawn(move || {
            io.block_on(send_batches(target, s))
        }));
    }
    let replies: Vec<(u64, u64)> = threads
        .into_iter()
        .flat_map(|t| t.join().expect("a sender thread"))
        .collect();

    // Every sender's last message was an ask that was answered: with per-pair FIFO
    // every message before it has been handled.
    let seen = a.system.block_on(local.ask(History)).unwrap();
    assert_eq!(seen.len() as u64, 7 * BATCHES * (BATCH_LEN + 1));
    let position: HashMap<u64, usize> = seen.iter().enumerate().map(|(p, v)| (*v, p)).collect();
    assert_eq!(position.len(), seen.len(), "every message once");
    for s in 1..=7 {
        for n in 0..BATCHES {
            let start = position[&tag(s, n, 1)];
            for i in 1..=BATCH_LEN {
                assert_eq!(
                    position[&tag(s, n, i)],
                    start + (i - 1) as usize,
                    "sender {s} batch {n}: message {i} is not right after the one before: {:?}",
                    &seen[start..(start + BATCH_LEN as usize + 2).min(seen.len())]
                );
            }
        }
    }
    // Each batch's ask saw exactly the messages handled before it: the running total.
    let mut prefix = HashMap::new();
    let mut total = 0u64;
    for v in &seen {
        total += v;
        prefix.insert(*v, total);
    }
    for (v, reply) in replies {
        assert_eq!(reply, prefix[&v], "the reply to {v}");
    }
}

#[test]
fn a_remote_batch_that_cannot_go_whole_fails_whole_with_a_typed_error() {
    let [a, b] = members(["a", "b"]);
    let local = counter_on(&a, "c");
    let remote = lookup_from::<Counter>(&b, "c");

    // One message that is not in the remote interface: nothing is sent.
    let mut batch = remote.batch();
    batch.tell(Add(3));
    let reply = batch.ask(Add(4));
    batch.tell(LocalOnly);
    assert_eq!(batch.len(), 3);
    assert_eq!(batch.send(), Err(BatchError::NotRemote));
    assert_eq!(b.system.block_on(reply), Err(AskError::NotRemote));
    let res = remote.atomic(|batch| {
        batch.tell(LocalOnly);
        batch.ask(Add(1))
    });
    assert_eq!(res.err(), Some(BatchError::NotRemote));

    // Nothing of either batch arrived; plain remote mail still does.
    assert_eq!(b.system.block_on(remote.ask(Add(10))), Ok(10));
    assert_eq!(a.system.block_on(local.ask(History)), Ok(vec![10]));
}

#[test]
fn the_asks_of_a_batch_to_a_stopped_remote_actor_fail_with_stopped() {
    let [a, b] = members(["a", "b"]);
    let local = counter_on(&a, "c");
    let remote = lookup_from::<Counter>(&b, "c");
    local.stop();
    eventually(GUARD, || (!local.is_alive()).then_some(())).expect("stopped");
    // Node b does not know yet: the batch is sent, and its asks fail at node a.
    let asks = remote.atomic(|batch| (batch.ask(Add(1)), batch.ask(Add(2))));
    match asks {
        Ok((one, two)) => {
            assert_eq!(
                b.system.block_on(one.timeout(GUARD)),
                Err(AskError::Stopped)
            );
            assert_eq!(
                b.system.block_on(two.timeout(GUARD)),
                Err(AskError::Stopped)
            );
        }
        Err(e) => assert_eq!(e, BatchError::Stopped),
    }
}

#[test]
fn a_batch_to_a_lost_node_is_refused_with_unreachable() {
    let [a, mut b] = members(["a", "b"]);
    let _local = counter_on(&b, "c");
    // Names registered on b reach a by gossip.
    let remote = eventually(GUARD, || {
        a.system.block_on(a.node().lookup::<Counter>("c")).ok()
    })
    .expect("found");
    assert_eq!(a.system.block_on(remote.ask(Add(1))), Ok(1));
    drop(b.node.take());
    eventually(GUARD, || (!remote.is_alive()).then_some(())).expect("node b is lost");
    let mut batch = remote.batch();
    let reply = batch.ask(Add(2));
    assert_eq!(batch.send(), Err(BatchError::Unreachable));
    assert_eq!(a.system.block_on(reply), Err(AskError::Unreachable));
}

#[test]
fn a_reservation_holds_back_mail_from_other_nodes_until_it_ends() {
    let [a, b] = members(["a", "b"]);
    let local = counter_on(&a, "c");
    let remote = lookup_from::<Counter>(&b, "c");

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
