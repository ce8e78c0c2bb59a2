//! How an actor stops, fails, restarts and is collected.
//!
//! # Stop and kill
//! A stop request (`ActorRef::stop`, a parent's stop, a link's failure, shutdown) is
//! seen by the turn between two messages: the message being handled, including an
//! async handler that is awaiting, runs to completion first. A kill (`ActorRef::kill`,
//! or shutdown once its grace is over) also wakes a parked async handler, whose turn
//! then drops its future mid-await, and kills the actor's children rather than
//! stopping them. Neither can interrupt a synchronous handler.
//!
//! # Stopping (always on the actor's own turn)
//! 1. Drop a pending async handler (only a kill gets here with one: it borrows the
//!    state).
//! 2. `stopping` hook, then stop (or, if killed, kill) children and cancel timers.
//! 3. `stopped(reason)` hook, then drop the state. A panic in a hook is logged, never
//!    propagated.
//! 4. Under the `ctl` lock: set `STOPPED`, record the reason, take watchers and links.
//! 5. Tell watchers (`Terminated`), fail links if the reason is a failure, tell the
//!    supervisor.
//! 6. Drain the mailbox (pending asks fail with `Stopped`), mark it empty. From now on
//!    a sender that finds it empty drains it again instead of scheduling.
//! 7. The turn returns `Stopped` and gives back the runtime's count on the cell.
//!
//! # Failing under a supervisor
//! Every way of stopping goes through `finish`. For a supervised actor it first asks
//! whether the stop should become a restart (`fail_instead`): the child's
//! [`Restart`](crate::Restart) type decides from the reason (a panic, `cx.fail`, a
//! link's failure, a sub-supervisor's `RestartLimit`, or any stop for a permanent
//! child), except that a stop from the supervisor or from shutdown (`no_restart`)
//! always wins. If so, the actor runs the hooks on the old state, drops it, clears the
//! stop request, enters `Phase::Failed` (user messages are held, signals still run) and
//! tells the supervisor, which answers with a restart (fresh state from the factory,
//! held messages first, maybe after a backoff) or a stop. A restart directive that
//! arrives once a stop from the supervisor or shutdown was requested is ignored.
//!
//! The supervisor may be gone before it answers: the signal carrying the failure is
//! then discarded unprocessed, and its `Orphan` guard stops the child
//! (`supervision/children.rs`), so no child waits in `Failed` forever.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::turn::panic_message;
use super::{Cell, IDLE, KILL_REQUESTED, MOVED, Phase, STOP_REQUESTED, STOPPED};
use crate::actor::Label;
use crate::mailbox::node::Header;
use crate::scheduler::RunOutcome;
use crate::{Actor, ActorId, StopReason, Terminated};

/// What other actors and the system may do to a cell without knowing its type.
pub(crate) trait AnyCell: Send + Sync {
    fn id(&self) -> ActorId;
    fn is_stopped(&self) -> bool;
    /// Stops the actor after its current message (an awaiting async handler finishes
    /// first).
    fn request_stop(&self, reason: StopReason);
    /// Stops the actor as soon as possible: a pending async handler is dropped
    /// mid-await, and children are killed too.
    fn kill(&self, reason: StopReason);
    /// Replaces the state with a fresh one from the supervisor's factory.
    fn restart(&self);
    fn remove_link(&self, peer: ActorId);
    fn add_link(&self, peer: Arc<dyn AnyCell>) -> Result<(), StopReason>;
    fn add_watcher(&self, watcher: ActorId, notify: Box<dyn FnOnce(Terminated) + Send>);
    fn remove_watcher(&self, watcher: ActorId);
}

/// Runs a hook, logging instead of propagating a panic.
fn guarded(label: Label<'_>, hook: &str, f: impl FnOnce()) {
    if let Err(payload) = catch_unwind(AssertUnwindSafe(f)) {
        let (actor, actor_type, name) = (label.id, label.type_name, label.name);
        let panic = panic_message(&*payload);
        tracing::warn!(%actor, actor_type, name, hook, %panic, "hook panicked");
    }
}

