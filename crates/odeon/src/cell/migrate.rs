//! A cell's part in a migration: freeze, snapshot, resume, commit (the forwarding
//! stub), and the prepared cell a transport installs on the target. The protocol
//! around it (offers, routes, acknowledgements) is the transport's; see
//! `docs/design/mobility.md` §3 and the public side in `refs/mobile.rs`.
//!
//! # Who owns the turn
//! 1. **Freeze** (on the actor's turn, between two messages): the turn takes a move
//!    request from `Context::between`, sets `Phase::Frozen` and `wake = FREEZING`, calls
//!    the transport's `MoveRequest::frozen` with a [`FrozenActor`] and returns `Parked`
//!    without marking the mailbox. From then on the transport owns the turn: arriving
//!    messages queue in the mailbox in arrival order and schedule nobody (the mailbox is
//!    unmarked, as for a parked async handler), and `wake_turn` ignores `FREEZING` and
//!    `FROZEN`, so a kill does not wake it either.
//! 2. **Snapshot** (transport): moves the stash, the held queue and the mailbox, in that
//!    order (the order the turn would deliver them), into the handle.
//! 3. **Resume** or **commit** (transport): the handle writes the new phase and gives
//!    the turn back (`hand_back`): if the freezing turn is still returning
//!    (`FREEZING -> THAWED`) it requeues itself, else (`FROZEN -> IDLE`) the cell is
//!    scheduled. The CAS pairs with the turn's `FREEZING -> FROZEN`, so what the
//!    transport wrote is visible to the next turn.
//!
//! # The stub
//! Commit drops the state without hooks, sets the route in `ctl` and then `MOVED`
//! under the same lock, and counts the actor as gone from this node. The stub's turn
//! forwards every node in order: the held queue first, then the mailbox; signals still
//! run. A sender that saw `MOVED` checks the type against the route (`refuse_or_pass`);
//! one that loaded the flags just before the commit pushes anyway, and the stub then
//! refuses late (an ask fails with `NotRemote`, a tell is dropped with a warning:
//! design §9, open question 1).
//!
//! Stop and kill: a request made while frozen is recorded as for any actor; a resume
//! then stops the actor on its next turn, a commit forwards it to the route. At a stub
//! they are forwarded (`Forward::stop`/`Forward::kill`), except `Shutdown`, which
//! retires the stub silently: the node goes away, the actor lives on elsewhere. A stub
//! with no strong ref left is retired the same way (local GC).

use std::any::{Any, TypeId};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::turn::panic_message;
use super::wake::{self, FreezeEnd};
use super::{Cell, Extras, KILL_REQUESTED, MOVED, Phase, STOP_REQUESTED, STOPPED, spawn};
use crate::mailbox::node::{Header, Kind};
use crate::remote::{
    BirthId, Forward, FrozenActor, LocalOnly, MoveRequest, NotFrozen, Outgoing, Queued,
};
use crate::scheduler::{Placement, RunOutcome};
use crate::system::Shared;
use crate::{Actor, ActorId, AskError, StopReason, TellError};

/// What a cell keeps for an actor that moved here (in `Extras`, so other cells pay
/// nothing).
pub(crate) struct MobileCell {
    pub(crate) birth: BirthId,
}

/// A move request that is answered exactly once: dropped unanswered (the actor stopped
/// first, or the request was discarded with the mailbox), it is refused with
/// [`NotFrozen::Stopped`].
pub(crate) struct MoveGuard(Option<Box<dyn MoveRequest>>);

impl MoveGuard {
    pub(crate) fn new(mv: Box<dyn MoveRequest>) -> Self {
        Self(Some(mv))
    }

    pub(crate) fn refuse(mut self, why: NotFrozen) {
        if let Some(mv) = self.0.take() {
            mv.refused(why);
        }
    }

    fn take(mut self) -> Option<Box<dyn MoveRequest>> {
        self.0.take()
    }
}

impl Drop for MoveGuard {
    fn drop(&mut self) {
        if let Some(mv) = self.0.take() {
            mv.refused(NotFrozen::Stopped);
        }
    }
}

