//! One turn (activation) of an actor: resume a parked async handler, run `started` on
//! the first turn, then deliver up to `budget` nodes.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::Poll;

use super::{
    Cell, IDLE, KILL_REQUESTED, NOTIFIED, PARKED, Phase, RUNNING, SCHEDULED, STOP_REQUESTED,
    YIELDED,
};
use crate::actor::context::Between;
use crate::defaults;
use crate::mailbox::node::{Delivered, Header, Kind};
use crate::scheduler::{RunOutcome, TaskHeader, TurnReport};
use crate::{Actor, StopReason};

/// The `run` entry of every cell's task vtable.
///
/// # Safety
/// `task` points at the `task` field of a live `Cell<A>` whose turn the caller owns
/// (it was popped from a run queue), and the runtime's count on the cell is held.
pub(crate) unsafe fn run_turn<A: Actor>(task: NonNull<TaskHeader>) -> TurnReport {
    let ptr = task.cast::<Cell<A>>();
    // SAFETY: `task` is the first field of a `#[repr(C)] Cell<A>` and was made from the
    // cell's `Arc::as_ptr` pointer (caller contract), so it may be used as the cell.
    let report = unsafe { ptr.as_ref() }.turn();
    if report.outcome == RunOutcome::Stopped {
        // SAFETY: the turn that stops the actor gives back the count `spawn` took with
        // `Arc::into_raw`; `ptr` has the provenance of that `Arc`. Nothing touches the
        // cell after this line.
        unsafe { drop(Arc::from_raw(ptr.as_ptr().cast_const())) };
    }
    report
}

/// Extracts a readable message from a panic payload.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_owned()
    }
}

impl<A: Actor> Cell<A> {
    fn turn(&self) -> TurnReport {
        let mut handled = 0usize;
        let result = catch_unwind(AssertUnwindSafe(|| self.turn_inner(&mut handled)));
        let outcome = match result {
            Ok(outcome) => outcome,
            Err(payload) => {
                let msg = panic_message(&*payload);
                self.log_panic(&msg);
                self.on_panic(msg)
            }
        };
        TurnReport {
            outcome,
            handled: u32::try_from(handled).unwrap_or(u32::MAX),
        }
    }

    /// A panic fails the actor: an error worth seeing, unless a supervisor handles it
    /// (then a warning: the supervisor decides, and logs what it does).
    #[cold]
    #[inline(never)]
    fn log_panic(&self, msg: &str) {
        // SAFETY: on the actor's turn, after the unwind: no borrow of `life` is live.
        let supervised = unsafe { self.life() }.supervision.is_some();
        let label = self.label();
        let (actor, actor_type, name) = (label.id, label.type_name, label.name);
        if supervised {
            tracing::warn!(%actor, actor_type, name, panic = %msg, "actor panicked; its supervisor decides");
        } else {
            tracing::error!(%actor, actor_type, name, panic = %msg, "actor panicked and stopped");
        }
    }

