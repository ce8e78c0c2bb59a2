//! The actor's side of a reservation: a future that takes the actor's turn like an
//! async handler and delivers only the messages sent through the reservation.
//!
//! While it is pending the actor handles nothing from its mailbox (the runtime already
//! guarantees this for async handlers: macro-step), so other mail waits, in order.
//! It ends (completes) when the holder has released the reservation and its queue is
//! empty, when the lease expires, when a stop is requested or a handler asks for one,
//! or when the actor is killed or fails (then the turn drops it).

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::ptr::NonNull;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use crate::Actor;
use crate::cell::Cell;
use crate::mailbox::chain::Chain;
use crate::mailbox::node::{Delivered, Header, PendingFuture};
use crate::sync::Mutex;

use super::Ended;

/// Where a reservation is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum State {
    /// Requested; not granted yet.
    Waiting,
    /// Granted: the actor handles only this reservation's messages.
    Active,
    /// The holder is done; the actor handles what is queued, then the mailbox again.
    Released,
    Ended(Ended),
}

pub(super) struct Queue<A: Actor> {
    /// Intrusive, like the mailbox: a holder that sends faster than the actor handles
    /// grows no buffer (a `VecDeque` here cost page faults per message in the ping
    /// benchmark).
    nodes: Chain,
    actor: PhantomData<fn(A)>,
    pub(super) waker: Option<Waker>,
    pub(super) state: State,
}

/// Shared by the holder (`Reservation`) and the actor's session future.
pub(super) struct Session<A: Actor> {
    pub(super) queue: Mutex<Queue<A>>,
    pub(super) lease: Duration,
}

// SAFETY: the node pointers own messages of `Send` types and are only reached under
// the mutex; the waker is `Send + Sync`.
unsafe impl<A: Actor> Send for Session<A> {}
// SAFETY: as above: every field is behind the mutex or immutable.
unsafe impl<A: Actor> Sync for Session<A> {}

impl<A: Actor> Session<A> {
    pub(super) fn new(lease: Duration) -> Self {
        Self {
            queue: Mutex::new(Queue {
                nodes: Chain::new(),
                actor: PhantomData,
                waker: None,
                state: State::Waiting,
            }),
            lease,
        }
    }

    pub(super) fn state(&self) -> State {
        self.queue.lock().state
    }

