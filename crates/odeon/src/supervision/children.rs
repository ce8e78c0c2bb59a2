//! Spawning supervised children, and what each side keeps about the other.
//!
//! A child keeps a [`Supervised`]: its factory, its [`Restart`] type and a strong ref to
//! its supervisor. The supervisor keeps a [`Child`] per child, with a strong ref to it:
//! a supervised child is never collected as unreferenced (a tree lives until it is
//! stopped), so a subtree respawned by a restart does not vanish once the code that
//! spawned it drops its refs.
//!
//! Both signals a child sends its supervisor (its registration, its failure) carry a
//! guard that stops the child if the signal is dropped unprocessed, which happens when
//! the supervisor stopped first: a child is never left running unsupervised, nor
//! waiting in `Failed` for a directive that will not come.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use super::{Restart, Supervisor, SupervisorSpec};
use crate::cell::{AnyCell, SpawnOptions, spawn};
use crate::sync::Mutex;
use crate::system::Shared;
use crate::{Actor, ActorId, ActorRef, StopReason};

/// What a supervised child keeps: how to rebuild itself, when, and whom to tell.
pub(crate) struct Supervised<A: Actor> {
    pub(crate) factory: Box<dyn FnMut() -> A + Send>,
    restart: Restart,
    supervisor: ActorRef<Supervisor>,
}

impl<A: Actor> Supervised<A> {
    /// Whether stopping for `reason` should become a restart.
    pub(crate) fn restarts_after(&self, reason: &StopReason) -> bool {
        self.restart.restarts_after(reason) && !self.supervisor_stopping()
    }

    /// The supervisor's id (for the live table of an observing system).
    #[cfg(feature = "observe")]
    pub(crate) fn supervisor_id(&self) -> ActorId {
        self.supervisor.id()
    }

    /// Whether the supervisor was told to stop (or has stopped). Its `stopping` hook
    /// stops this child then, so a restart now would be one after the stop.
    pub(crate) fn supervisor_stopping(&self) -> bool {
        let sup = self.supervisor.cell();
        sup.stop_requested() || sup.is_stopped()
    }

    /// Tells the supervisor that `child` failed and waits for its directive.
    pub(crate) fn child_failed(&self, child: Arc<dyn AnyCell>, reason: StopReason) {
        let id = child.id();
        let guard = Orphan(Some(child));
        self.supervisor.cell().signal(move |cell| {
            let mut guard = guard;
            // A supervisor without state (itself failed, waiting for its own restart)
            // leaves the guard armed: this child stops.
            cell.with_state(|sup, cx| {
                guard.defuse();
                sup.on_child_failed(id, reason, cx);
            });
        });
    }

    pub(crate) fn child_stopped(self, id: ActorId, reason: StopReason) {
        self.supervisor.cell().signal(move |cell| {
            cell.with_state(|sup, _| sup.on_child_stopped(id, &reason));
        });
    }
}

/// Stops a child when dropped armed: the signal that carried it was discarded by a
/// supervisor that had stopped.
struct Orphan(Option<Arc<dyn AnyCell>>);

impl Orphan {
    fn defuse(&mut self) {
        self.0 = None;
    }
}

impl Drop for Orphan {
    fn drop(&mut self) {
        if let Some(child) = self.0.take() {
            tracing::debug!(child = %child.id(), "supervisor gone: stopping its child");
            child.request_stop(StopReason::ParentStopped);
        }
    }
}

/// What a supervisor keeps about one child. Dropping it stops the child (a no-op once
/// it has stopped): whatever way a supervisor loses a child it has not stopped itself,
/// including a registration it never processed, the child does not outlive it.
pub(crate) struct Child {
    pub(crate) id: ActorId,
    pub(crate) restart: Restart,
    pub(crate) cell: Arc<dyn AnyCell>,
    /// A strong ref (`ActorRef<B>`, erased): the child is not collected while
    /// supervised.
    _strong: Box<dyn Any + Send>,
}

impl Drop for Child {
    fn drop(&mut self) {
        self.cell.request_stop(StopReason::ParentStopped);
    }
}

/// Spawns the children of a supervisor, in start order (which
/// [`Strategy::RestForOne`](crate::Strategy::RestForOne) uses).
pub struct Children {
    pub(crate) shared: Arc<Shared>,
    pub(crate) supervisor: ActorRef<Supervisor>,
}

impl fmt::Debug for Children {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Children")
            .field("supervisor", &self.supervisor)
            .finish()
    }
}

impl Children {
    /// Spawns a child whose state comes from `factory`, now and at every restart. It is
    /// [`Restart::Transient`]: restarted after a failure, not after a normal stop.
    pub fn spawn<B: Actor>(&mut self, factory: impl FnMut() -> B + Send + 'static) -> ActorRef<B> {
        self.spawn_inner(factory, SpawnOptions::default(), Restart::default())
    }

    /// Like [`Children::spawn`], with options.
    pub fn spawn_with<B: Actor>(
        &mut self,
        factory: impl FnMut() -> B + Send + 'static,
        opts: SpawnOptions,
    ) -> ActorRef<B> {
        self.spawn_inner(factory, opts, Restart::default())
    }