/// Why a send to a stopped or moved cell was refused (the message is given back by
/// the caller).
pub(crate) enum Refused {
    Stopped,
    NotRemote,
}

impl Refused {
    pub(crate) fn with<M>(self, msg: M) -> TellError<M> {
        match self {
            Refused::Stopped => TellError::Stopped(msg),
            Refused::NotRemote => TellError::NotRemote(msg),
        }
    }
}

/// Creates a prepared cell: it holds the runtime's count but is never scheduled until
/// [`Cell::activate`]; the caller owns its turn meanwhile.
pub(crate) fn prepare_cell<A: Actor>(
    shared: &Arc<Shared>,
    state: A,
    birth: BirthId,
) -> Arc<Cell<A>> {
    let extras = Box::new(Extras {
        bound: None,
        dedicated: None,
        mobile: Some(Box::new(MobileCell { birth })),
        name: None,
    });
    let cell = spawn::new_cell(shared, state, Some(extras), None, Phase::Prepared);
    // The runtime's own count, given back by the turn that stops the actor (or by
    // `discard_prepared`).
    let _ = Arc::into_raw(cell.clone());
    shared.actor_spawned();
    cell
}

impl<A: Actor> Cell<A> {
    /// The cold half of `Cell::send` for a stopped cell or a stub.
    #[cold]
    #[inline(never)]
    pub(super) fn refuse_or_pass<M: 'static>(&self) -> Result<(), Refused> {
        if self.is_stopped() || self.is_draining() {
            return Err(Refused::Stopped);
        }
        // `MOVED` was set after the route, under `ctl`, so the route is there.
        match self.route() {
            Some(route) if !route.accepts(TypeId::of::<M>()) => Err(Refused::NotRemote),
            _ => Ok(()),
        }
    }

    /// Whether this cell is the stub of an actor that moved to another node.
    pub(crate) fn has_moved(&self) -> bool {
        self.flags.load(Ordering::Acquire) & MOVED != 0
    }

    /// The actor's birth identity as this cell knows it: an arrived actor's own, or
    /// a stub's from its route. Cold: only `==` of two different local cells reads it.
    #[cold]
    pub(crate) fn birth_identity(&self) -> Option<BirthId> {
        if let Some(m) = self.mobile() {
            return Some(m.birth.clone());
        }
        if self.flags.load(Ordering::Acquire) & MOVED != 0 {
            return self.route().and_then(|r| r.identity());
        }
        None
    }

    fn route(&self) -> Option<Arc<dyn Forward>> {
        self.ctl.lock().as_ref().and_then(|c| c.route.clone())
    }

    /// An `Arc` of this cell (one more count), for a handle that outlives the turn.
    fn arc(&self) -> Arc<Cell<A>> {
        let ptr: *const Self = self.raw().as_ptr();
        // SAFETY: cells live in an `Arc` (`spawn::new_cell`) and the runtime's count
        // keeps this one alive while its turn or its transport uses it; the count added
        // here is owned by the returned `Arc`.
        unsafe {
            Arc::increment_strong_count(ptr);
            Arc::from_raw(ptr)
        }
    }

    /// Turn, between two messages: a handler or a signal asked for a move. Returns the
    /// outcome if the turn ends here.
    pub(super) fn freeze(&self, mv: crate::cell::MoveGuard) -> Option<RunOutcome> {
        // SAFETY: on the actor's turn, between messages: no borrow of life or context.
        let (life, cx) = unsafe { (self.life(), self.context()) };
        let refusal = if self.is_draining() {
            // Stopping once the mailbox drains (`drain.rs`): the drain's stop signal
            // cannot travel, so the actor stays and finishes here.
            Some(NotFrozen::Stopped)
        } else if life.supervision.is_some() {
            Some(NotFrozen::Supervised)
        } else if life.phase != Phase::Running {
            Some(NotFrozen::Failed)
        } else if cx.has_live_children() {
            Some(NotFrozen::HasChildren)
        } else {
            None
        };
        if let Some(why) = refusal {
            mv.refuse(why);
            return None;
        }
        let mv = mv.take()?;
        life.phase = Phase::Frozen;
        wake::begin_freeze(&self.wake);
        let handle = FrozenActor::new(Box::new(Frozen {
            cell: self.arc(),
            stash: Vec::new(),
            queued: Vec::new(),
            taken: false,
            done: false,
        }));
        // A panicking transport dropped the handle while unwinding, which resumed the
        // actor (`Frozen::drop`): the CAS below sees `THAWED`.
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| mv.frozen(handle))) {
            tracing::warn!(actor = %self.id(), panic = %panic_message(&*p), "MoveRequest::frozen panicked");
        }
        match wake::end_freeze(&self.wake) {
            FreezeEnd::Parked => Some(RunOutcome::Parked),
            // Resumed or committed already: the next turn runs the new phase.
            FreezeEnd::Requeue => Some(RunOutcome::Requeue),
        }
    }

    /// The transport gives the turn back (see the module docs).
    fn hand_back(&self) {
        if wake::hand_back(&self.wake) {
            self.schedule(Placement::Slot, false);
        }
    }

    /// The turn of a stub: forwards, in order, what is held and what arrives.
    pub(super) fn stub_turn(&self, handled: &mut usize) -> RunOutcome {
        let Some(route) = self.route() else {
            unreachable!("a stub without a route")
        };
        let budget = self.shared.config.budget;
        let (mut retries, mut lingered) = (0u32, 0u32);
        loop {
            if self.flags.load(Ordering::Acquire) & STOP_REQUESTED != 0 {
                return self.retire_stub();
            }
            // SAFETY: on the stub's turn; no other borrow of the context is live.
            if let Some(between) = unsafe { self.context() }.take_between() {
                if let Some(mv) = between.mv {
                    mv.refuse(NotFrozen::Moved);
                }
            }
            if *handled >= budget {
                return RunOutcome::Requeue;
            }
            // SAFETY: on the stub's turn, no other borrow of `life`.
            let held = unsafe { self.life() }.held.pop_front();
            let (node, from_mailbox) = match held {
                Some(n) => (n, false),
                // SAFETY: the turn is the mailbox's consumer.
                None => match unsafe { self.mailbox.pop(&self.mailbox_head) } {
                    // SAFETY: every link in this mailbox starts a `Header<A>`.
                    Some(link) => (unsafe { Header::<A>::from_link(link) }, true),
                    None => {
                        if let Some(outcome) = self.on_empty(&mut retries, &mut lingered) {
                            return outcome;
                        }
                        continue;
                    }
                },
            };
            *handled += 1;
            // SAFETY: a live node of this cell, owned by this turn.
            unsafe { self.forward_node(node, from_mailbox, &*route) };
        }
    }

    /// # Safety
    /// On the stub's turn; `node` is an owned node of this cell.
    unsafe fn forward_node(
        &self,
        node: NonNull<Header<A>>,
        from_mailbox: bool,
        route: &dyn Forward,
    ) {
        // SAFETY: caller contract: the node is alive.
        let vtable = unsafe { Header::vtable(node) };
        let Some(erased) = vtable.erased.as_ref() else {
            // A signal (GC check, a wake-up, a move request): runs here as anywhere.
            // SAFETY: caller contract; signals never touch a state that is gone.
            let _ = unsafe { (vtable.deliver)(node, self) };
            return;
        };
        if from_mailbox && vtable.kind == Kind::User {
            if let Some(bound) = self.bound() {
                bound.add_permits(1);
            }
        }
        // SAFETY: caller contract; the node is a message node of this vtable's type.
        let out = unsafe { (erased.into_outgoing)(node) };
        // Notices (`Terminated`) are the runtime's, never in an interface: the
        // transport recognizes their type.
        if vtable.kind == Kind::Notice || route.accepts(out.type_id) {
            route.forward(out);
        } else {
            refuse_late(self.id(), out);
        }
    }

    /// Retires a stub silently (shutdown, or no strong ref left): the actor did not
    /// stop, so watchers are not told and links are not failed.
    pub(super) fn retire_stub(&self) -> RunOutcome {
        let (watchers, links, route) = {
            let mut ctl = self.ctl.lock();
            self.flags.fetch_or(STOPPED, Ordering::AcqRel);
            match ctl.as_mut() {
                // The route goes now, not when the cell is freed (a stopped cell may
                // stay in its parent's list for a while): the transport learns at
                // once that nothing here forwards any more. Nobody reads it after
                // `STOPPED` (every reader checks that first, under `ctl`).
                Some(c) => (
                    std::mem::take(&mut c.watchers),
                    std::mem::take(&mut c.links),
                    c.route.take(),
                ),
                None => Default::default(),
            }
        };
        drop((watchers, links, route));
        self.drain_stopped();
        // The actor was counted as gone at commit (`actor_stopped`); only the turn's
        // unit ends here.
        self.shared.sched.end_unit();
        RunOutcome::Stopped
    }

    /// A prepared cell starts: `migrated` runs first, then what queued meanwhile.
    /// The caller owns the turn (it prepared the cell).
    pub(crate) fn activate(self: &Arc<Self>) {
        // SAFETY: the prepared cell was never scheduled; the caller owns its turn.
        unsafe { self.life() }.phase = Phase::Migrated;
        if self.shared.is_shutting_down() {
            spawn::stop_unstarted(self);
            return;
        }
        self.shared.register_root(self.clone());
        self.schedule(Placement::Back, true);
    }

    /// Drops a prepared cell without running it: queued asks fail with `error`, no
    /// hook runs, watchers are not told (the actor lives on elsewhere).
    pub(crate) fn discard_prepared(&self, error: &AskError) {
        // SAFETY: the prepared cell was never scheduled: this thread is its consumer.
        while let Some(link) = unsafe { self.mailbox.pop(&self.mailbox_head) } {
            // SAFETY: every link in this mailbox starts a live `Header<A>` we now own.
            unsafe { fail_node(Header::<A>::from_link(link), error) };
        }
        let (watchers, links) = {
            let mut ctl = self.ctl.lock();
            self.flags.fetch_or(STOPPED, Ordering::AcqRel);
            match ctl.as_mut() {
                Some(c) => (
                    std::mem::take(&mut c.watchers),
                    std::mem::take(&mut c.links),
                ),
                None => Default::default(),
            }
        };
        drop((watchers, links));
        // SAFETY: consumer role as above; nothing borrows the state.
        drop(unsafe { (*self.state.get()).take() });
        // Pushes that raced with `STOPPED`; also marks the mailbox (later senders that
        // find it empty drain it themselves, as for any stopped actor).
        self.drain_stopped();
        self.shared.actor_stopped();
        // SAFETY: gives back the runtime's count taken in `prepare_cell`; the caller
        // still holds a ref, so the cell outlives this call.
        unsafe { drop(Arc::from_raw(self.raw().as_ptr().cast_const())) };
    }
}

