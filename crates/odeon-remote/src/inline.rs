//! Runs a future on whichever thread wakes it, with no executor: for a remote ask's
//! reply, which is then encoded and written by the worker that ran the handler, at
//! the moment the handler replies (issue 19: a tokio task per remote ask put two more
//! thread wake-ups, worker → I/O thread, on every round trip).
//!
//! Only for futures whose every poll is short and never blocks (an `Ask` and what
//! follows it: encoding the reply and handing it to the outbox).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::task::{Context, Wake, Waker};

use parking_lot::Mutex;

const IDLE: u8 = 0;
const POLLING: u8 = 1;
/// Woken while being polled: poll once more before going idle.
const NOTIFIED: u8 = 2;
const DONE: u8 = 3;

type Boxed = Pin<Box<dyn Future<Output = ()> + Send>>;

struct Task {
    state: AtomicU8,
    /// Only the thread that moved `state` to `POLLING` touches it, so the lock is
    /// never contended; it makes the task `Sync` without unsafe code.
    future: Mutex<Option<Boxed>>,
}

/// Polls `future` now, on this thread, and then on the thread of each wake-up, until
/// it completes.
pub(crate) fn run(future: impl Future<Output = ()> + Send + 'static) {
    let task = Arc::new(Task {
        state: AtomicU8::new(IDLE),
        future: Mutex::new(Some(Box::pin(future))),
    });
    task.run();
}

impl Task {
    fn run(self: &Arc<Self>) {
        let mut s = self.state.load(Ordering::Acquire);
        loop {
            let next = match s {
                IDLE => POLLING,
                POLLING => NOTIFIED,
                _ => return,
            };
            match self
                .state
                .compare_exchange(s, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) if next == NOTIFIED => return,
                Ok(_) => break,
                Err(actual) => s = actual,
            }
        }
        let waker = Waker::from(self.clone());
        let mut cx = Context::from_waker(&waker);
        loop {
            let mut slot = self.future.lock();
            let Some(future) = slot.as_mut() else { return };
            if future.as_mut().poll(&mut cx).is_ready() {
                *slot = None;
                self.state.store(DONE, Ordering::Release);
                return;
            }
            drop(slot);
            match self
                .state
                .compare_exchange(POLLING, IDLE, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return,
                // NOTIFIED: a wake-up came during the poll; poll again.
                Err(_) => self.state.store(POLLING, Ordering::Release),
            }
        }
    }
}

impl Wake for Task {
    fn wake(self: Arc<Self>) {
        self.run();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.run();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::task::Poll;

    #[test]
    fn the_future_runs_on_the_thread_that_completes_what_it_awaits() {
        let (tx, rx) = tokio::sync::oneshot::channel::<u32>();
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        run(async move {
            let v = rx.await.unwrap();
            done_tx
                .send((v, std::thread::current().name().map(String::from)))
                .unwrap();
        });
        assert!(done_rx.try_recv().is_err(), "nothing to run yet");
        std::thread::Builder::new()
            .name("replier".into())
            .spawn(move || tx.send(7).unwrap())
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(done_rx.try_recv().unwrap(), (7, Some("replier".into())));
    }

    #[test]
    fn wake_ups_during_a_poll_are_not_lost_and_it_completes_once() {
        // A future that wakes itself while being polled, a few times over.
        struct SelfWaking(u32, Arc<AtomicUsize>);
        impl Future for SelfWaking {
            type Output = ();
            fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
                if self.0 == 0 {
                    self.1.fetch_add(1, Ordering::SeqCst);
                    return Poll::Ready(());
                }
                self.0 -= 1;
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        }
        let finished = Arc::new(AtomicUsize::new(0));
        let (f, g) = (finished.clone(), finished.clone());
        run(async move {
            SelfWaking(5, f).await;
            g.fetch_add(10, Ordering::SeqCst);
        });
        assert_eq!(finished.load(Ordering::SeqCst), 11);
    }
}
