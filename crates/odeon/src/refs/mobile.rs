//! For transports: moving a live actor between nodes (design `docs/design/mobility.md`).
//! Re-exported from [`odeon::remote`](crate::remote); user code moves actors through
//! the transport's own API (`odeon-remote`'s `migrate_to`), never through these.
//!
//! # What the core does, and what the transport does
//! The core moves an actor between two messages and keeps every message in order; the
//! transport encodes, ships, and decides. On the source:
//! 1. The transport asks for a move with [`Context::request_move`] (from a handler:
//!    after the current message) or [`ActorRef::request_move`] (from outside: a signal
//!    queued behind the mailbox, so messages sent before it are handled first). An
//!    async handler that is awaiting completes first (weak mobility).
//! 2. Between two messages the turn freezes the actor and calls
//!    [`MoveRequest::frozen`] with a [`FrozenActor`]: the transport now owns the actor.
//!    Nothing is handled; messages that arrive are held in arrival order.
//! 3. The transport reads [`FrozenActor::state`] and takes the
//!    [`snapshot`](FrozenActor::snapshot) (stashed messages, held ones, the mailbox,
//!    in the order the actor would have handled them), checking each message type with
//!    its own predicate (its interface); a local-only type refuses the move.
//! 4. Either [`FrozenActor::resume`]: the actor runs here again, `migration_failed`
//!    first, then the snapshot and what was held meanwhile, in order. Or
//!    [`FrozenActor::commit`]: the state is dropped without `stopping`/`stopped`, the
//!    snapshot's messages come back as [`Outgoing`]s (asks with their [`ReplySlot`]),
//!    and the cell becomes a **stub** that hands every later message, in order, to the
//!    transport's [`Forward`].
//!
//! On the target, [`prepare`] installs the decoded state in a cell that does not run;
//! the transport sends it the snapshot's messages through an ordinary [`ActorRef`], then
//! [`Prepared::activate`] runs `migrated` and the queued messages in order, or
//! [`Prepared::discard`] drops it.
//!
//! # Stop and kill
//! Requested while frozen: recorded; a resume then stops the actor on its next turn, a
//! commit forwards it to the route ([`Forward::stop`], [`Forward::kill`]). At a stub:
//! forwarded, except the node's own shutdown, which only retires the stub. A stub is
//! never reported stopped to its local watchers and never fails its links; it is
//! collected silently when no strong ref to it is left.
//!
//! # Coming back
//! An actor that comes back to a node with a live stub is installed in a new cell, not
//! in the stub: local refs to the stub keep going through the route, and they equal
//! (and hash like) refs to the new cell when the route gives its
//! [`Forward::identity`].

use std::any::{Any, TypeId};
use std::fmt;
use std::sync::Arc;

use super::remote::{MobileActor, Outgoing};
use crate::cell::{Cell, MoveGuard, prepare_cell};
use crate::{ActorId, ActorRef, AskError, Context, StopReason, SystemHandle};

#[allow(unused_imports)] // for the docs
use super::remote::ReplySlot;

/// A transport's request to move an actor; the core answers it exactly once.
pub trait MoveRequest: Send + 'static {
    /// The actor froze between two messages; the transport now owns it until it calls
    /// [`FrozenActor::resume`] or [`FrozenActor::commit`] (dropping the handle resumes).
    /// Runs on the actor's turn, on a worker thread: hand the actor to the transport's
    /// own task rather than doing I/O here.
    fn frozen(self: Box<Self>, actor: FrozenActor);
    /// The actor did not freeze, and runs on.
    fn refused(self: Box<Self>, why: NotFrozen);
}

/// Why an actor did not freeze for a move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotFrozen {
    /// It stopped (or is stopping) first; the request was dropped with its mailbox.
    Stopped,
    /// It already moved away: this cell is a stub. Ask where it went.
    Moved,
    /// It failed and awaits its supervisor's directive.
    Failed,
    /// It is a supervised child (design §3.6, v1).
    Supervised,
    /// It has children (design §3.6).
    HasChildren,
    /// Another request in the same message replaced this one.
    Replaced,
    /// The ref is to an actor on another node: ask its transport.
    Remote,
}