impl<A: Actor> Cell<A> {
    pub(crate) fn requested_reason(&self) -> StopReason {
        self.ctl
            .lock()
            .as_ref()
            .and_then(|c| c.stop_reason.clone())
            .unwrap_or(StopReason::Normal)
    }

    /// Drops a pending async handler and, if there is state, runs `stopping`, stops
    /// children and timers, runs `stopped(reason)` and drops the state.
    fn retire_state(&self, reason: &StopReason) {
        // SAFETY (all accesses): on the actor's turn. The pending future goes first,
        // so no borrow of state or context is live afterwards.
        // SAFETY: on the actor's own turn (exclusive, see `cell/mod.rs`); no other borrow of this field is live.
        unsafe { *self.pending.get() = None };
        self.wake.store(IDLE, Ordering::Release);
        // SAFETY: on the actor's own turn (exclusive, see `cell/mod.rs`); no other borrow of this field is live.
        let started = unsafe { self.life() }.phase != Phase::New;
        // SAFETY: on the actor's own turn (exclusive, see `cell/mod.rs`); no other borrow of this field is live.
        let state = unsafe { &mut *self.state.get() };
        // SAFETY: on the actor's own turn (exclusive, see `cell/mod.rs`); no other borrow of this field is live.
        let cx = unsafe { self.context() };
        if let Some(actor) = state.as_mut() {
            if started {
                guarded(self.label(), "stopping", || actor.stopping(cx));
            }
        }
        cx.stop_children(self.is_killed());
        cx.cancel_timers();
        if let Some(mut actor) = state.take() {
            guarded(self.label(), "stopped", || {
                actor.stopped(reason);
                drop(actor);
            });
        }
    }

    /// Stops the actor for good. Runs on its turn; see the module docs.
    pub(crate) fn finish(&self, reason: StopReason) -> RunOutcome {
        // SAFETY: on the actor's turn; no other borrow of `life` is live.
        if unsafe { self.life() }.phase == Phase::Moved {
            // A stub retires silently: the actor did not stop (`migrate.rs`).
            return self.retire_stub();
        }
        if let Some(outcome) = self.fail_instead(&reason) {
            return outcome;
        }
        self.retire_state(&reason);
        // SAFETY: on the actor's turn; no other borrow of the context or life is live.
        unsafe { self.context() }.discard_stash();
        // Before the stop is visible: `wait_stopped` then sees the count.
        #[cfg(feature = "observe")]
        if self.shared.config.observe {
            crate::observe::stopped(std::any::type_name::<A>(), &reason);
            if let Some(live) = self.shared.live.as_ref() {
                let handled = self.obs.handled.load(Ordering::Relaxed);
                live.stopped(self.id, std::any::type_name::<A>(), handled);
            }
        }
        // Counted before the stop is visible too: whoever saw it stop (a watcher,
        // `wait_stopped`, `is_alive`) then reads `live_actors` without it.
        self.shared.actor_stopped();
        let (watchers, links) = {
            let mut ctl = self.ctl.lock();
            self.flags.fetch_or(STOPPED, Ordering::AcqRel);
            let c = ctl.get_or_insert_with(Default::default);
            c.final_reason = Some(reason.clone());
            (
                std::mem::take(&mut c.watchers),
                std::mem::take(&mut c.links),
            )
        };
        tracing::trace!(actor = %self.id, name = self.name(), %reason, "stopped");
        for (_, notify) in watchers {
            notify(Terminated {
                id: self.id,
                reason: reason.clone(),
            });
        }
        for peer in links {
            peer.remove_link(self.id);
            if reason.is_failure() {
                peer.request_stop(StopReason::LinkFailed(self.id));
            }
        }
        // SAFETY: on the actor's turn.
        let supervision = unsafe { self.life() }.supervision.take();
        if let Some(sup) = supervision {
            (*sup).child_stopped(self.id, reason);
        }
        self.drain_stopped();
        self.shared.sched.end_unit();
        RunOutcome::Stopped
    }