/// Fails a node's ask with `error` and frees it.
///
/// # Safety
/// `node` is a live node owned by the caller.
unsafe fn fail_node<A: Actor>(node: NonNull<Header<A>>, error: &AskError) {
    // SAFETY: caller contract.
    let vtable = unsafe { Header::vtable(node) };
    match vtable.erased.as_ref() {
        Some(erased) => {
            // SAFETY: caller contract; a message node of this vtable's type.
            let out = unsafe { (erased.into_outgoing)(node) };
            if let Some(slot) = out.reply {
                slot.fail(error.clone());
            }
        }
        // SAFETY: caller contract.
        None => unsafe { (vtable.discard)(node) },
    }
}

/// A message the stub cannot forward (its type is not in the interface: a sender raced
/// with the commit, design §9.1).
fn refuse_late(actor: ActorId, out: Outgoing) {
    tracing::warn!(%actor, message = out.type_name, "a local-only message reached a moved actor; dropped");
    if let Some(slot) = out.reply {
        slot.fail(AskError::NotRemote);
    }
}

/// The frozen actor a transport holds (erased in [`FrozenActor`]).
struct Frozen<A: Actor> {
    cell: Arc<Cell<A>>,
    /// Stashed messages, then the queue (held queue, then mailbox), as taken.
    stash: Vec<NonNull<Header<A>>>,
    queued: Vec<NonNull<Header<A>>>,
    /// The stash and held queue were taken (on the first snapshot).
    taken: bool,
    /// Resumed or committed.
    done: bool,
}