impl fmt::Display for NotFrozen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NotFrozen::Stopped => "the actor stopped",
            NotFrozen::Moved => "the actor already moved away",
            NotFrozen::Failed => "the actor awaits its supervisor",
            NotFrozen::Supervised => "the actor is supervised",
            NotFrozen::HasChildren => "the actor has children",
            NotFrozen::Replaced => "replaced by a later request",
            NotFrozen::Remote => "the actor is on another node",
        })
    }
}

impl std::error::Error for NotFrozen {}

/// How a stub reaches its actor: implemented by the transport. Called from the stub's
/// turn (one message at a time, in mailbox order) and, for `accepts`, from senders.
pub trait Forward: Send + Sync + 'static {
    /// Whether a message of this type may leave the node (it is in the actor's remote
    /// interface). A sender that finds the cell moved is refused synchronously with
    /// [`TellError::NotRemote`](crate::TellError::NotRemote) when this says no.
    fn accepts(&self, type_id: TypeId) -> bool;
    /// The next message for the actor, in order. A runtime notice (`Terminated`) is
    /// passed too, whatever `accepts` says.
    fn forward(&self, msg: Outgoing);
    /// Someone on this node asked the actor to stop (`ActorRef::stop`, a link, a
    /// parent).
    fn stop(&self, reason: StopReason);
    /// Someone on this node killed the actor.
    fn kill(&self, reason: StopReason);
    /// Someone on this node watches the actor (through a local ref to the stub, or a
    /// watch the actor had here before it moved): `notify` runs once when the actor
    /// stops wherever it is. `key` cancels it ([`Forward::unwatch`]). The default
    /// drops the watch (a transport that cannot reach the actor).
    fn watch(&self, key: ActorId, notify: Box<dyn FnOnce(crate::Terminated) + Send>) {
        let _ = (key, notify);
    }
    /// Cancels a watch made with [`Forward::watch`]. The default does nothing.
    fn unwatch(&self, key: ActorId) {
        let _ = key;
    }
    /// The actor's birth identity (design §2.1), if the transport knows it. Lets a
    /// local ref to this stub equal (`==`) a local ref to the cell the actor came back
    /// to on this node later (the two cells differ). `None` (the default): a stub
    /// equals only refs to itself.
    fn identity(&self) -> Option<BirthId> {
        None
    }
}

/// A message type in a snapshot that may not leave the node (design §2.4 (3)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LocalOnly {
    /// `std::any::type_name` of the message.
    pub type_name: &'static str,
}

impl fmt::Display for LocalOnly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a queued {} cannot leave this node", self.type_name)
    }
}

impl std::error::Error for LocalOnly {}

/// A message in a snapshot, seen in place (for encoding).
#[derive(Debug)]
pub struct Queued<'a> {
    /// The message (`M`).
    pub message: &'a (dyn Any + Send),
    /// `TypeId::of::<M>()`.
    pub type_id: TypeId,
    /// `std::any::type_name::<M>()`.
    pub type_name: &'static str,
    /// Whether it is an ask (its [`ReplySlot`] comes with [`FrozenActor::commit`]).
    pub ask: bool,
    /// A runtime notice (`Terminated`), not an interface message.
    pub notice: bool,
}

/// An actor frozen between two messages; held by the transport that asked for the
/// move. Dropping it resumes the actor (with an error for `migration_failed`).
pub struct FrozenActor {
    inner: Box<dyn crate::cell::FrozenCell>,
}

impl FrozenActor {
    pub(crate) fn new(inner: Box<dyn crate::cell::FrozenCell>) -> Self {
        Self { inner }
    }

    /// The actor's id (its birth id, if it moved here).
    pub fn id(&self) -> ActorId {
        self.inner.id()
    }

    /// The state, to encode (downcast to the actor type).
    pub fn state(&self) -> &(dyn Any + Send) {
        self.inner.state()
    }