    fn turn_inner(&self, handled: &mut usize) -> RunOutcome {
        // SAFETY (for every `pending`, `life`, `state`, `cx` access in this function):
        // we are the actor's turn (caller contract of `run_turn`), and no borrow of these
        // fields outlives the statement that makes it, except where noted.
        // SAFETY: on the actor's own turn (exclusive, see `cell/mod.rs`); no other borrow of this field is live.
        if unsafe { (*self.pending.get()).is_some() } {
            // A kill cancels the handler here; a stop lets it finish (the mailbox loop
            // below sees the request once it has).
            if self.flags.load(Ordering::Acquire) & KILL_REQUESTED != 0 {
                return self.finish(self.requested_reason());
            }
            self.wake.store(RUNNING, Ordering::Release);
            match self.poll_pending() {
                Poll::Ready(()) => {}
                Poll::Pending => return self.park(),
            }
        }
        // SAFETY: on the actor's own turn (exclusive, see `cell/mod.rs`); no other borrow of this field is live.
        if unsafe { self.life() }.phase != Phase::Running {
            if let Some(outcome) = self.enter(handled) {
                return outcome;
            }
        }
        // A new turn: the first handler's time starts at its own clock read.
        #[cfg(feature = "observe")]
        self.observe_gap();
        let budget = self.shared.config.budget;
        let mut retries = 0u32;
        let mut lingered = 0u32;
        loop {
            if self.flags.load(Ordering::Relaxed) & STOP_REQUESTED != 0 {
                return self.finish(self.requested_reason());
            }
            // SAFETY: on the actor's own turn (exclusive, see `cell/mod.rs`); no other borrow of this field is live.
            if let Some(between) = unsafe { self.context() }.take_between() {
                #[cfg(feature = "observe")]
                self.observe_gap();
                if let Some(outcome) = self.between(*between) {
                    return outcome;
                }
            }
            if *handled >= budget {
                #[cfg(feature = "observe")]
                if self.shared.config.observe {
                    crate::observe::budget_exhausted();
                }
                return RunOutcome::Requeue;
            }
            // SAFETY: on the actor's own turn (exclusive, see `cell/mod.rs`); no other borrow of this field is live.
            let failed = unsafe { self.life() }.phase == Phase::Failed;
            let held = if failed {
                None
            } else {
                // SAFETY: on the actor's own turn (exclusive, see `cell/mod.rs`); no other borrow of this field is live.
                unsafe { self.life() }.held.pop_front()
            };
            let node = match held {
                Some(n) => n,
                // SAFETY: we are the mailbox's consumer.
                None => match unsafe { self.mailbox.pop(&self.mailbox_head) } {
                    // SAFETY: every link in this mailbox starts a `Header<A>`.
                    Some(link) => unsafe { Header::<A>::from_link(link) },
                    None => {
                        if let Some(outcome) = self.on_empty(&mut retries, &mut lingered) {
                            return outcome;
                        }
                        continue;
                    }
                },
            };
            *handled += 1;
            // SAFETY: the node is alive until deliver/discard frees it.
            let vtable = unsafe { Header::vtable(node) };
            if vtable.kind != Kind::Signal {
                // A user message left the mailbox: its slot is free again, even if it
                // is only held until a supervisor's restart. (Notices took no slot.)
                if held.is_none() && vtable.kind == Kind::User {
                    if let Some(bound) = self.bound() {
                        bound.add_permits(1);
                    }
                }
                if failed {
                    // SAFETY: on the actor's own turn (exclusive, see `cell/mod.rs`); no other borrow of this field is live.
                    unsafe { self.life() }.held.push_back(node);
                    continue;
                }
            }
            // Runtime signals (restarts, child events) are not messages of the actor.
            #[cfg(feature = "observe")]
            if self.shared.config.observe {
                if vtable.kind != Kind::Signal {
                    // SAFETY: as for the delivery below.
                    if unsafe { self.deliver_observed(node, vtable) } {
                        return self.park();
                    }
                    continue;
                }
                // A signal's work is no handler's time.
                // SAFETY: on the actor's own turn (exclusive, see `cell/mod.rs`); no other borrow of this field is live.
                unsafe { self.life() }.obs.gap();
            }
            // SAFETY: the node came from this cell's mailbox or held queue and is of
            // this vtable's type; no borrow of state/context is live here.
            match unsafe { (vtable.deliver)(node, self) } {
                Delivered::Done => {}
                Delivered::Suspended(fut) => {
                    if let Some(outcome) = self.suspend(fut) {
                        return outcome;
                    }
                }
            }
        }
    }

    /// Makes `fut` the turn's pending future and polls it; returns the outcome if the
    /// turn parks.
    pub(super) fn suspend(&self, fut: crate::mailbox::node::PendingFuture) -> Option<RunOutcome> {
        // SAFETY: on the actor's own turn (exclusive, see `cell/mod.rs`); no other borrow of this field is live.
        unsafe { *self.pending.get() = Some(fut) };
        self.wake.store(RUNNING, Ordering::Release);
        if self.poll_pending().is_pending() {
            return Some(self.park());
        }
        None
    }

