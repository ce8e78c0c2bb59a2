//! The transitions of a cell's `wake` word that a freeze adds to the async ones
//! (`cell/mod.rs`, "Async turns" and "Migration"), on odeon's loom facade so that
//! `loom_tests` below can check every interleaving:
//!
//! - the **turn** freezes the actor ([`begin_freeze`]: `FREEZING`), calls the
//!   transport, and when that returns ([`end_freeze`]) parks (`FREEZING -> FROZEN`)
//!   or, if the transport already gave the turn back, requeues itself (`THAWED ->
//!   IDLE`);
//! - the **transport** gives the turn back ([`hand_back`]): `FREEZING -> THAWED` (the
//!   turn is still returning and requeues itself) or `FROZEN -> IDLE` (the caller
//!   schedules the cell);
//! - a **waker** (a kill, an async handler's waker: [`wake`]) schedules only a
//!   `PARKED` turn and leaves every freeze state alone;
//! - a **sender** never schedules a frozen actor: its mailbox stays unmarked (no
//!   transition here; the loom model checks it with the real queue).
//!
//! Invariant: from `FREEZING`, exactly one of the turn and the transport schedules the
//! cell again, once, and what the transport wrote before handing back is visible to
//! that next turn.

use crate::loom::{AtomicU8, Ordering};

use super::{FREEZING, FROZEN, IDLE, NOTIFIED, PARKED, RUNNING, SCHEDULED, THAWED};

/// How a freezing turn ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FreezeEnd {
    /// The transport owns the turn; it schedules the cell when it hands back.
    Parked,
    /// The transport handed back while the turn was returning: run again.
    Requeue,
}

/// Turn: the actor freezes; the transport is called next.
pub(crate) fn begin_freeze(wake: &AtomicU8) {
    wake.store(FREEZING, Ordering::Release);
}

/// Turn: the transport's `frozen` returned.
pub(crate) fn end_freeze(wake: &AtomicU8) -> FreezeEnd {
    // AcqRel pairs with `hand_back`: on `THAWED` the transport's writes are visible.
    match wake.compare_exchange(FREEZING, FROZEN, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => FreezeEnd::Parked,
        Err(other) => {
            debug_assert_eq!(other, THAWED, "wake state {other} while freezing");
            wake.store(IDLE, Ordering::Release);
            FreezeEnd::Requeue
        }
    }
}

/// Transport: gives the turn back. Returns whether the caller must schedule the cell
/// (the freezing turn had already parked).
pub(crate) fn hand_back(wake: &AtomicU8) -> bool {
    loop {
        match wake.compare_exchange(FREEZING, THAWED, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return false,
            Err(FROZEN) => {
                if wake
                    .compare_exchange(FROZEN, IDLE, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
                {
                    return true;
                }
            }
            Err(other) => unreachable!("wake state {other} while frozen"),
        }
    }
}

/// Waker: wakes a parked async turn (also how a kill is seen promptly). Returns
/// whether the caller must schedule the cell. Freeze states are left alone: the
/// transport owns that turn.
pub(crate) fn wake(wake: &AtomicU8) -> bool {
    let mut s = wake.load(Ordering::Acquire);
    loop {
        let next = match s {
            PARKED => SCHEDULED,
            RUNNING => NOTIFIED,
            _ => return false,
        };
        // AcqRel: pairs with the turn's CAS RUNNING -> PARKED, so the resumed turn
        // sees what the waker's side did before waking.
        match wake.compare_exchange(s, next, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return next == SCHEDULED,
            Err(actual) => s = actual,
        }
    }
}

/// Model-checks the freeze transitions: run with
/// `RUSTFLAGS="--cfg loom" cargo test -p odeon --lib --release loom`.
#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use crate::mailbox::queue::{Link, Push, TestQueue};
    use loom::cell::UnsafeCell;
    use loom::sync::Arc;
    use loom::sync::atomic::AtomicUsize;
    use std::ptr::NonNull;

    #[repr(C)]
    struct Node {
        link: Link,
    }

    fn node() -> NonNull<Link> {
        NonNull::from(Box::leak(Box::new(Node { link: Link::new() }))).cast()
    }

    struct Frozen {
        wake: AtomicU8,
        /// What the transport writes before handing back (the phase, in the cell).
        phase: UnsafeCell<u8>,
        mailbox: TestQueue,
        schedules: AtomicUsize,
    }

    /// The next turn, run by whoever scheduled the cell: it sees the transport's write
    /// and owns the mailbox.
    fn next_turn(f: &Frozen) {
        f.schedules.fetch_add(1, Ordering::SeqCst);
        // SAFETY (loom): a data race here is what loom reports.
        f.phase
            .with(|p| assert_eq!(unsafe { *p }, 1, "the transport's write is seen"));
    }

    /// A freezing turn and the transport's hand-back, raced by a kill's wake-up
    /// (`killer`) or by a send (`sender`). Two models of three threads each rather than
    /// one of four: the same races, minutes less to explore.
    fn freeze_race(killer: bool, sender: bool) {
        loom::model(move || {
            let f = Arc::new(Frozen {
                wake: AtomicU8::new(IDLE),
                phase: UnsafeCell::new(0),
                mailbox: TestQueue::new(),
                schedules: AtomicUsize::new(0),
            });
            // SAFETY: inside the Arc (final address), not shared yet. The turn owns the
            // consumer role: the mailbox is not marked empty while frozen.
            unsafe { f.mailbox.init(false) };
            begin_freeze(&f.wake);
            let mut threads = Vec::new();
            let g = f.clone();
            threads.push(loom::thread::spawn(move || {
                if end_freeze(&g.wake) == FreezeEnd::Requeue {
                    next_turn(&g);
                }
            }));
            let g = f.clone();
            threads.push(loom::thread::spawn(move || {
                // SAFETY (loom): the transport owns the turn until it hands back.
                g.phase.with_mut(|p| unsafe { *p = 1 });
                if hand_back(&g.wake) {
                    next_turn(&g);
                }
            }));
            if killer {
                let g = f.clone();
                threads.push(loom::thread::spawn(move || {
                    assert!(!wake(&g.wake), "a kill scheduled a frozen turn");
                }));
            }
            if sender {
                let g = f.clone();
                threads.push(loom::thread::spawn(move || {
                    // SAFETY: a fresh node, handed to the queue.
                    let pushed = unsafe { g.mailbox.push(node()) };
                    assert_eq!(pushed, Push::Queued, "a send scheduled a frozen actor");
                }));
            }
            for t in threads {
                t.join().unwrap();
            }
            assert_eq!(f.schedules.load(Ordering::SeqCst), 1, "scheduled once");
            assert_eq!(f.wake.load(Ordering::SeqCst), IDLE);
            if sender {
                // The next turn finds the message sent meanwhile.
                // SAFETY: every other thread joined: this one is the consumer.
                let got = unsafe { f.mailbox.pop() }.expect("the send is in the mailbox");
                // SAFETY: the node came from `node` and was popped once.
                drop(unsafe { Box::from_raw(got.cast::<Node>().as_ptr()) });
            }
        });
    }

    #[test]
    fn a_freezing_turn_raced_by_a_kill_is_scheduled_again_exactly_once() {
        freeze_race(true, false);
    }

    #[test]
    fn a_freezing_turn_raced_by_a_send_is_scheduled_again_exactly_once() {
        freeze_race(false, true);
    }
}