    /// Takes every message queued so far into the snapshot and returns the whole
    /// snapshot, in handling order: stashed messages, then held ones, then the mailbox.
    /// Messages that arrive later are held for the commit (they go to the stub's
    /// [`Forward`]) or the resume. May be called again to take more. Fails, keeping
    /// everything, if a message's type is not accepted by `accepts` (notices are not
    /// checked); the transport then resumes the actor.
    ///
    /// A stashed message is handled first on the new node, like an unstashed one.
    pub fn snapshot(
        &mut self,
        accepts: &dyn Fn(TypeId) -> bool,
    ) -> Result<Vec<Queued<'_>>, LocalOnly> {
        self.inner.snapshot(accepts)?;
        Ok(self.inner.queued())
    }

    /// Aborts the move: the actor runs here again. `migration_failed(error)` runs
    /// first, then the snapshot and the messages held meanwhile, in their order. A stop
    /// requested while frozen takes effect then (queued messages are dropped as for any
    /// stop).
    pub fn resume(self, error: Box<dyn std::error::Error + Send + Sync>) {
        self.inner.resume(error);
    }

    /// Commits the move: drops the state (no `stopping`/`stopped` hook, no
    /// `Terminated`), cancels its timers, makes this cell a stub that forwards to
    /// `route`, and returns the snapshot's messages, in order, with their reply slots.
    /// Messages not in the snapshot reach `route` in order, possibly on another thread
    /// before this returns; a transport that must send the snapshot first orders that
    /// in its `Forward`.
    pub fn commit(self, route: Arc<dyn Forward>) -> Vec<Outgoing> {
        self.inner.commit(route)
    }
}

impl fmt::Debug for FrozenActor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FrozenActor")
            .field("id", &self.id())
            .finish()
    }
}

/// Where and when an actor was born: its identity on every node (design §2.1).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BirthId {
    /// The birth node's name.
    pub node: Arc<str>,
    /// The birth node's incarnation.
    pub incarnation: u64,
    /// The actor's id on its birth node.
    pub id: ActorId,
}

/// An arriving actor, installed but not running: messages sent to its ref queue up.
/// Dropping it discards it (as [`Prepared::discard`] with [`AskError::Stopped`]).
pub struct Prepared<A: MobileActor> {
    actor: Option<ActorRef<A>>,
}

/// Installs an arriving actor with its decoded state, under its birth identity
/// (`ActorRef::id` returns `birth.id`). It does not run until [`Prepared::activate`].
///
/// ```
/// use std::any::Any;
/// use odeon::remote::{BirthId, MobileActor, prepare};
/// use odeon::{Actor, ActorId, Context, Handler, Message, RemoteActor, System};
///
/// struct Counter(u64);
/// impl Actor for Counter {}
/// struct Add(u64);
/// impl Message for Add { type Reply = u64; }
/// impl Handler<Add> for Counter {
///     fn handle(&mut self, a: Add, _: &mut Context<Self>) -> u64 { self.0 += a.0; self.0 }
/// }
/// impl RemoteActor for Counter {
///     const TYPE_NAME: &'static str = "demo.Counter";
///     fn interface() -> &'static (dyn Any + Send + Sync) { &() }
/// }
/// impl MobileActor for Counter {
///     fn mobility() -> &'static (dyn Any + Send + Sync) { &() }
/// }
///
/// let system = System::new();
/// let birth = BirthId { node: "a".into(), incarnation: 1, id: ActorId::from_u64(7) };
/// let prepared = prepare(&system.handle(), Counter(40), birth);
/// let counter = prepared.actor_ref();
/// let total = counter.ask(Add(2));     // queued: nothing runs yet
/// prepared.activate();                 // `migrated`, then the queued ask
/// assert_eq!(system.block_on(total).unwrap(), 42);
/// assert_eq!(counter.id(), ActorId::from_u64(7));
/// ```
pub fn prepare<A: MobileActor>(system: &SystemHandle, state: A, birth: BirthId) -> Prepared<A> {
    let cell = prepare_cell(&system.shared, state, birth);
    Prepared {
        actor: Some(ActorRef::from_cell(cell)),
    }
}