    /// Like [`Children::spawn`], with the given [`Restart`] type.
    pub fn spawn_with_restart<B: Actor>(
        &mut self,
        restart: Restart,
        factory: impl FnMut() -> B + Send + 'static,
    ) -> ActorRef<B> {
        self.spawn_inner(factory, SpawnOptions::default(), restart)
    }

    /// Adds a sub-supervisor as a child: a supervision tree. `f` spawns its children,
    /// as for [`System::supervise`](crate::System::supervise), and returns what this
    /// returns beside the sub-supervisor's ref.
    ///
    /// The sub-supervisor is a [`Restart::Transient`] child. When it exceeds its own
    /// restart limit it stops its children and fails with
    /// [`StopReason::RestartLimit`]; this supervisor then restarts it according to its
    /// own strategy and limit (escalation, as in OTP). The restarted sub-supervisor
    /// keeps its ref and id, starts with no restarts counted, and runs `f` again to
    /// spawn fresh children: they are new actors, and refs to the old ones are dead.
    /// `f`'s return value from those later runs is dropped, so to reach the new
    /// children have `f` publish them (send them to an actor, store them in a shared
    /// slot). `f` runs on the sub-supervisor's turn then: it must not block.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use std::time::Duration;
    /// use odeon::{Actor, ActorRef, Context, Handler, Message, Strategy, SupervisorSpec, System};
    ///
    /// struct Db;
    /// impl Actor for Db {}
    /// struct Crash;
    /// impl Message for Crash { type Reply = (); }
    /// impl Handler<Crash> for Db {
    ///     fn handle(&mut self, _: Crash, _: &mut Context<Self>) { panic!("db crashed") }
    /// }
    ///
    /// let system = System::new();
    /// let current: Arc<Mutex<Option<ActorRef<Db>>>> = Arc::default();
    /// let slot = current.clone();
    /// // The sub-supervisor allows no restart: the first crash makes it give up.
    /// let strict = SupervisorSpec::new(Strategy::OneForOne).max_restarts(0, Duration::from_secs(1));
    /// let (_root, (storage, first_db)) = system.supervise(SupervisorSpec::new(Strategy::OneForOne), |c| {
    ///     c.supervise(strict, move |c| {
    ///         let db = c.spawn(|| Db);
    ///         *slot.lock().unwrap() = Some(db.clone());
    ///         db
    ///     })
    /// });
    /// first_db.tell(Crash).unwrap();
    /// system.run_until_quiescent();
    /// // The sub-supervisor gave up, its parent restarted it, and it spawned a new Db.
    /// assert!(storage.is_alive());
    /// assert!(!first_db.is_alive());
    /// let new_db = current.lock().unwrap().clone().unwrap();
    /// assert!(new_db.is_alive() && new_db.id() != first_db.id());
    /// ```
    pub fn supervise<T: 'static>(
        &mut self,
        spec: SupervisorSpec,
        f: impl FnMut(&mut Children) -> T + Send + 'static,
    ) -> (ActorRef<Supervisor>, T) {
        let f = Arc::new(Mutex::new(f));
        let again = f.clone();
        let respawn: super::Respawn = Arc::new(move |c: &mut Children| {
            let mut f = again.lock();
            let _ = (*f)(c);
        });
        let first = Supervisor::new(spec.clone(), None);
        let factory = move || Supervisor::new(spec.clone(), Some(respawn.clone()));
        let sup = self.add(first, factory, SpawnOptions::default(), Restart::Transient);
        let mut children = Children {
            shared: self.shared.clone(),
            supervisor: sup.clone(),
        };
        let out = (*f.lock())(&mut children);
        (sup, out)
    }

    fn spawn_inner<B: Actor>(
        &mut self,
        mut factory: impl FnMut() -> B + Send + 'static,
        opts: SpawnOptions,
        restart: Restart,
    ) -> ActorRef<B> {
        let first = factory();
        self.add(first, factory, opts, restart)
    }

    /// Spawns `first` as a child rebuilt by `factory`, and registers it.
    fn add<B: Actor>(
        &mut self,
        first: B,
        factory: impl FnMut() -> B + Send + 'static,
        opts: SpawnOptions,
        restart: Restart,
    ) -> ActorRef<B> {
        let supervised = Box::new(Supervised {
            factory: Box::new(factory),
            restart,
            supervisor: self.supervisor.clone(),
        });
        let cell = spawn(&self.shared, first, opts, Some(supervised));
        let child_ref = ActorRef::from_cell(cell.clone());
        let child = Child {
            id: cell.id(),
            restart,
            cell,
            _strong: Box::new(child_ref.clone()),
        };
        self.supervisor.cell().signal(move |c| {
            c.with_state(|sup, cx| sup.on_child_added(child, cx));
        });
        child_ref
    }
}

/// Spawns a supervisor and lets `f` spawn its children.
pub(crate) fn start<T>(
    shared: &Arc<Shared>,
    spec: SupervisorSpec,
    f: impl FnOnce(&mut Children) -> T,
) -> (ActorRef<Supervisor>, T) {
    let cell = spawn(
        shared,
        Supervisor::new(spec, None),
        SpawnOptions::default(),
        None,
    );
    let sup_ref = ActorRef::from_cell(cell);
    let mut children = Children {
        shared: shared.clone(),
        supervisor: sup_ref.clone(),
    };
    let out = f(&mut children);
    (sup_ref, out)
}