    /// Discards everything queued. Only the mailbox's consumer may call this: the
    /// stopping turn, or a sender whose push found a stopped actor's mailbox empty.
    pub(crate) fn drain_stopped(&self) {
        // SAFETY: consumer role (caller contract); nodes are of this cell's type.
        unsafe {
            let held = std::mem::take(&mut self.life().held);
            for node in held {
                (Header::vtable(node).discard)(node);
            }
            loop {
                while let Some(link) = self.mailbox.pop(&self.mailbox_head) {
                    let node = Header::<A>::from_link(link);
                    (Header::vtable(node).discard)(node);
                }
                if self.mailbox.mark_empty(&self.mailbox_head) {
                    break;
                }
                std::hint::spin_loop();
            }
        }
        if let Some(bound) = self.bound() {
            bound.close();
        }
    }

    /// A handler, hook or async handler panicked on this turn. A supervised actor may
    /// be restarted instead (`fail_instead`); the panic wins over a `cx.stop()` the
    /// broken instance asked for before it.
    pub(crate) fn on_panic(&self, msg: String) -> RunOutcome {
        self.finish(StopReason::Panicked(msg))
    }

    /// A supervised actor about to stop for `reason`: if its restart type wants a
    /// restart, it fails instead (module docs) and this returns the turn's outcome.
    /// Runs on the turn.
    fn fail_instead(&self, reason: &StopReason) -> Option<RunOutcome> {
        // SAFETY: on the actor's turn; no other borrow of `life` is live.
        let sup = unsafe { self.life() }.supervision.as_ref()?;
        if self.shared.is_shutting_down() || !sup.restarts_after(reason) {
            return None;
        }
        let mut ctl = self.ctl.lock();
        if let Some(c) = ctl.as_mut() {
            if c.no_restart {
                return None;
            }
            // The stop request (if that is what brought us here) belonged to the old
            // instance. Under the lock: a stop from the supervisor arriving now sets
            // `no_restart` either before (seen above) or after this.
            c.stop_reason = None;
        }
        // A graceful stop that ends in a restart (a permanent child) ends the drain
        // too: the new instance takes messages again.
        self.flags.fetch_and(
            !(STOP_REQUESTED | KILL_REQUESTED | super::DRAINING),
            Ordering::AcqRel,
        );
        drop(ctl);
        // SAFETY: on the actor's turn; no other borrow of `life` is live.
        if unsafe { self.life() }.phase == Phase::Failed {
            // Already waiting for its supervisor's directive: nothing more to tell it.
            return Some(RunOutcome::Requeue);
        }
        self.retire_state(reason);
        // SAFETY: on the actor's turn; the state and its future are gone.
        let cx = unsafe { self.context() };
        // Whatever the old instance (or its hooks) asked for is void now.
        cx.clear_between();
        let me = cx.cell_arc();
        // SAFETY: as above.
        let life = unsafe { self.life() };
        life.phase = Phase::Failed;
        #[cfg(feature = "observe")]
        if let Some(live) = self.shared.live.as_ref() {
            live.failed(self.id);
        }
        if let Some(sup) = life.supervision.as_ref() {
            sup.child_failed(me, reason.clone());
        }
        Some(RunOutcome::Requeue)
    }