impl<A: MobileActor> Prepared<A> {
    /// A ref to the installed actor; what it sends is held until activation.
    pub fn actor_ref(&self) -> ActorRef<A> {
        self.actor().clone()
    }

    fn actor(&self) -> &ActorRef<A> {
        match &self.actor {
            Some(a) => a,
            None => unreachable!("a prepared actor is used after it was consumed"),
        }
    }

    /// Starts the actor: `migrated` runs first, then the messages queued meanwhile, in
    /// order. Like a spawned top-level actor, it stops with the system.
    pub fn activate(mut self) {
        if let Some(actor) = self.actor.take() {
            actor.cell().activate();
        }
    }

    /// Drops the actor without running it (the move was aborted): queued asks fail with
    /// `error`, no hook runs and watchers are not told (the actor lives on elsewhere).
    /// Refs to it then report it stopped.
    pub fn discard(mut self, error: AskError) {
        if let Some(actor) = self.actor.take() {
            actor.cell().discard_prepared(&error);
        }
    }
}

impl<A: MobileActor> Drop for Prepared<A> {
    fn drop(&mut self) {
        if let Some(actor) = self.actor.take() {
            actor.cell().discard_prepared(&AskError::Stopped);
        }
    }
}

impl<A: MobileActor> fmt::Debug for Prepared<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Prepared")
            .field("actor", &self.actor)
            .finish()
    }
}

impl<A: MobileActor> Context<A> {
    /// For transports: freezes this actor after the current message (an async handler
    /// completes first) and calls `request` back (see the module docs). A second call
    /// in the same message replaces the first, which is refused with
    /// [`NotFrozen::Replaced`]. A stop requested in the same message wins.
    pub fn request_move(&mut self, request: Box<dyn MoveRequest>) {
        self.set_move(MoveGuard::new(request));
    }
}

impl<A: MobileActor> ActorRef<A> {
    /// For transports: the birth identity this node's cell knows for the actor: an
    /// actor that moved here, or the stub one left (from its route's
    /// [`Forward::identity`]). `None` for a remote ref and for an actor that never
    /// moved (its birth identity is this node and its id).
    ///
    /// ```
    /// # use std::any::Any;
    /// # use odeon::remote::{BirthId, MobileActor, prepare};
    /// # use odeon::{Actor, ActorId, RemoteActor, System};
    /// # struct Counter;
    /// # impl Actor for Counter {}
    /// # impl RemoteActor for Counter {
    /// #     const TYPE_NAME: &'static str = "demo.Counter";
    /// #     fn interface() -> &'static (dyn Any + Send + Sync) { &() }
    /// # }
    /// # impl MobileActor for Counter {
    /// #     fn mobility() -> &'static (dyn Any + Send + Sync) { &() }
    /// # }
    /// let system = System::new();
    /// let birth = BirthId { node: "a".into(), incarnation: 1, id: ActorId::from_u64(7) };
    /// let arrived = prepare(&system.handle(), Counter, birth.clone());
    /// assert_eq!(arrived.actor_ref().birth_identity(), Some(birth));
    /// assert_eq!(system.spawn(Counter).birth_identity(), None);
    /// ```
    pub fn birth_identity(&self) -> Option<BirthId> {
        self.local().and_then(|cell| cell.birth_identity())
    }

    /// For transports: freezes the actor between two messages, after every message
    /// sent to it before this call, and calls `request` back. For a remote ref the
    /// request is refused at once with [`NotFrozen::Remote`].
    pub fn request_move(&self, request: Box<dyn MoveRequest>) {
        let Some(cell) = self.local() else {
            request.refused(NotFrozen::Remote);
            return;
        };
        let guard = MoveGuard::new(request);
        if cell.is_stopped() {
            guard.refuse(NotFrozen::Stopped);
            return;
        }
        // A signal: it keeps its place behind the messages already sent, and if the
        // actor stops first it is discarded with the mailbox, which refuses it.
        cell.signal(move |cell: &Cell<A>| {
            // SAFETY: signals run on the actor's turn, with no borrow of the context.
            unsafe { cell.context() }.set_move(guard);
        });
    }
}
