//! Supervision: supervisors that restart failed children, with restart limits.
//!
//! A [`Supervisor`] is an ordinary actor. Its children are spawned through
//! [`Children`] with a *factory*, not a value, so a restart can build fresh state. A
//! restart happens in place: the child keeps its id, its mailbox and every
//! [`ActorRef`] to it, so nobody has to look it up again.
//!
//! # Protocol
//! 1. A child's handler panics. The child runs its hooks on the broken state, drops it,
//!    holds back further user messages, and signals `child_failed` to its supervisor.
//! 2. The supervisor drops restart timestamps older than the window. If the window
//!    already holds `max_restarts`, it gives up: it stops every child and then itself
//!    with [`StopReason::RestartLimit`], which its own watchers and links see.
//! 3. Otherwise it records a restart and sends restart signals according to the
//!    [`Strategy`]: the failed child only, all children, or the failed child and those
//!    started after it.
//! 4. A child handling a restart signal retires its current state (if it still has
//!    one), builds a new one from the factory, runs `started`, and then handles the
//!    held messages before the rest of its mailbox.
//!
//! A child that stops normally (or is collected) is removed and not restarted.

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::cell::{AnyCell, SpawnOptions, spawn};
use crate::system::Shared;
use crate::{Actor, ActorId, ActorRef, Context, StopReason};

/// Which children a supervisor restarts when one fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Only the failed child.
    OneForOne,
    /// Every child.
    OneForAll,
    /// The failed child and every child started after it.
    RestForOne,
}

/// How a supervisor behaves: its strategy and restart limit.
///
/// ```
/// use std::time::Duration;
/// use odeon::{Strategy, SupervisorSpec};
/// let spec = SupervisorSpec::new(Strategy::OneForOne).max_restarts(5, Duration::from_secs(10));
/// # drop(spec);
/// ```
#[derive(Clone, Debug)]
pub struct SupervisorSpec {
    strategy: Strategy,
    max_restarts: usize,
    within: Duration,
}

impl SupervisorSpec {
    /// A spec allowing 3 restarts within 5 seconds.
    pub fn new(strategy: Strategy) -> Self {
        Self {
            strategy,
            max_restarts: 3,
            within: Duration::from_secs(5),
        }
    }

    /// At most `max` restarts within `within`; one more failure and the supervisor gives
    /// up.
    pub fn max_restarts(mut self, max: usize, within: Duration) -> Self {
        self.max_restarts = max;
        self.within = within;
        self
    }
}

/// What a supervised child keeps: how to rebuild itself and whom to tell.
pub(crate) struct Supervised<A: Actor> {
    pub(crate) factory: Box<dyn FnMut() -> A + Send>,
    supervisor: ActorRef<Supervisor>,
}

impl<A: Actor> Supervised<A> {
    pub(crate) fn child_failed(&self, id: ActorId, reason: StopReason) {
        self.supervisor.cell().signal(move |cell| {
            cell.with_state(|sup, cx| sup.on_child_failed(id, reason, cx));
        });
    }

    pub(crate) fn child_stopped(self, id: ActorId, reason: StopReason) {
        self.supervisor.cell().signal(move |cell| {
            cell.with_state(|sup, _| sup.on_child_stopped(id, &reason));
        });
    }
}

struct Child {
    id: ActorId,
    cell: Arc<dyn AnyCell>,
}

/// An actor that restarts its children when they fail. Create one with
/// [`System::supervise`](crate::System::supervise) or
/// [`Context::supervise`](crate::Context::supervise).
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
pub struct Supervisor {
    spec: SupervisorSpec,
    children: Vec<Child>,
    restarts: VecDeque<Instant>,
    /// Failures reported before the child's registration arrived.
    early: Vec<(ActorId, StopReason)>,
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
    fn stopping(&mut self, cx: &mut Context<Self>) {
        let kill = cx.is_killed();
        for c in self.children.drain(..) {
            if kill {
                c.cell.kill(StopReason::ParentStopped);
            } else {
                c.cell.request_stop(StopReason::ParentStopped);
            }
        }
    }
}

impl Supervisor {
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
            for c in self.children.drain(..) {
                c.cell.request_stop(StopReason::ParentStopped);
            }
            cx.stop_with(StopReason::RestartLimit);
            return;
        }
        self.restarts.push_back(now);
        tracing::debug!(supervisor = %cx.id(), child = %id, %reason, strategy = ?self.spec.strategy, "restarting");
        let range = match self.spec.strategy {
            Strategy::OneForOne => pos..pos + 1,
            Strategy::OneForAll => 0..self.children.len(),
            Strategy::RestForOne => pos..self.children.len(),
        };
        for c in &self.children[range] {
            c.cell.restart();
        }
    }

    fn on_child_stopped(&mut self, id: ActorId, _reason: &StopReason) {
        self.children.retain(|c| c.id != id);
    }
}

/// Spawns the children of a supervisor, in start order (which `RestForOne` uses).
pub struct Children {
    shared: Arc<Shared>,
    supervisor: ActorRef<Supervisor>,
}

impl fmt::Debug for Children {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Children")
            .field("supervisor", &self.supervisor)
            .finish()
    }
}

impl Children {
    /// Spawns a child whose state comes from `factory`, now and at every restart.
    pub fn spawn<B: Actor>(&mut self, factory: impl FnMut() -> B + Send + 'static) -> ActorRef<B> {
        self.spawn_with(factory, SpawnOptions::default())
    }

    /// Like [`Children::spawn`], with options.
    pub fn spawn_with<B: Actor>(
        &mut self,
        mut factory: impl FnMut() -> B + Send + 'static,
        opts: SpawnOptions,
    ) -> ActorRef<B> {
        let first = factory();
        let supervised = Box::new(Supervised {
            factory: Box::new(factory),
            supervisor: self.supervisor.clone(),
        });
        let cell = spawn(&self.shared, first, opts, Some(supervised));
        let child = Child {
            id: cell.id(),
            cell: cell.clone(),
        };
        self.supervisor.cell().signal(move |c| {
            c.with_state(|sup, cx| sup.on_child_added(child, cx));
        });
        ActorRef::from_cell(cell)
    }
}

/// Spawns a supervisor and lets `f` spawn its children.
pub(crate) fn start<T>(
    shared: &Arc<Shared>,
    spec: SupervisorSpec,
    f: impl FnOnce(&mut Children) -> T,
) -> (ActorRef<Supervisor>, T) {
    let sup = Supervisor {
        spec,
        children: Vec::new(),
        restarts: VecDeque::new(),
        early: Vec::new(),
    };
    let cell = spawn(shared, sup, SpawnOptions::default(), None);
    let sup_ref = ActorRef::from_cell(cell);
    let mut children = Children {
        shared: shared.clone(),
        supervisor: sup_ref.clone(),
    };
    let out = f(&mut children);
    (sup_ref, out)
}
