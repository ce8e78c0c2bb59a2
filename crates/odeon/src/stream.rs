//! Streams feeding an actor: [`Context::add_stream`](crate::Context::add_stream).
//!
//! A task on the system's tokio runtime polls the stream and sends each item to the
//! actor with [`ActorRef::send`], one at a time: items arrive in the stream's order,
//! and a bounded mailbox that is full makes the task wait for room (the stream is not
//! polled meanwhile), so nothing is dropped. The task holds a strong reference (like
//! a timer) and counts as work in flight for quiescence until it ends: when the stream
//! ends, when [`StreamHandle::cancel`] is called, or when the actor stops (the context
//! cancels it then, and the stream is dropped on the runtime).

use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures_core::Stream;
use tokio::task::AbortHandle;

use crate::system::Shared;
use crate::timer::Unit;
use crate::{Actor, ActorRef, Handles, Message};

/// A stream feeding an actor ([`Context::add_stream`](crate::Context::add_stream)).
/// Dropping the handle does not cancel the stream; [`StreamHandle::cancel`] does.
#[derive(Clone, Debug)]
pub struct StreamHandle {
    abort: AbortHandle,
    /// Set by `cancel`, read by the task before each send: an abort alone takes effect
    /// only when the task yields, and a stream that is always ready feeding an
    /// unbounded mailbox never makes it yield.
    cancelled: Arc<AtomicBool>,
}

impl StreamHandle {
    /// Stops forwarding: items not yet sent will not be, and the stream is dropped (on
    /// the system's tokio runtime, shortly after).
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Release);
        self.abort.abort();
    }

    /// Whether the stream ended, was cancelled, or its actor stopped (its task is gone).
    pub fn is_finished(&self) -> bool {
        self.abort.is_finished()
    }
}

/// What the forwarding task owns besides the stream. Fields drop in order: the
/// reference (whose drop may queue a GC signal, itself work in flight) goes before the
/// quiescence unit ends, so quiescence is never seen between the two.
struct Feeder<A: Actor> {
    target: ActorRef<A>,
    _unit: Unit,
}

pub(crate) fn add_stream<A, M, K, S>(
    shared: &Arc<Shared>,
    target: ActorRef<A>,
    stream: S,
) -> StreamHandle
where
    A: Handles<M, K>,
    M: Message,
    K: 'static,
    S: Stream<Item = M> + Send + 'static,
{
    shared.sched.begin_unit();
    let feeder = Feeder {
        target,
        _unit: Unit(shared.clone()),
    };
    let cancelled = Arc::new(AtomicBool::new(false));
    let seen = cancelled.clone();
    let task = shared.io.spawn(async move {
        let feeder = feeder;
        let mut stream = pin!(stream);
        while let Some(item) = std::future::poll_fn(|cx| stream.as_mut().poll_next(cx)).await {
            if seen.load(Ordering::Acquire) {
                break;
            }
            // Waits for room in a bounded mailbox; a stopped actor ends the stream.
            if feeder.target.send(item).await.is_err() {
                break;
            }
            // A stream that is always ready would otherwise keep this runtime thread
            // (and, on a current-thread runtime, every other task) to itself.
            tokio::task::consume_budget().await;
        }
    });
    StreamHandle {
        abort: task.abort_handle(),
        cancelled,
    }
}