    /// The start of a turn in any phase but `Running`: runs the hook that comes first
    /// (`started`, `migration_failed`, `migrated`), or hands a stub's turn over.
    #[cold]
    #[inline(never)]
    fn enter(&self, handled: &mut usize) -> Option<RunOutcome> {
        // SAFETY: on the actor's turn, before any message: no pending future (its
        // check ran first) and no other borrow of life, state or context.
        let life = unsafe { self.life() };
        match life.phase {
            Phase::New => {
                life.phase = Phase::Running;
                // SAFETY: as above.
                let (state, cx) = unsafe { self.state_and_context() };
                state.started(cx);
                return self.start();
            }
            Phase::Resumed => {
                life.phase = Phase::Running;
                // SAFETY: as above.
                let (state, cx) = unsafe { self.state_and_context() };
                if let Some(error) = cx.more().move_error.take() {
                    state.migration_failed(cx, &*error);
                }
            }
            Phase::Migrated => {
                life.phase = Phase::Running;
                // SAFETY: as above.
                let (state, cx) = unsafe { self.state_and_context() };
                state.migrated(cx);
            }
            Phase::Moved => return Some(self.stub_turn(handled)),
            Phase::Running | Phase::Failed => {}
            Phase::Frozen | Phase::Prepared => {
                unreachable!("a frozen or prepared actor's turn belongs to its transport")
            }
        }
        None
    }

    /// A handler (or a signal) asked for a stop or a move. A stop wins; the move's
    /// request is then refused as the actor stopped.
    #[cold]
    #[inline(never)]
    fn between(&self, between: Between) -> Option<RunOutcome> {
        let Between { stop, mv, start } = between;
        if let Some(reason) = stop {
            let outcome = self.finish(reason);
            drop(mv);
            return Some(outcome);
        }
        if start {
            if let Some(outcome) = self.start() {
                // The start is awaiting; a move asked for meanwhile is refused.
                drop(mv);
                return Some(outcome);
            }
            // A start that failed at once asked for a stop: act on it now.
            // SAFETY: on the actor's turn; the start's future is gone.
            if let Some(next) = unsafe { self.context() }.take_between() {
                return self.between(*next);
            }
        }
        mv.and_then(|mv| self.freeze(mv))
    }

    /// The mailbox looked empty. Returns the outcome if the turn ends here.
    pub(super) fn on_empty(&self, retries: &mut u32, lingered: &mut u32) -> Option<RunOutcome> {
        // SAFETY: turn-owned (see `turn_inner`).
        let life = unsafe { self.life() };
        if life.gc_check {
            // Acquire pairs with the Release decrement in `ActorRef::drop`. A kept-alive
            // actor is never collected (`SpawnOptions::keep_alive`).
            if !life.keep_alive && self.refs.load(Ordering::Acquire) == 0 {
                // The pop that found the mailbox empty ran *before* this load. A sender
                // may have pushed and then dropped the last reference in between: its
                // push happens-before its decrement, which this load synchronized
                // with, so the mailbox shows that message now. Deliver it first (the
                // check stays armed and runs again once the mailbox is dry).
                // SAFETY: we are the mailbox's consumer.
                if unsafe { self.mailbox.has_pending() } {
                    *retries += 1;
                    if *retries > defaults::PUSH_IN_PROGRESS_RETRIES {
                        // Its successor's push is still in flight; come back later.
                        return Some(RunOutcome::Requeue);
                    }
                    return None;
                }
                return Some(self.finish(StopReason::Unreferenced));
            }
            life.gc_check = false;
        }
        // Linger: if this thread has nothing else to run, wait a moment for the next
        // message before giving up the turn. A steady stream from one producer then
        // never goes through "mailbox empty -> reschedule via a run queue" per message,
        // which costs the producer a run-queue push and, when it races with the worker
        // going idle, a futex wake-up of another worker (see `SystemBuilder::linger_rounds`).
        // Any other runnable work ends the linger, so fairness is unchanged.
        if *lingered < self.shared.config.linger_rounds && self.shared.sched.nothing_else_to_run() {
            *lingered += 1;
            // Waiting for mail is no handler's time.
            #[cfg(feature = "observe")]
            self.observe_gap();
            for _ in 0..defaults::LINGER_SPINS {
                std::hint::spin_loop();
            }
            return None;
        }
        // The unit ends only *after* the mark succeeds: `Drained` tells the thread
        // that ran the turn to end it. Ending it before the mark left a window in
        // which a message pushed meanwhile (the mark then fails) was covered by no
        // open unit: with this worker descheduled in that window and every other
        // actor's mail funnelled into this one, `wait_quiescent` saw begun == ended
        // while all of it was still queued (`tests/scheduling_quiescence.rs`: 7 of 15
        // runs failed so). Once the mark succeeds another thread may schedule, stop
        // and free this cell, so nothing may touch `self` after it; the unit's counter
        // belongs to the calling thread, not to the cell.
        // SAFETY: we are the consumer; on success we give up the role and return
        // without touching `self` again.
        if unsafe { self.mailbox.mark_empty(&self.mailbox_head) } {
            return Some(RunOutcome::Drained);
        }
        *retries += 1;
        if *retries > defaults::PUSH_IN_PROGRESS_RETRIES {
            // A producer is between its swap and its link; let others run meanwhile.
            return Some(RunOutcome::Requeue);
        }
        std::hint::spin_loop();
        None
    }

