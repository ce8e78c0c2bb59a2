//! Supervision: supervisors that restart failed children, with restart limits, restart
//! types, backoff, and supervisors supervising supervisors (trees).
//!
//! A [`Supervisor`] is an ordinary actor. Its children are spawned through
//! [`Children`] with a *factory*, not a value, so a restart can build fresh state. A
//! restart happens in place: the child keeps its id, its mailbox and every
//! [`ActorRef`] to it, so nobody has to look it up again.
//!
//! # Protocol
//! 1. A child stops: a handler panicked, called [`Context::fail`], a linked actor
//!    failed, it stopped normally, or (a sub-supervisor) it gave up. Its [`Restart`]
//!    type decides whether that is a restart (`cell/lifecycle.rs`); if not, it stops
//!    for good and the supervisor forgets it. If so, it runs its hooks on the old
//!    state, drops it, holds back further user messages, and signals `child_failed`
//!    to its supervisor.
//! 2. The supervisor drops restart timestamps older than the window. If the window
//!    already holds `max_restarts`, it gives up: it stops every child and then fails
//!    with [`StopReason::RestartLimit`], which its own watchers, links and supervisor
//!    see.
//! 3. Otherwise it records a restart and picks the children to restart by its
//!    [`Strategy`]: the failed child only, all children, or the failed child and those
//!    started after it. With a backoff ([`SupervisorSpec::backoff`]) it arms a timer
//!    and goes on at step 4 when it fires.
//! 4. Unless the supervisor was asked to stop (or the system is shutting down)
//!    meanwhile, it sends each picked child a restart signal; a temporary sibling is
//!    stopped instead.
//! 5. A child handling a restart signal retires its current state (if it still has
//!    one), builds a new one from the factory, runs `started`, and then handles the
//!    held messages before the rest of its mailbox. A sub-supervisor's `started` runs
//!    the function that spawns its children again.
//!
//! # A stop always wins over a restart
//! A stop from the supervisor (it stops, or gives up) or from shutdown is never turned
//! into a restart, and a restart that crosses it is dropped: the child checks for it
//! before it rebuilds. A supervisor that stops cancels pending backoff timers and
//! stops every child, registered or not (see `children.rs`).
//!
//! # Lifetime
//! A supervisor holds a strong ref to each child, and each child one to its
//! supervisor: a tree is never collected as unreferenced; it lives until stopped
//! (by [`ActorRef::stop`], its parent, or [`System::shutdown`](crate::System::shutdown)).

mod children;
mod spec;

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;
use std::time::Instant;

pub use children::Children;
pub(crate) use children::{Supervised, start};
pub use spec::{Restart, Strategy, SupervisorSpec};

use crate::timer::{self, TimerHandle};
use crate::{Actor, ActorId, ActorRef, Context, StopReason};
use children::Child;

/// Spawns a sub-supervisor's children again after a restart.
type Respawn = Arc<dyn Fn(&mut Children) + Send + Sync>;

/// An actor that restarts its children when they fail. Create one with
/// [`System::supervise`](crate::System::supervise),
/// [`Context::supervise`](crate::Context::supervise), or, as a child of another
/// supervisor, [`Children::supervise`]. See [`Restart`] for which stops lead to a
/// restart and [`SupervisorSpec`] for limits and backoff.
///
/// ```
/// use odeon::{Actor, Context, Handler, Message, Strategy, SupervisorSpec, System};
///
/// #[derive(Default)]
/// struct Flaky { handled: u32 }
/// impl Actor for Flaky {}
/// struct Crash;
/// impl Message for Crash { type Reply = (); }
/// impl Handler<Crash> for Flaky {
///     fn handle(&mut self, _: Crash, _: &mut Context<Self>) { panic!("boom") }
/// }
/// struct Count;
/// impl Message for Count { type Reply = u32; }
/// impl Handler<Count> for Flaky {
///     fn handle(&mut self, _: Count, _: &mut Context<Self>) -> u32 { self.handled += 1; self.handled }
/// }
///
/// let system = System::new();
/// let (_sup, child) = system.supervise(SupervisorSpec::new(Strategy::OneForOne), |c| {
///     c.spawn(Flaky::default)
/// });
/// system.block_on(child.ask(Count)).unwrap();
/// child.tell(Crash).unwrap();
/// // Same ref, fresh state.
/// assert_eq!(system.block_on(child.ask(Count)).unwrap(), 1);
/// ```
///
/// # Panics and `panic = "abort"`
/// A panic is caught per handler (and hook) with `catch_unwind`, and counts as the
/// actor's failure. Built with `panic = "abort"` there is nothing to catch: the first
/// panic in any actor aborts the whole process, supervisors included. Code that must
/// work under that profile fails an actor with [`Context::fail`] instead, which a
/// supervisor handles exactly like a panic.
pub struct Supervisor {
    spec: SupervisorSpec,
    children: Vec<Child>,
    restarts: VecDeque<Instant>,
    /// Failures reported before the child's registration arrived.
    early: Vec<(ActorId, StopReason)>,
    /// Restarts waiting for their backoff.
    timers: Vec<TimerHandle>,
    /// For a sub-supervisor built by a restart: spawns its children in `started`.
    respawn: Option<Respawn>,
}