// SAFETY: the node pointers are owned messages of `Send` types (and signals, which are
// `Send`), and the transport that holds this owns the actor's turn, so the cell's
// turn-only fields are touched by one thread at a time.
unsafe impl<A: Actor> Send for Frozen<A> {}

/// The erased operations of [`FrozenActor`].
pub(crate) trait FrozenCell: Send {
    fn id(&self) -> ActorId;
    fn state(&self) -> &(dyn Any + Send);
    fn snapshot(&mut self, accepts: &dyn Fn(TypeId) -> bool) -> Result<(), LocalOnly>;
    fn queued(&self) -> Vec<Queued<'_>>;
    fn resume(self: Box<Self>, error: Box<dyn std::error::Error + Send + Sync>);
    fn commit(self: Box<Self>, route: Arc<dyn Forward>) -> Vec<Outgoing>;
}

impl<A: Actor> Frozen<A> {
    fn nodes(&self) -> impl Iterator<Item = NonNull<Header<A>>> + '_ {
        self.stash.iter().chain(self.queued.iter()).copied()
    }

    fn do_resume(&mut self, error: Box<dyn std::error::Error + Send + Sync>) {
        self.done = true;
        let cell = &*self.cell;
        // SAFETY: this handle owns the turn (module docs); no other borrow is live.
        let (life, cx) = unsafe { (cell.life(), cell.context()) };
        cx.restore_stash(std::mem::take(&mut self.stash));
        for node in self.queued.drain(..).rev() {
            life.held.push_front(node);
        }
        cx.more().move_error = Some(error);
        life.phase = Phase::Resumed;
        cell.hand_back();
    }
}