    /// Polls the pending async handler. On `Ready` the actor's state is free again.
    pub(super) fn poll_pending(&self) -> Poll<()> {
        let waker = self.waker();
        let mut task_cx = std::task::Context::from_waker(&waker);
        // SAFETY: the pending future is owned by the turn; the state and context it
        // borrows are not touched while it exists (see `deliver_async`).
        let pending = unsafe { &mut *self.pending.get() };
        let Some(fut) = pending.as_mut() else {
            return Poll::Ready(());
        };
        match fut.as_mut().poll(&mut task_cx) {
            Poll::Ready(()) => {
                *pending = None;
                self.wake.store(IDLE, Ordering::Release);
                Poll::Ready(())
            }
            Poll::Pending => Poll::Pending,
        }
    }

    /// Ends the turn with an async handler pending, unless it was woken meanwhile.
    fn park(&self) -> RunOutcome {
        loop {
            // AcqRel pairs with the waker's CAS in `wake_turn`.
            match self
                .wake
                .compare_exchange(RUNNING, PARKED, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => {
                    // A kill that looked at `wake` before this turn set `RUNNING`
                    // (while it was `IDLE` or `SCHEDULED`) woke nobody. The fence pairs
                    // with the one in `request`: either its `wake_turn` sees `PARKED`,
                    // or this load sees its flag.
                    std::sync::atomic::fence(Ordering::SeqCst);
                    if self.flags.load(Ordering::Relaxed) & KILL_REQUESTED != 0
                        && self
                            .wake
                            .compare_exchange(
                                PARKED,
                                SCHEDULED,
                                Ordering::AcqRel,
                                Ordering::Acquire,
                            )
                            .is_ok()
                    {
                        // The next turn sees the kill and cancels the handler.
                        return RunOutcome::Requeue;
                    }
                    return RunOutcome::Parked;
                }
                Err(NOTIFIED) => {
                    if self.flags.load(Ordering::Acquire) & KILL_REQUESTED != 0 {
                        // A kill woke us: the next turn sees it and cancels the handler.
                        self.wake.store(SCHEDULED, Ordering::Release);
                        return RunOutcome::Requeue;
                    }
                    self.wake.store(RUNNING, Ordering::Release);
                    if self.poll_pending().is_ready() {
                        // Carry on with the mailbox in a fresh turn.
                        return RunOutcome::Requeue;
                    }
                }
                // Only pending futures reach `park`, never the plain message path, so
                // this arm costs a plain actor nothing: a reservation that used its
                // budget asked to give the worker up (`Cell::yield_turn`).
                Err(YIELDED) => {
                    self.wake.store(SCHEDULED, Ordering::Release);
                    return RunOutcome::Requeue;
                }
                Err(other) => unreachable!("wake state {other} while running"),
            }
        }
    }
}