    /// Supervisor directive: replace the state with a fresh one. Runs on the turn.
    pub(crate) fn restart_now(&self) {
        // A stop from the supervisor or from shutdown wins over a restart that crossed
        // it. (Shutdown kills this actor through its supervisor anyway; asking here
        // too covers a supervisor that is already gone.)
        if self.shared.is_shutting_down() {
            self.request(StopReason::Shutdown, STOP_REQUESTED | KILL_REQUESTED);
            return;
        }
        if self.ctl.lock().as_ref().is_some_and(|c| c.no_restart) {
            return;
        }
        // SAFETY: on the actor's turn; no other borrow of `life` is live.
        let supervision = unsafe { self.life() }.supervision.as_ref();
        if supervision.is_some_and(|s| s.supervisor_stopping()) {
            // Its `stopping` hook stops this actor next.
            return;
        }
        // SAFETY: on the actor's own turn (exclusive, see `cell/mod.rs`); no other borrow of this field is live.
        if unsafe { self.life() }.phase != Phase::Failed {
            self.retire_state(&StopReason::Restarting);
        }
        // SAFETY: on the actor's turn; the old state and future are gone.
        let life = unsafe { self.life() };
        let Some(sup) = life.supervision.as_mut() else {
            return;
        };
        let fresh = (sup.factory)();
        // SAFETY: on the turn; nothing borrows the state.
        unsafe { *self.state.get() = Some(fresh) };
        life.phase = Phase::Running;
        // SAFETY: on the turn; no pending future.
        let (state, cx) = unsafe { self.state_and_context() };
        #[cfg(feature = "observe")]
        if self.shared.config.observe {
            crate::observe::restarted(std::any::type_name::<A>());
            if let Some(live) = self.shared.live.as_ref() {
                live.restarted(self.id, std::any::type_name::<A>());
            }
        }
        state.started(cx);
        // `on_start` runs on the turn's check after this signal (`cell/start.rs`).
        cx.request_start();
    }

    /// Whether a kill was requested (then children are killed, not stopped).
    pub(crate) fn is_killed(&self) -> bool {
        self.flags.load(Ordering::Acquire) & KILL_REQUESTED != 0
    }

    /// Records a stop (or kill) request; the first reason given wins.
    fn request(&self, reason: StopReason, bits: u8) {
        {
            let mut ctl = self.ctl.lock();
            if Cell::is_stopped(self) {
                return;
            }
            let c = ctl.get_or_insert_with(Default::default);
            // A stub forwards stop and kill to wherever the actor went; `Shutdown` of
            // this node retires the stub instead (`migrate.rs`). `MOVED` is set under
            // this lock, so a request is either forwarded here or by the commit.
            if self.flags.load(Ordering::Acquire) & MOVED != 0
                && !matches!(reason, StopReason::Shutdown)
            {
                let route = c.route.clone();
                drop(ctl);
                if let Some(route) = route {
                    if bits & KILL_REQUESTED != 0 {
                        route.kill(reason);
                    } else {
                        // In mailbox order: the stub forwards what was sent before
                        // this stop first, so the actor handles it before stopping.
                        self.signal(move |_| route.stop(reason));
                    }
                }
                return;
            }
            if matches!(reason, StopReason::ParentStopped | StopReason::Shutdown) {
                c.no_restart = true;
            }
            if c.stop_reason.is_none() {
                c.stop_reason = Some(reason);
            }
            self.flags.fetch_or(bits, Ordering::AcqRel);
        }
        // An idle actor is scheduled by this signal and stops on that turn. An actor
        // parked in an async handler is not (its mailbox stays unmarked): a stop waits
        // for the handler to finish, and a kill wakes the turn to cancel it. A stop
        // wakes it too: a user's future just polls once more (a spurious wake), but a
        // reservation's session (`sharing/`) sees the request and ends.
        self.signal(|_| {});
        // Pairs with the fence in the turn's `park` (see there).
        std::sync::atomic::fence(Ordering::SeqCst);
        self.wake_turn();
    }
}

impl<A: Actor> AnyCell for Cell<A> {
    fn id(&self) -> ActorId {
        self.id
    }

    fn is_stopped(&self) -> bool {
        Cell::is_stopped(self)
    }

    fn request_stop(&self, reason: StopReason) {
        self.request(reason, STOP_REQUESTED);
    }