impl<A: Actor> FrozenCell for Frozen<A> {
    fn id(&self) -> ActorId {
        self.cell.public_id()
    }

    fn state(&self) -> &(dyn Any + Send) {
        // SAFETY: this handle owns the turn, and the state is only dropped by a commit,
        // which consumes the handle.
        match unsafe { (*self.cell.state.get()).as_ref() } {
            Some(state) => state,
            None => unreachable!("a frozen actor always has its state"),
        }
    }

    fn snapshot(&mut self, accepts: &dyn Fn(TypeId) -> bool) -> Result<(), LocalOnly> {
        let cell = &*self.cell;
        if !self.taken {
            self.taken = true;
            // SAFETY: this handle owns the turn; no other borrow is live.
            let (life, cx) = unsafe { (cell.life(), cell.context()) };
            self.stash = cx.take_stash();
            self.queued.extend(life.held.drain(..));
        }
        // SAFETY: this handle owns the turn, so it is the mailbox's consumer.
        while let Some(link) = unsafe { cell.mailbox.pop(&cell.mailbox_head) } {
            // SAFETY: every link in this mailbox starts a live `Header<A>`.
            let node = unsafe { Header::<A>::from_link(link) };
            // SAFETY: the node is alive.
            if unsafe { Header::vtable(node) }.kind == Kind::User {
                // It left the mailbox: its slot is free (as when the turn pops it).
                if let Some(bound) = cell.bound() {
                    bound.add_permits(1);
                }
            }
            self.queued.push(node);
        }
        for node in self.nodes() {
            // SAFETY: owned, live nodes of this cell.
            let vtable = unsafe { Header::vtable(node) };
            if let (Some(erased), Kind::User) = (vtable.erased.as_ref(), vtable.kind) {
                // SAFETY: as above; the peek does not outlive this statement.
                let peek = unsafe { (erased.peek)(node) };
                if !accepts(peek.type_id) {
                    return Err(LocalOnly {
                        type_name: peek.type_name,
                    });
                }
            }
        }
        Ok(())
    }