    /// Queues `msg`, made into a node by `node`; gives it back if the reservation is
    /// not active.
    pub(super) fn push<M>(
        &self,
        msg: M,
        node: impl FnOnce(M) -> NonNull<Header<A>>,
    ) -> Result<(), M> {
        let waker = {
            let mut q = self.queue.lock();
            if q.state != State::Active {
                return Err(msg);
            }
            // SAFETY: a fresh node in no queue; the chain owns it now.
            unsafe { q.nodes.push_back(Header::link(node(msg))) };
            q.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
        Ok(())
    }

    /// The holder is done: the session ends once its queue is empty.
    pub(super) fn release(&self) {
        let waker = {
            let mut q = self.queue.lock();
            match q.state {
                State::Waiting | State::Active => q.state = State::Released,
                State::Released | State::Ended(_) => return,
            }
            q.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// Ends the reservation: what is still queued is dropped (its asks fail).
    pub(super) fn end(&self, why: Ended) {
        let dropped = {
            let mut q = self.queue.lock();
            if matches!(q.state, State::Ended(_)) {
                return;
            }
            q.state = State::Ended(why);
            q.waker = None;
            std::mem::replace(&mut q.nodes, Chain::new())
        };
        let mut dropped = dropped;
        while let Some(link) = dropped.pop_front() {
            // SAFETY: the chain holds only nodes of actor type `A` (`push`), taken out
            // of the session and owned here.
            unsafe {
                let node = Header::<A>::from_link(link);
                (Header::vtable(node).discard)(node);
            }
        }
    }
}

impl<A: Actor> Drop for Session<A> {
    fn drop(&mut self) {
        // Nodes still queued (none, if the session ended as it should) are freed, not
        // leaked; their asks fail.
        self.end(Ended::ActorStopped);
    }
}

/// The session, as the pending future of the actor's turn.
pub(super) struct SessionFuture<A: Actor> {
    session: Arc<Session<A>>,
    cell: NonNull<Cell<A>>,
    /// An async handler of a reservation message, run to completion before the next.
    inner: Option<PendingFuture>,
    lease: futures_timer::Delay,
}

// SAFETY: `cell` points at the cell whose turn polls this future; the cell is `Sync`
// and outlives the future (see `start`). Everything else is `Send`.
unsafe impl<A: Actor> Send for SessionFuture<A> {}

impl<A: Actor> SessionFuture<A> {
    /// Starts the session on the actor's turn.
    ///
    /// # Safety
    /// Called from a node's deliver, on the turn of `cell`, which keeps the returned
    /// future in its `pending` slot: the cell then outlives the future and polls it
    /// only on its own turn, as for `deliver_async`.
    pub(super) unsafe fn start(session: Arc<Session<A>>, cell: &Cell<A>) -> Delivered {
        let lease = futures_timer::Delay::new(session.lease);
        let fut = SessionFuture {
            session,
            cell: cell.raw(),
            inner: None,
            lease,
        };
        Delivered::Suspended(Box::pin(fut))
    }

    fn cell(&self) -> &Cell<A> {
        // SAFETY: `start`'s contract: the cell outlives this future.
        unsafe { self.cell.as_ref() }
    }
}

impl<A: Actor> Future for SessionFuture<A> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        let budget = this.cell().shared().config.budget;
        let mut handled = 0usize;
        loop {
            if let Some(inner) = this.inner.as_mut() {
                match inner.as_mut().poll(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(()) => this.inner = None,
                }
            }
            if this.cell().stop_requested() {
                this.session.end(Ended::ActorStopped);
                return Poll::Ready(());
            }
            // SAFETY: on the actor's turn; no handler runs and nothing borrows the
            // context now (the inner future, which may, is finished).
            if unsafe { this.cell().context() }.has_between() {
                // A handler asked for a stop or a move: the turn carries it out next.
                this.session.end(Ended::ActorStopped);
                return Poll::Ready(());
            }
            // The lease is looked at once per poll, not per message (a timer poll
            // costs as much as a small message): a poll handles at most `budget`
            // messages, so a holder that keeps sending is still cut off within one
            // turn of the expiry, and this poll registered the timer's waker.
            if handled == 0 && Pin::new(&mut this.lease).poll(cx).is_ready() {
                tracing::warn!(
                    actor = %this.cell().id(),
                    lease = ?this.session.lease,
                    "atomic reservation lease expired; the holder is cut off"
                );
                this.session.end(Ended::LeaseExpired);
                return Poll::Ready(());
            }
            if handled >= budget {
                // Fairness: give the worker up and come back from the back of a run
                // queue, still holding the actor.
                this.cell().yield_turn();
                return Poll::Pending;
            }
            let node = {
                let mut q = this.session.queue.lock();
                match q.nodes.pop_front() {
                    // SAFETY: the chain holds only nodes of actor type `A` (`push`).
                    Some(link) => unsafe { Header::<A>::from_link(link) },
                    None => match q.state {
                        State::Released => {
                            drop(q);
                            this.session.end(Ended::Released);
                            return Poll::Ready(());
                        }
                        State::Ended(_) => return Poll::Ready(()),
                        State::Waiting | State::Active => {
                            q.waker = Some(cx.waker().clone());
                            return Poll::Pending;
                        }
                    },
                }
            };
            handled += 1;
            // SAFETY: the node is owned (taken from the queue), of this actor type,
            // and delivered on the actor's turn with no borrow of state or context.
            match unsafe { (Header::vtable(node).deliver)(node, this.cell()) } {
                Delivered::Done => {}
                Delivered::Suspended(fut) => this.inner = Some(fut),
            }
        }
    }
}

impl<A: Actor> Drop for SessionFuture<A> {
    fn drop(&mut self) {
        // The inner handler borrows the state: it goes first.
        self.inner = None;
        // Killed, failed, or the system shut down while the reservation was held.
        self.session.end(Ended::ActorStopped);
    }
}
