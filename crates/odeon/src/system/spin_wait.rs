//! [`System::block_on`](super::System::block_on) with a bounded spin before the caller
//! parks ([`SystemBuilder::block_on_spin`](super::SystemBuilder::block_on_spin), off by
//! default).
//!
//! Why: a blocking caller of a remote ask is woken by the thread that completes the
//! reply (the link's reader). When the caller has parked, that is a futex wake-up, and
//! on a guest whose idle vCPUs halt it costs ~35–40 µs to get the caller running again
//! (issue 19, `docs/bench/remote-latency-2026-11-28b.md`). A caller still spinning when
//! the reply lands sees it with an atomic load: the waker finds it not parked and makes
//! no system call, and the caller's thread never leaves its CPU.
//!
//! The spin is bounded (the budget restarts after each wake-up that left the future
//! pending), so a reply that takes longer costs at most the budget of CPU time and the
//! old park after it. A reply that arrives during the spin is never delayed by it: the
//! waker's flag is looked at on every round.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;
use std::time::{Duration, Instant};

/// Spin-loop hints between two yields (and looks at the clock); the flag is read on
/// every hint.
const SPINS_PER_YIELD: u32 = 32;

/// Wakes the blocked thread: sets the flag, and unparks it (`Thread::unpark` is an
/// atomic swap, and a futex wake only if the thread has parked).
struct Flag {
    woken: AtomicBool,
    thread: Thread,
}

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        self.thread.unpark();
    }
}

/// How one wait for a wake-up ended (for tests).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Waits {
    /// Wake-ups seen while spinning.
    pub(crate) spun: u64,
    /// Wake-ups waited for parked.
    pub(crate) parked: u64,
}

/// Polls `future` on this thread until it completes; between polls, spins for up to
/// `spin` looking for a wake-up, then parks until one comes.
pub(crate) fn block_on<F: Future>(future: F, spin: Duration) -> F::Output {
    block_on_counted(future, spin).0
}

/// [`block_on`], also saying how each wait ended.
pub(crate) fn block_on_counted<F: Future>(future: F, spin: Duration) -> (F::Output, Waits) {
    let flag = Arc::new(Flag {
        woken: AtomicBool::new(false),
        thread: std::thread::current(),
    });
    let waker = Waker::from(flag.clone());
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    let mut waits = Waits::default();
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return (out, waits);
        }
        if spin_for(&flag.woken, spin) {
            waits.spun += 1;
            continue;
        }
        waits.parked += 1;
        // Spurious unparks (a token left by an earlier wake-up) loop back here.
        while !flag.woken.swap(false, Ordering::Acquire) {
            std::thread::park();
        }
    }
}

/// Whether `woken` was set (and is now cleared) within `spin`.
fn spin_for(woken: &AtomicBool, spin: Duration) -> bool {
    if spin.is_zero() {
        return false;
    }
    let start = Instant::now();
    loop {
        for _ in 0..SPINS_PER_YIELD {
            if woken.load(Ordering::Relaxed) && woken.swap(false, Ordering::Acquire) {
                return true;
            }
            std::hint::spin_loop();
        }
        if start.elapsed() >= spin {
            return false;
        }
        // Yield, so that a thread woken onto this CPU (the reader that brings the
        // reply, say) runs at once: without it the scheduler lets the spinner finish
        // its slice first, and every hop waited for the spin to run out (measured:
        // a 100 µs spin gave a 244 µs median round trip on the loaded 2-vCPU VM).
        // With nothing else to run, the yield returns at once and the CPU stays out
        // of its halt, which is what makes the wake-up cheap.
        std::thread::yield_now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A generous guard: fail instead of hang.
    const GUARD: Duration = Duration::from_secs(30);

    #[test]
    fn a_ready_future_needs_no_wait() {
        let (v, waits) = block_on_counted(async { 7 }, Duration::from_millis(1));
        assert_eq!(v, 7);
        assert_eq!(waits, Waits::default());
    }

    #[test]
    fn a_reply_sent_during_the_spin_is_taken_without_parking() {
        // A spin far longer than the sender needs, even on a loaded machine: the
        // sender waits until the caller is blocked, then replies.
        let (tx, rx) = tokio::sync::oneshot::channel::<u32>();
        let sender = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(1));
            tx.send(5).unwrap();
        });
        let (v, waits) = block_on_counted(rx, GUARD);
        sender.join().unwrap();
        assert_eq!(v, Ok(5));
        assert_eq!(waits.spun, 1, "{waits:?}");
        assert_eq!(waits.parked, 0, "{waits:?}");
    }

    #[test]
    fn without_a_spin_the_caller_parks_and_a_late_reply_still_arrives() {
        let (tx, rx) = tokio::sync::oneshot::channel::<u32>();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<()>();
        let sender = std::thread::spawn(move || {
            ready_rx.recv_timeout(GUARD).unwrap();
            std::thread::sleep(Duration::from_millis(5));
            tx.send(9).unwrap();
        });
        let (v, waits) = block_on_counted(
            async move {
                ready_tx.send(()).unwrap();
                rx.await
            },
            Duration::ZERO,
        );
        sender.join().unwrap();
        assert_eq!(v, Ok(9));
        assert_eq!(waits.spun, 0, "no spin at all with a zero budget");
        assert!(waits.parked >= 1, "{waits:?}");
    }

    #[test]
    fn a_reply_after_the_spin_wakes_the_parked_caller() {
        // The sender replies only once the caller has given up spinning and parked:
        // it waits for the caller's thread to be parked by watching a 1 µs spin run
        // out (the sender sleeps far longer than that).
        let (tx, rx) = tokio::sync::oneshot::channel::<u32>();
        let sender = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            tx.send(3).unwrap();
        });
        let start = Instant::now();
        let (v, waits) = block_on_counted(rx, Duration::from_micros(1));
        sender.join().unwrap();
        assert_eq!(v, Ok(3));
        assert!(start.elapsed() < GUARD);
        assert!(
            waits.parked >= 1,
            "a 1 µs spin cannot outlast a 20 ms sleep: {waits:?}"
        );
    }

    #[test]
    fn many_wake_ups_are_neither_lost_nor_delayed_past_the_guard() {
        // A stream of replies, each sent as soon as the previous was taken: whether
        // each lands in the spin or after the park, every one arrives, in order.
        let (req_tx, req_rx) = std::sync::mpsc::channel::<tokio::sync::oneshot::Sender<u32>>();
        let sender = std::thread::spawn(move || {
            let mut i = 0;
            while let Ok(tx) = req_rx.recv_timeout(GUARD) {
                let _ = tx.send(i);
                i += 1;
            }
        });
        let start = Instant::now();
        for (i, spin) in (0..2_000u32).zip([0, 1, 50, 1_000].iter().cycle()) {
            let (tx, rx) = tokio::sync::oneshot::channel();
            req_tx.send(tx).unwrap();
            assert_eq!(block_on(rx, Duration::from_micros(*spin)), Ok(i));
            assert!(start.elapsed() < GUARD, "replies stopped arriving");
        }
        drop(req_tx);
        sender.join().unwrap();
    }
}