    fn queued(&self) -> Vec<Queued<'_>> {
        self.nodes()
            .filter_map(|node| {
                // SAFETY: owned, live nodes, which stay alive and in place while `self`
                // is borrowed (only `resume`/`commit`, which consume it, move them).
                let vtable = unsafe { Header::vtable(node) };
                let erased = vtable.erased.as_ref()?;
                // SAFETY: as above.
                let peek = unsafe { (erased.peek)(node) };
                Some(Queued {
                    // SAFETY: the pointer is to the message inside the live node; the
                    // borrow is bounded by `&self` (see above).
                    message: unsafe { peek.message.as_ref() },
                    type_id: peek.type_id,
                    type_name: peek.type_name,
                    ask: peek.ask,
                    notice: vtable.kind == Kind::Notice,
                })
            })
            .collect()
    }

    fn resume(mut self: Box<Self>, error: Box<dyn std::error::Error + Send + Sync>) {
        self.do_resume(error);
    }

    fn commit(mut self: Box<Self>, route: Arc<dyn Forward>) -> Vec<Outgoing> {
        self.done = true;
        let cell = &*self.cell;
        let mut out = Vec::with_capacity(self.stash.len() + self.queued.len());
        let mut signals = Vec::new();
        let nodes: Vec<_> = self.stash.drain(..).chain(self.queued.drain(..)).collect();
        for node in nodes {
            // SAFETY: owned, live nodes of this cell.
            match unsafe { Header::vtable(node) }.erased.as_ref() {
                // SAFETY: a message node of this vtable's type, moved out once.
                Some(erased) => out.push(unsafe { (erased.into_outgoing)(node) }),
                None => signals.push(node),
            }
        }
        // SAFETY: this handle owns the turn; no other borrow is live.
        let (life, cx) = unsafe { (cell.life(), cell.context()) };
        life.phase = Phase::Moved;
        // Signals stay here: the stub's turn runs them first.
        for node in signals.into_iter().rev() {
            life.held.push_front(node);
        }
        // Timers do not travel (`Actor::migrated` re-arms them); the state is dropped
        // without `stopping`/`stopped`: the actor did not stop.
        cx.cancel_timers();
        // SAFETY: as above; nothing borrows the state (no pending handler when frozen).
        let state = unsafe { (*cell.state.get()).take() };
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| drop(state))) {
            tracing::warn!(actor = %cell.id(), panic = %panic_message(&*p), "dropping a moved state panicked");
        }
        // The route, then `MOVED`, under `ctl`: a stop request either came before (it
        // is forwarded here) or finds `MOVED` (forwarded by `request`).
        let (pending_stop, watchers, links) = {
            let mut ctl = cell.ctl.lock();
            let c = ctl.get_or_insert_with(Default::default);
            c.route = Some(route.clone());
            // Watches and links made here travel with the route (design §3.5): the
            // stub keeps none, so retiring it silently loses nothing.
            let watchers = std::mem::take(&mut c.watchers);
            let links = std::mem::take(&mut c.links);
            let flags = cell.flags.fetch_or(MOVED, Ordering::AcqRel);
            let shutdown = matches!(c.stop_reason, Some(StopReason::Shutdown));
            let pending_stop = if flags & STOP_REQUESTED != 0 && !shutdown {
                cell.flags
                    .fetch_and(!(STOP_REQUESTED | KILL_REQUESTED), Ordering::AcqRel);
                let reason = c.stop_reason.take().unwrap_or(StopReason::Normal);
                Some((reason, flags & KILL_REQUESTED != 0))
            } else {
                None
            };
            (pending_stop, watchers, links)
        };
        for (key, notify) in watchers {
            route.watch(key, notify);
        }
        for peer in links {
            super::lifecycle::forward_link(&*route, cell.id(), peer);
        }
        // The actor left this node: the system no longer waits for it to stop.
        cell.shared.actor_stopped();
        match pending_stop {
            Some((reason, true)) => route.kill(reason),
            // After what was pushed while frozen (the stub forwards it first).
            Some((reason, false)) => {
                let route = route.clone();
                cell.signal(move |_| route.stop(reason));
            }
            None => {}
        }
        cell.hand_back();
        out
    }
}

impl<A: Actor> Drop for Frozen<A> {
    fn drop(&mut self) {
        if !self.done {
            self.do_resume(Box::new(DroppedHandle));
        }
    }
}

/// The error `migration_failed` sees when a transport dropped a frozen actor without
/// resuming or committing it.
#[derive(Debug)]
struct DroppedHandle;

impl std::fmt::Display for DroppedHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the transport dropped the frozen actor without moving it")
    }
}

impl std::error::Error for DroppedHandle {}
