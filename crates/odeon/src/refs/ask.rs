//! Request–reply.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::sync::oneshot;

use super::TellError;
use super::deadline::{Deadline, Status};
use crate::system::Shared;

/// Why an ask got no reply.
///
/// ```
/// use std::time::Duration;
/// use odeon::{Actor, AskError, Context, Handler, Message, System};
///
/// struct Oracle;
/// impl Actor for Oracle {}
/// struct Question(u32);
/// impl Message for Question { type Reply = u32; }
/// impl Handler<Question> for Oracle {
///     fn handle(&mut self, q: Question, _: &mut Context<Self>) -> u32 {
///         assert!(q.0 != 13, "unlucky");
///         q.0 * 2
///     }
/// }
///
/// let system = System::new();
/// let oracle = system.spawn(Oracle);
/// let ask = oracle.ask(Question(21)).timeout(Duration::from_secs(5));
/// assert_eq!(system.block_on(ask), Ok(42));
/// // A panicking handler fails the ask instead of leaving it hanging...
/// assert_eq!(system.block_on(oracle.ask(Question(13))), Err(AskError::Panicked));
/// // ...and the actor is gone afterwards.
/// assert_eq!(system.block_on(oracle.ask(Question(1))), Err(AskError::Stopped));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AskError {
    /// The actor had stopped, or stopped before handling the message.
    #[error("the actor stopped before replying")]
    Stopped,
    /// The handler panicked.
    #[error("the handler panicked")]
    Panicked,
    /// No reply within the deadline.
    #[error("no reply within {0:?}")]
    Timeout(Duration),
    /// The actor's bounded mailbox was full.
    #[error("the actor's mailbox is full")]
    Full,
    /// The actor's node could not be reached, or was lost before it replied.
    #[error("the actor's node is unreachable")]
    Unreachable,
    /// The message type is not in the remote actor's declared interface.
    #[error("the message type is not part of the actor's remote interface")]
    NotRemote,
    /// The remote node refused the message or its reply (unknown type, bad encoding).
    #[error("rejected by the remote node: {0}")]
    Rejected(String),
    /// The handler took the reply into a [`ReplySender`](crate::ReplySender) (see
    /// [`DeferredHandler`](crate::DeferredHandler)) and dropped it without sending.
    #[error("the reply sender was dropped without replying")]
    Dropped,
}

impl<M> From<TellError<M>> for AskError {
    fn from(e: TellError<M>) -> Self {
        match e {
            TellError::Stopped(_) => AskError::Stopped,
            TellError::Full(_) => AskError::Full,
            TellError::Unreachable(_) => AskError::Unreachable,
            TellError::NotRemote(_) => AskError::NotRemote,
        }
    }
}

type Slot<R> = oneshot::Sender<Result<R, AskError>>;

/// The sending half, carried in the message's node. Dropped unsent, it tells the asker
/// why: `Panicked` while unwinding from a handler, `Stopped` otherwise.
pub(crate) struct ReplyTo<R> {
    tx: Option<Slot<R>>,
}

impl<R> ReplyTo<R> {
    pub(crate) fn send(mut self, value: R) {
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(Ok(value));
        }
    }

    pub(crate) fn fail(mut self, error: AskError) {
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(Err(error));
        }
    }
}

impl<R> Drop for ReplyTo<R> {
    fn drop(&mut self) {
        if let Some(tx) = self.tx.take() {
            let err = if std::thread::panicking() {
                AskError::Panicked
            } else {
                AskError::Stopped
            };
            let _ = tx.send(Err(err));
        }
    }
}

/// A future of an actor's reply. Completes with the reply or an [`AskError`]; never
/// hangs past its deadline.
///
/// The deadline counts from the first poll, and the ask never times out before it. One
/// of a second or more is kept by the system's monitor thread, with no timer per ask,
/// and fires up to one monitor tick late (2 ms while the pool works, up to 50 ms while
/// it idles); a shorter one gets a timer of its own. Both run on the wall clock, not on
/// tokio's: a paused test clock (`tokio::time::pause`) neither delays nor advances them.
///
/// An ask can be awaited on any executor (the system's, a tokio runtime of the
/// application's, `futures::executor::block_on`), and also after the system has shut
/// down: it never needs the system's I/O runtime, so it completes with the reply or an
/// [`AskError`] and never panics.
#[must_use = "an ask does nothing useful unless its reply is awaited"]
pub struct Ask<R> {
    rx: Option<oneshot::Receiver<Result<R, AskError>>>,
    /// `ActorRef::ask_wait` on a full bounded mailbox: waits for room, then enqueues.
    /// Boxed so that every other ask pays one pointer for it, not the future's slot.
    enqueue: Option<Box<Enqueue>>,
    early: Option<AskError>,
    timeout: Duration,
    timer: Timer,
    shared: Arc<Shared>,
}

/// Waiting for room in a bounded mailbox, then sending. In a `Mutex` only so that `Ask`
/// stays `Sync` (the message need not be); it is only ever reached through `&mut`
/// (`get_mut`), never locked.
type Enqueue = std::sync::Mutex<Pin<Box<dyn Future<Output = Result<(), AskError>> + Send>>>;

/// How an ask keeps its deadline.
enum Timer {
    /// Not polled yet (the deadline starts at the first poll).
    Unarmed,
    /// Registered with the system's deadline watch (`deadline.rs`).
    Watched(Arc<Deadline>),
    /// Its own timer: short timeouts, or the watch had stopped. Not a tokio `Sleep`:
    /// polling one after the system's I/O runtime shut down panics ("A Tokio 1.x
    /// context was found, but it is being shutdown"), and an ask may outlive that
    /// runtime. `futures-timer` keeps its deadlines on a thread of its own.
    Own(futures_timer::Delay),
}

