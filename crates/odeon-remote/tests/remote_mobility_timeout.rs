//! A target that never answers (its runtime stalled): the source's hand-over timeout
//! fails the move with `Timeout`, the actor runs on at the source with nothing lost,
//! and a later move (whose timeout the node's deadline queue arms again, after it
//! emptied) commits. The timeouts come from one queue per node (`deadlines.rs`).

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]

mod common;
mod mobile_util;

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use mobile_util::*;
use odeon_remote::{MigrateError, MigrateExt, MigrateFailure};

/// Blocks every thread of a tokio runtime until dropped.
struct Stall(Arc<(Mutex<bool>, Condvar)>);

impl Stall {
    fn runtime(io: &tokio::runtime::Handle) -> Stall {
        let gate = Arc::new((Mutex::new(false), Condvar::new()));
        // More blocking tasks than the runtime has threads: each thread takes one.
        for _ in 0..16 {
            let g = gate.clone();
            io.spawn(async move {
                let (lock, opened) = &*g;
                let mut open = lock.lock().unwrap();
                while !*open {
                    open = opened.wait(open).unwrap();
                }
            });
        }
        std::thread::sleep(Duration::from_millis(200));
        Stall(gate)
    }
}

impl Drop for Stall {
    fn drop(&mut self) {
        let (lock, opened) = &*self.0;
        *lock.lock().unwrap() = true;
        opened.notify_all();
    }
}

#[test]
fn a_target_that_never_answers_times_the_move_out_and_a_later_move_commits() {
    let nodes = cluster(&["a", "b"], |b| {
        b.request_timeout(Duration::from_millis(300))
            .lost_after(Duration::from_secs(120))
    });
    let (a, b) = (&nodes[0], &nodes[1]);
    let tally = a.system.spawn(Tally::default());
    send_numbered(&tally, 1, 0..10);
    let stall = Stall::runtime(&b.system.handle().io());
    // Guarded: a timeout that never fires would keep the actor frozen for ever.
    let guarded = |to| {
        a.system
            .block_on(async { tokio::time::timeout(WAIT, tally.migrate_to(to)).await })
            .expect("the move ends")
    };
    let first = guarded(b.node().id());
    assert!(
        matches!(first, Err(MigrateError::Failed(MigrateFailure::Timeout(_)))),
        "{first:?}"
    );
    // It runs on at a, with its whole mailbox and what comes later, in order.
    send_numbered(&tally, 1, 10..20);
    let log = a
        .system
        .block_on(tally.ask(Log).timeout(WAIT))
        .expect("answered at a");
    assert_each_once_in_order(&log, &[(1, 20)]);
    assert!(tally.is_local());
    drop(stall);
    // b wakes up (it receives the old offer and its abort) and takes the next move.
    let second = guarded(b.node().id());
    assert_eq!(second.map(|m| m.epoch), Ok(1));
    send_numbered(&tally, 1, 20..30);
    let log = a
        .system
        .block_on(tally.ask(Log).timeout(WAIT))
        .expect("answered through the stub");
    assert_each_once_in_order(&log, &[(1, 30)]);
    assert_eq!(a.node().metrics().migrations().failed(), 1);
    assert_eq!(a.node().metrics().migrations().moved(), 1);
}