impl fmt::Debug for Supervisor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Supervisor")
            .field("spec", &self.spec)
            .field("children", &self.children.len())
            .finish_non_exhaustive()
    }
}

impl Actor for Supervisor {
    fn started(&mut self, cx: &mut Context<Self>) {
        if let Some(respawn) = self.respawn.clone() {
            let mut children = Children {
                shared: cx.system().shared,
                supervisor: cx.myself(),
            };
            respawn(&mut children);
        }
    }

    fn stopping(&mut self, cx: &mut Context<Self>) {
        for t in self.timers.drain(..) {
            t.cancel();
        }
        let kill = cx.is_killed();
        for c in self.children.drain(..) {
            if kill {
                c.cell.kill(StopReason::ParentStopped);
            }
            // Dropping `c` stops it (a no-op after the kill).
        }
    }
}

impl Supervisor {
    pub(crate) fn new(spec: SupervisorSpec, respawn: Option<Respawn>) -> Self {
        Self {
            spec,
            children: Vec::new(),
            restarts: VecDeque::new(),
            early: Vec::new(),
            timers: Vec::new(),
            respawn,
        }
    }

    fn on_child_added(&mut self, child: Child, cx: &mut Context<Self>) {
        let id = child.id;
        self.children.push(child);
        if let Some(p) = self.early.iter().position(|(i, _)| *i == id) {
            let (_, reason) = self.early.swap_remove(p);
            self.on_child_failed(id, reason, cx);
        }
    }

    fn on_child_failed(&mut self, id: ActorId, reason: StopReason, cx: &mut Context<Self>) {
        let Some(pos) = self.children.iter().position(|c| c.id == id) else {
            self.early.push((id, reason));
            return;
        };
        if cx.stop_requested() || cx.system().shared.is_shutting_down() {
            // This supervisor stops next and takes the child with it: no restart.
            return;
        }
        // The system's clock: virtual under `odeon::testkit::Sim`.
        let now = cx.system().shared.now();
        while self
            .restarts
            .front()
            .is_some_and(|t| now.duration_since(*t) > self.spec.within)
        {
            self.restarts.pop_front();
        }
        if self.restarts.len() >= self.spec.max_restarts {
            tracing::warn!(supervisor = %cx.id(), child = %id, %reason, "restart limit reached; giving up");
            // Dropping each child stops it.
            self.children.clear();
            cx.stop_with(StopReason::RestartLimit);
            return;
        }
        self.restarts.push_back(now);
        let range = match self.spec.strategy {
            Strategy::OneForOne => pos..pos + 1,
            Strategy::OneForAll => 0..self.children.len(),
            Strategy::RestForOne => pos..self.children.len(),
        };
        let picked: Vec<ActorId> = self.children[range].iter().map(|c| c.id).collect();
        let delay = self.spec.delay(self.restarts.len());
        tracing::debug!(supervisor = %cx.id(), child = %id, %reason, strategy = ?self.spec.strategy, ?delay, "restarting");
        if delay.is_zero() {
            self.restart(id, &picked, cx);
            return;
        }
        let me: ActorRef<Supervisor> = cx.myself();
        let due = timer::run_after(&cx.system().shared, delay, move || {
            me.cell().signal(move |cell| {
                cell.with_state(|sup, cx| sup.restart(id, &picked, cx));
            });
        });
        self.timers.retain(|t| !t.is_finished());
        self.timers.push(due);
    }

    /// Step 4 of the protocol: restarts the picked children that are still here.
    fn restart(&mut self, failed: ActorId, picked: &[ActorId], cx: &mut Context<Self>) {
        if cx.stop_requested() || cx.system().shared.is_shutting_down() {
            return;
        }
        for c in self.children.iter().filter(|c| picked.contains(&c.id)) {
            if c.restart == Restart::Temporary && c.id != failed {
                c.cell.request_stop(StopReason::ParentStopped);
            } else {
                c.cell.restart();
            }
        }
    }

    fn on_child_stopped(&mut self, id: ActorId, _reason: &StopReason) {
        self.children.retain(|c| c.id != id);
    }
}