impl<R> Drop for Ask<R> {
    fn drop(&mut self) {
        if let Timer::Watched(d) = &self.timer {
            d.settle();
        }
    }
}

impl<R> std::fmt::Debug for Ask<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ask")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

pub(crate) fn pair<R>(shared: &Arc<Shared>) -> (ReplyTo<R>, Ask<R>) {
    let (tx, rx) = oneshot::channel();
    (
        ReplyTo { tx: Some(tx) },
        Ask {
            rx: Some(rx),
            enqueue: None,
            early: None,
            timeout: shared.config.ask_timeout,
            timer: Timer::Unarmed,
            shared: shared.clone(),
        },
    )
}

impl<R> Ask<R> {
    pub(crate) fn failed(err: AskError, shared: &Arc<Shared>) -> Self {
        Ask {
            rx: None,
            enqueue: None,
            early: Some(err),
            timeout: shared.config.ask_timeout,
            timer: Timer::Unarmed,
            shared: shared.clone(),
        }
    }

    /// This ask first waits for room (`ActorRef::ask_wait`): `enqueue` sends the message.
    pub(crate) fn after(
        mut self,
        enqueue: impl Future<Output = Result<(), AskError>> + Send + 'static,
    ) -> Self {
        self.enqueue = Some(Box::new(std::sync::Mutex::new(Box::pin(enqueue))));
        self
    }

    /// Drives `ask_wait`'s wait for room; an error ends the ask. Out of line, and
    /// `poll` and `deadline_passed` marked `#[inline]`: with the wait inline, `poll`
    /// stopped being inlined into its callers (callgrind, 20,000 asks on a `Sim`:
    /// +77 instructions per ask; now +8 over the code before `ask_wait`).
    #[cold]
    #[inline(never)]
    fn poll_enqueue(&mut self, cx: &mut Context<'_>) -> Result<(), AskError> {
        let Some(enqueue) = self.enqueue.as_mut() else {
            return Ok(());
        };
        let enqueue = enqueue.get_mut().unwrap_or_else(|e| e.into_inner());
        match enqueue.as_mut().poll(cx) {
            Poll::Ready(Ok(())) => self.enqueue = None,
            Poll::Ready(Err(e)) => {
                self.enqueue = None;
                self.rx = None;
                self.disarm();
                return Err(e);
            }
            // Still waiting for room: the caller's deadline covers the wait too.
            Poll::Pending => {}
        }
        Ok(())
    }

    /// Sets the deadline, counted from the first poll.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self.disarm();
        self
    }

    fn disarm(&mut self) {
        if let Timer::Watched(d) = std::mem::replace(&mut self.timer, Timer::Unarmed) {
            d.settle();
        }
    }

    /// An own timer: for `timeout` from now, or until `until`.
    fn own_timer(timeout: Duration, until: Option<std::time::Instant>) -> Timer {
        let wait = match until {
            Some(at) => at.saturating_duration_since(std::time::Instant::now()),
            None => timeout,
        };
        Timer::Own(futures_timer::Delay::new(wait))
    }

    /// Whether the deadline has passed; otherwise `cx` is woken when it does.
    #[inline]
    fn deadline_passed(&mut self, cx: &mut Context<'_>) -> bool {
        if let Timer::Unarmed = self.timer {
            let worker = self.shared.sched.current_worker();
            match self
                .shared
                .deadlines
                .register(worker, self.timeout, cx.waker())
            {
                // Registered with this waker, and due a second from now at the earliest.
                Some(d) => {
                    self.timer = Timer::Watched(d);
                    return false;
                }
                None => self.timer = Self::own_timer(self.timeout, None),
            }
        }
        if let Timer::Watched(d) = &self.timer {
            match d.check(cx.waker()) {
                Status::Waiting => return false,
                Status::Fired => return true,
                // With no representable due time, `own_timer` waits `timeout`, which
                // `futures-timer` caps at its far future instead of overflowing.
                Status::Abandoned => self.timer = Self::own_timer(self.timeout, d.fallback()),
            }
        }
        match &mut self.timer {
            Timer::Own(delay) => Pin::new(delay).poll(cx).is_ready(),
            _ => false,
        }
    }
}

impl<R> Future for Ask<R> {
    type Output = Result<R, AskError>;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        if let Some(e) = this.early.take() {
            return Poll::Ready(Err(e));
        }
        if this.enqueue.is_some() {
            if let Err(e) = this.poll_enqueue(cx) {
                return Poll::Ready(Err(e));
            }
        }
        let Some(rx) = this.rx.as_mut() else {
            return Poll::Ready(Err(AskError::Stopped));
        };
        if let Poll::Ready(res) = Pin::new(rx).poll(cx) {
            this.rx = None;
            this.disarm();
            return Poll::Ready(res.unwrap_or(Err(AskError::Stopped)));
        }
        if this.deadline_passed(cx) {
            this.rx = None;
            this.enqueue = None;
            this.disarm();
            #[cfg(feature = "observe")]
            if crate::observe::process_on() {
                crate::observe::count(crate::observe::ASKS_TIMED_OUT);
            }
            return Poll::Ready(Err(AskError::Timeout(this.timeout)));
        }
        Poll::Pending
    }
}