    fn kill(&self, reason: StopReason) {
        self.request(reason, STOP_REQUESTED | KILL_REQUESTED);
    }

    fn restart(&self) {
        self.signal(|cell| cell.restart_now());
    }

    fn remove_link(&self, peer: ActorId) {
        let route = {
            let mut ctl = self.ctl.lock();
            let Some(c) = ctl.as_mut() else { return };
            c.links.retain(|l| l.id() != peer);
            self.moved_route(c)
        };
        // A moved actor's half of the link is a forwarded watch (`forward_link`).
        if let Some(route) = route {
            route.unwatch(link_key(peer));
        }
    }

    fn add_link(&self, peer: Arc<dyn AnyCell>) -> Result<(), StopReason> {
        let mut ctl = self.ctl.lock();
        if Cell::is_stopped(self) {
            let reason = ctl.as_ref().and_then(|c| c.final_reason.clone());
            return Err(reason.unwrap_or(StopReason::Normal));
        }
        let c = ctl.get_or_insert_with(Default::default);
        if let Some(route) = self.moved_route(c) {
            // The actor moved (design §3.5): its failure reaches `peer` through a
            // forwarded watch; `peer`'s failure reaches it through this stub, whose
            // stop requests are forwarded.
            drop(ctl);
            forward_link(&*route, self.id, peer);
            return Ok(());
        }
        c.links.push(peer);
        Ok(())
    }

    fn add_watcher(&self, watcher: ActorId, notify: Box<dyn FnOnce(Terminated) + Send>) {
        let mut ctl = self.ctl.lock();
        if let Some(route) = ctl.as_ref().and_then(|c| self.moved_route(c)) {
            // The actor moved: the watch goes to wherever it runs (design §3.5).
            drop(ctl);
            route.watch(watcher, notify);
            return;
        }
        if Cell::is_stopped(self) {
            let reason = ctl
                .as_ref()
                .and_then(|c| c.final_reason.clone())
                .unwrap_or(StopReason::Normal);
            drop(ctl);
            notify(Terminated {
                id: self.id,
                reason,
            });
            return;
        }
        ctl.get_or_insert_with(Default::default)
            .watchers
            .push((watcher, notify));
    }

    fn remove_watcher(&self, watcher: ActorId) {
        let route = {
            let mut ctl = self.ctl.lock();
            let Some(c) = ctl.as_mut() else { return };
            c.watchers.retain(|(w, _)| *w != watcher);
            self.moved_route(c)
        };
        if let Some(route) = route {
            route.unwatch(watcher);
        }
    }
}

impl<A: Actor> Cell<A> {
    /// The route of a stub that is not retired, read under `ctl` (`MOVED` and the
    /// route are set under it at commit).
    fn moved_route(&self, c: &super::Control) -> Option<Arc<dyn crate::remote::Forward>> {
        if self.flags.load(Ordering::Acquire) & (MOVED | STOPPED) == MOVED {
            c.route.clone()
        } else {
            None
        }
    }
}

/// The moved actor `me`'s side of a link with the local `peer`: a watch through the
/// route that stops the peer when the actor fails. Its key is the peer's id with the
/// top bit flipped ([`link_key`]), so that it never collides with a watch the peer
/// itself made (keyed by its id).
pub(crate) fn forward_link(
    route: &dyn crate::remote::Forward,
    me: ActorId,
    peer: Arc<dyn AnyCell>,
) {
    let key = link_key(peer.id());
    route.watch(
        key,
        Box::new(move |t: Terminated| {
            if t.reason.is_failure() {
                peer.request_stop(StopReason::LinkFailed(me));
            }
        }),
    );
}

/// The key of the forwarded watch that carries a link of a moved actor with `peer`.
pub(crate) fn link_key(peer: ActorId) -> ActorId {
    ActorId::from_u64(peer.as_u64() ^ (1 << 63))
}
