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
    use std::sync::mpsc;
    use std::time::Duration;

    /// A generous guard: fail instead of hang.
    const GUARD: Duration = Duration::from_secs(30);

    /// Polls `inner`; once it has answered `Pending` (so its waker is registered), says
    /// so on `polled`: the replier waits for that, so no test depends on which thread
    /// the scheduler runs first.
    struct Signal<F> {
        inner: F,
        polled: Option<mpsc::Sender<()>>,
    }

    impl<F: Future + Unpin> Future for Signal<F> {
        type Output = F::Output;
        fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
            let r = std::pin::Pin::new(&mut self.inner).poll(cx);
            if r.is_pending() {
                if let Some(tx) = self.polled.take() {
                    let _ = tx.send(());
                }
            }
            r
        }
    }

    /// A reply channel whose sender replies `value` once the caller waits, after `delay`.
    fn reply_later(
        value: u32,
        delay: Duration,
    ) -> (
        Signal<tokio::sync::oneshot::Receiver<u32>>,
        std::thread::JoinHandle<()>,
    ) {
        let (tx, rx) = tokio::sync::oneshot::channel::<u32>();
        let (polled_tx, polled_rx) = mpsc::channel();
        let sender = std::thread::spawn(move || {
            polled_rx.recv_timeout(GUARD).expect("the caller polled");
            std::thread::sleep(delay);
            tx.send(value).unwrap();
        });
        (
            Signal {
                inner: rx,
                polled: Some(polled_tx),
            },
            sender,
        )
    }

    #[test]
    fn a_ready_future_needs_no_wait() {
        let (v, waits) = block_on_counted(async { 7 }, Duration::from_millis(1));
        assert_eq!(v, 7);
        assert_eq!(waits, Waits::default());
    }

    #[test]
    fn a_reply_sent_during_the_spin_is_taken_without_parking() {
        // A spin far longer than the replier needs, even on a loaded machine.
        let (rx, sender) = reply_later(5, Duration::ZERO);
        let (v, waits) = block_on_counted(rx, GUARD);
        sender.join().unwrap();
        assert_eq!(v, Ok(5));
        assert_eq!(waits, Waits { spun: 1, parked: 0 });
    }

    #[test]
    fn without_a_spin_the_caller_parks_and_the_reply_still_arrives() {
        let (rx, sender) = reply_later(9, Duration::from_millis(5));
        let (v, waits) = block_on_counted(rx, Duration::ZERO);
        sender.join().unwrap();
        assert_eq!(v, Ok(9));
        assert_eq!(waits, Waits { spun: 0, parked: 1 });
    }

    #[test]
    fn a_reply_after_a_short_spin_still_arrives() {
        // Almost always after the 1 µs spin ran out (then the parked caller is woken);
        // either way it is one wait, and the reply.
        let (rx, sender) = reply_later(3, Duration::from_millis(20));
        let (v, waits) = block_on_counted(rx, Duration::from_micros(1));
        sender.join().unwrap();
        assert_eq!(v, Ok(3));
        assert_eq!(waits.spun + waits.parked, 1, "{waits:?}");
    }

    #[test]
    fn many_wake_ups_are_neither_lost_nor_delayed_past_the_guard() {
        // A stream of replies, each sent as soon as the previous was taken: whether
        // each lands in the spin or after the park, every one arrives, in order.
        let (req_tx, req_rx) = mpsc::channel::<tokio::sync::oneshot::Sender<u32>>();
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
