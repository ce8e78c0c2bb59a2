//! The asynchronous start (`Actor::on_start`), on the actor's first turn, and again
//! after each supervisor restart (the restart asks for it through the context's
//! `Between`, which the turn checks after every message anyway).
//!
//! The future is created right after `started`. The default one is of size zero and
//! ready at once: it is boxed without an allocation, polled once with a no-op waker
//! and gone, so actors that do not override the hook pay nothing more than a call.
//! Any other future becomes the turn's pending future, exactly as an async handler's
//! (see `cell/mod.rs`): the mailbox stays unmarked while it awaits, so messages sent
//! meanwhile queue in order and nothing schedules the actor, and a kill cancels it. An
//! error is turned into a stop request on the context (`StartFailed`), which the turn
//! acts on before the first message.

use std::future::Future;
use std::pin::Pin;
use std::ptr::NonNull;
use std::task::{Poll, Waker};

use super::Cell;
use crate::actor::StartError;
use crate::mailbox::node::PendingFuture;
use crate::scheduler::RunOutcome;
use crate::{Actor, StopReason};

/// The cell, carried by the start future to report an error once the hook's own
/// future (which borrows the context) is done.
struct CellPtr<A: Actor>(NonNull<Cell<A>>);

// SAFETY: the pointer is only dereferenced by the pending start future, which runs on
// the actor's turn (whatever thread that is on); `Cell<A>` is `Sync`.
unsafe impl<A: Actor> Send for CellPtr<A> {}

impl<A: Actor> CellPtr<A> {
    /// Asks the turn to stop the actor with `StartFailed`.
    ///
    /// # Safety
    /// On the actor's turn, with no live borrow of its context.
    unsafe fn fail(&self, error: &StartError) {
        // SAFETY: the cell outlives its pending future (the runtime's count is held
        // until the actor stops, and stopping drops the future first); caller contract
        // for the context.
        let cell = unsafe { self.0.as_ref() };
        cell.start_failed(error);
    }
}

impl<A: Actor> Cell<A> {
    /// Runs `on_start` on the first turn, after `started`. Returns the outcome if the
    /// turn ends here (the hook is awaiting).
    pub(super) fn start(&self) -> Option<RunOutcome> {
        // SAFETY: on the actor's turn, before any message: no pending future and no
        // other borrow of state or context.
        let (state, cx) = unsafe { self.state_and_context() };
        // Boxing a zero-sized future does not allocate.
        let mut fut = Box::pin(state.on_start(cx));
        if size_of_val(&*fut) == 0 {
            let mut task_cx = std::task::Context::from_waker(Waker::noop());
            if let Poll::Ready(result) = fut.as_mut().poll(&mut task_cx) {
                drop(fut);
                if let Err(error) = result {
                    self.start_failed(&error);
                }
                return None;
            }
        }
        let ptr = CellPtr(self.raw());
        let wrapped = async move {
            let result = fut.await;
            if let Err(error) = result {
                // SAFETY: on the turn polling this future; the hook's future, which
                // borrowed the context, was consumed by the `.await` above.
                unsafe { ptr.fail(&error) };
            }
        };
        let wrapped: Pin<Box<dyn Future<Output = ()> + Send + '_>> = Box::pin(wrapped);
        // SAFETY: as for an async handler's future (`mailbox/node.rs`,
        // `deliver_async`): it borrows the state and context, which stay at a fixed
        // address inside the cell; the cell keeps it in `pending`, touches neither
        // while it exists, and drops it before the state.
        let pending = unsafe {
            std::mem::transmute::<Pin<Box<dyn Future<Output = ()> + Send + '_>>, PendingFuture>(
                wrapped,
            )
        };
        self.suspend(pending)
    }

    /// The hook returned an error: the turn stops the actor before the first message.
    fn start_failed(&self, error: &StartError) {
        let reason = StopReason::StartFailed(error.to_string());
        let label = self.label();
        let (actor, actor_type, name) = (label.id, label.type_name, label.name);
        tracing::warn!(%actor, actor_type, name, %reason, "actor failed to start");
        // SAFETY: on the turn, with no live borrow of the context (the hook's future
        // is gone).
        unsafe { self.context() }.stop_with(reason);
    }
}

#[cfg(test)]
mod tests {
    use crate::{Actor, Context};

    struct Plain;
    impl Actor for Plain {}

    #[test]
    fn the_default_start_future_is_zero_sized() {
        // What keeps actors without `on_start` free of an allocation and a parked turn
        // (`Cell::start`).
        let mut cx = Context::<Plain>::detached();
        let mut plain = Plain;
        let fut = plain.on_start(&mut cx);
        assert_eq!(size_of_val(&fut), 0);
    }
}
