//! The seam between the core and a transport (`odeon-remote`): what an [`ActorRef`] to
//! an actor on another node calls.
//!
//! **Unstable, not for users.** This module is public only because odeon-remote, a
//! separate crate, implements it; it is hidden from the documentation and may change
//! in any release. Applications use odeon-remote, and name [`RemoteActor`] and
//! [`MobileActor`] from the crate root.
//!
//! # Why a seam and not a dependency
//! The core knows nothing of sockets or serde. A ref to a remote actor holds an
//! [`Endpoint`], a trait object the transport implements. A local send never looks at
//! it: `ActorRef` is an enum, and the local arm is the same direct enqueue as before
//! (the `core` bench `refs/local_tell` measures it). Only the remote arm boxes the
//! message as `dyn Any`; the transport downcasts it with the actor's remote interface
//! (which message types it accepts, and how each is encoded), declared once per actor
//! type with [`RemoteActor`].
//!
//! # Refs inside messages
//! With the `serde` feature, `ActorRef<A>` is `Serialize + Deserialize` when
//! `A: RemoteActor`, so a ref to an actor that is not remote-capable in a remote message
//! is a compile error. Encoding and decoding go through the [`RefCodec`] of the node
//! doing the I/O, installed for the duration of one frame with [`with_codec`]. A ref
//! decoded on the node where its actor lives resolves to the direct local pointer.

use std::any::{Any, TypeId};
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

pub use crate::sharing::{DetachedBatch, bestow_error_code, bestow_error_from_code};

pub use super::mobile::{
    BirthId, Forward, FrozenActor, LocalOnly, MoveRequest, NotFrozen, Prepared, Queued, prepare,
};

use super::ask::{self, ReplyTo};
use super::{ActorRef, Ask, AskError, TellError};
use crate::cell::AnyCell;
use crate::{Actor, ActorId, Handles, Message, SystemHandle, Terminated};

/// A message on its way to a remote actor: erased, with what the transport needs to
/// find its encoder.
pub struct Outgoing {
    /// The message itself (`M`).
    pub message: Box<dyn Any + Send>,
    /// `TypeId::of::<M>()`.
    pub type_id: TypeId,
    /// `std::any::type_name::<M>()`, for errors and logs.
    pub type_name: &'static str,
    /// Where the reply goes, for an ask.
    pub reply: Option<ReplySlot>,
}

impl fmt::Debug for Outgoing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Outgoing")
            .field("type_name", &self.type_name)
            .field("ask", &self.reply.is_some())
            .finish()
    }
}

/// Why a transport did not take a message.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// The actor is known to have stopped.
    Stopped,
    /// No link to its node (the node left, was lost, or cannot be reached).
    Unreachable,
    /// The actor's remote interface does not include this message type.
    NotRemote,
    /// The transport's bounded queue toward the actor's node is full; wait on
    /// [`Endpoint::room`] and try again (backpressure across nodes).
    Full,
    /// The transport (or this kind of endpoint) does not offer the operation: the
    /// default of [`Endpoint::send_batch`].
    Unsupported,
}

/// The reply half of a remote ask, erased. The transport completes it exactly once
/// (dropping it fails the ask with [`AskError::Stopped`]).
pub struct ReplySlot {
    complete: Box<dyn FnOnce(ReplyResult) + Send>,
}

/// A remote reply, boxed, or why there is none.
pub type ReplyResult = Result<Box<dyn Any + Send>, AskError>;

impl ReplySlot {
    /// A slot completed by `f` (for replies that are not an `Ask`'s).
    pub(crate) fn from_fn(f: impl FnOnce(ReplyResult) + Send + 'static) -> Self {
        Self {
            complete: Box::new(f),
        }
    }

    pub(crate) fn new<R: Send + 'static>(to: ReplyTo<R>) -> Self {
        Self {
            complete: Box::new(move |res| match res {
                Ok(value) => match value.downcast::<R>() {
                    Ok(v) => to.send(*v),
                    Err(_) => to.fail(AskError::Rejected(format!(
                        "the reply is not a {}",
                        std::any::type_name::<R>()
                    ))),
                },
                Err(e) => to.fail(e),
            }),
        }
    }

    /// Delivers the reply (`M::Reply`, boxed). A value of another type fails the ask
    /// with [`AskError::Rejected`].
    pub fn reply(self, value: Box<dyn Any + Send>) {
        (self.complete)(Ok(value));
    }

    /// Fails the ask.
    pub fn fail(self, error: AskError) {
        (self.complete)(Err(error));
    }
}

impl fmt::Debug for ReplySlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ReplySlot")
    }
}

/// An actor on another node, as the transport sees it. Implemented by `odeon-remote`.
pub trait Endpoint: Send + Sync + fmt::Debug + 'static {
    /// The actor's id on its birth node.
    fn id(&self) -> ActorId;
    /// The node-independent identity: equal for two endpoints of the same actor.
    fn address(&self) -> (&str, u64, u64);
    /// Whether the actor is not known to have stopped.
    fn is_alive(&self) -> bool;
    /// Sends. On refusal the message comes back unchanged.
    fn send(&self, msg: Outgoing) -> Result<(), (Refusal, Outgoing)>;
    /// Resolves when a send refused with [`Refusal::Full`] may succeed: there is room
    /// in the transport's queue, or the node is gone (the next send then says why).
    /// `ActorRef::send` waits on it. The default, for transports without a bound, is
    /// ready at once.
    fn room(&self) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + '_>> {
        Box::pin(std::future::ready(()))
    }
    /// Sends an atomic batch ([`Batch`](crate::Batch)): all of `msgs` or none, to be
    /// handled back to back. On refusal the messages come back unchanged. The default
    /// refuses with [`Refusal::Unsupported`] (the batch then fails with
    /// [`BatchError::Remote`](crate::BatchError::Remote)).
    fn send_batch(&self, msgs: Vec<Outgoing>) -> Result<(), (Refusal, Vec<Outgoing>)> {
        Err((Refusal::Unsupported, msgs))
    }
    /// Opens a reservation of the actor ([`ActorRef::reserve`]) with the given lease,
    /// at the actor's node. The default refuses with
    /// [`ReserveError::Remote`](crate::ReserveError::Remote).
    fn reserve(&self, lease: std::time::Duration) -> OpenSession {
        let _ = lease;
        Box::pin(std::future::ready(Err(crate::ReserveError::Remote)))
    }
    /// Asks the actor to stop.
    fn stop(&self);
    /// Calls `notify` once when the actor stops or its node is lost; `key` identifies
    /// the watch for [`Endpoint::unwatch`].
    fn watch(&self, key: ActorId, notify: Box<dyn FnOnce(Terminated) + Send>);
    /// Cancels a watch.
    fn unwatch(&self, key: ActorId);
    /// Links the remote actor to the local actor `from`: the remote one stops with
    /// [`StopReason::LinkFailed`](crate::StopReason::LinkFailed) when `from` fails
    /// ([`Endpoint::link_failed`]) or this node is lost.
    fn link(&self, from: ActorId);
    /// Removes a link made with [`Endpoint::link`].
    fn unlink(&self, from: ActorId);
    /// The linked local actor `from` failed.
    fn link_failed(&self, from: ActorId);
    /// The local system the ref belongs to (ask deadlines run on its timer).
    fn system(&self) -> &SystemHandle;
    /// For the transport to recover its own type.
    fn as_any(&self) -> &dyn Any;
}

/// The future of [`Endpoint::reserve`]: the holder's end of a reservation at the
/// actor's node, once granted.
pub type OpenSession = std::pin::Pin<
    Box<
        dyn std::future::Future<Output = Result<Box<dyn RemoteSession>, crate::ReserveError>>
            + Send,
    >,
>;

/// The holder's end of a reservation of a remote actor, as a transport keeps it
/// (see [`Endpoint::reserve`]). Dropping it must end the reservation at the actor's
/// node (after the messages already sent through it).
pub trait RemoteSession: Send + Sync + fmt::Debug + 'static {
    /// Sends a message inside the reservation; on refusal it comes back unchanged.
    fn send(&self, msg: Outgoing) -> Result<(), (Refusal, Outgoing)>;
    /// Why the reservation ended, as far as the holder knows; `None` while it may
    /// still be active.
    fn ended(&self) -> Option<crate::Ended>;
    /// Ends the reservation after the messages already sent (idempotent).
    fn release(&self);
}

/// Declares an actor type reachable from other nodes. Implemented by `odeon-remote`'s
/// `remote_actor!` macro, which also checks that every message in the interface is
/// serializable; not meant to be implemented by hand.
pub trait RemoteActor: Actor {
    /// The stable, cluster-wide name of the actor type.
    const TYPE_NAME: &'static str;
    /// The transport's description of the interface (its own type, erased).
    fn interface() -> &'static (dyn Any + Send + Sync);
}

/// Declares a remote actor able to move between nodes with its state (design §1.1).
/// Implemented by `odeon-remote`'s `mobile_actor!` macro, which checks that the state
/// is serializable; not meant to be implemented by hand. Only mobile actors can be
/// frozen for a move ([`ActorRef::request_move`], [`Context::request_move`]) or
/// installed by a transport ([`prepare`]); other actors pay nothing for the feature.
///
/// [`Context::request_move`]: crate::Context::request_move
pub trait MobileActor: RemoteActor {
    /// The transport's description of how to move this type (its own type, erased):
    /// encode and decode the state, install an arriving actor.
    fn mobility() -> &'static (dyn Any + Send + Sync);
}

/// Declares an object type usable through a [`Bestowed`](crate::Bestowed) handle from
/// another node: which of the messages it serves travel, under which wire names.
/// Implemented by `odeon-remote`'s `remote_object!` macro; not meant to be
/// implemented by hand.
pub trait RemoteObject: Send + 'static {
    /// The stable, cluster-wide name of the object type.
    const TYPE_NAME: &'static str;
    /// The transport's description of the interface (its own type, erased).
    fn interface() -> &'static (dyn Any + Send + Sync);
}

/// A bestowed object on another node, as the transport sees it.
pub trait ObjectEndpoint: Send + Sync + fmt::Debug + 'static {
    /// The owner's id (on its node).
    fn owner(&self) -> ActorId;
    /// Whether uses may still succeed as far as this node knows (its node is not
    /// lost).
    fn is_usable(&self) -> bool;
    /// Sends a use (a message the object serves); on refusal it comes back
    /// unchanged. An ask's reply is a boxed `Result<M::Reply, BestowError>`.
    fn send(&self, msg: Outgoing) -> Result<(), (Refusal, Outgoing)>;
    /// For the transport to recover its own type.
    fn as_any(&self) -> &dyn Any;
}

/// What [`RefCodec::import_object`] resolves a wire handle to.
#[derive(Debug)]
pub enum ImportedObject {
    /// The object lives here: a boxed `Bestowed<T>`.
    Local(Box<dyn Any + Send>),
    /// The object lives on another node.
    Remote(Arc<dyn ObjectEndpoint>),
}

/// Encodes and decodes refs for the node doing the I/O.
pub trait RefCodec {
    /// The wire form of a bestowed handle (`local` is a boxed `Bestowed<T>`). The
    /// default refuses (a transport without remote objects).
    fn export_object(
        &self,
        type_name: &'static str,
        interface: &'static (dyn Any + Send + Sync),
        local: Option<Box<dyn Any + Send + Sync>>,
        remote: Option<&Arc<dyn ObjectEndpoint>>,
    ) -> Result<Vec<u8>, String> {
        let _ = (interface, local, remote);
        Err(format!(
            "this transport cannot send a Bestowed<{type_name}>"
        ))
    }
    /// Resolves a wire bestowed handle. The default refuses.
    fn import_object(
        &self,
        wire: &[u8],
        type_name: &'static str,
        interface: &'static (dyn Any + Send + Sync),
    ) -> Result<ImportedObject, String> {
        let _ = (wire, interface);
        Err(format!(
            "this transport cannot receive a Bestowed<{type_name}>"
        ))
    }
    /// The wire form of a ref to an actor of type `type_name`: for a local actor, the
    /// transport makes it reachable (`local` is a boxed `ActorRef<A>`).
    fn export(
        &self,
        type_name: &'static str,
        interface: &'static (dyn Any + Send + Sync),
        local: Option<Box<dyn Any + Send>>,
        remote: Option<&Arc<dyn Endpoint>>,
    ) -> Result<Vec<u8>, String>;
    /// Resolves a wire ref to an `ActorRef<A>` (boxed): the local pointer when the actor
    /// lives here, else a remote ref built with [`ActorRef::from_endpoint`].
    fn import(
        &self,
        wire: &[u8],
        type_id: TypeId,
        type_name: &'static str,
        interface: &'static (dyn Any + Send + Sync),
    ) -> Result<Box<dyn Any + Send>, String>;
}

thread_local! {
    static CODEC: std::cell::Cell<Option<*const (dyn RefCodec + 'static)>> =
        const { std::cell::Cell::new(None) };
}

/// Runs `f` with `codec` as the thread's ref codec (refs serialized or deserialized
/// inside `f` use it). Nested calls restore the outer codec.
///
/// ```
/// use std::any::{Any, TypeId};
/// use std::sync::Arc;
/// use odeon::remote::{Endpoint, RefCodec, with_codec};
///
/// struct Refuse;
/// impl RefCodec for Refuse {
///     fn export(&self, _: &'static str, _: &'static (dyn Any + Send + Sync),
///               _: Option<Box<dyn Any + Send>>,
///               _: Option<&Arc<dyn Endpoint>>) -> Result<Vec<u8>, String> {
///         Err("no".into())
///     }
///     fn import(&self, _: &[u8], _: TypeId, _: &'static str,
///               _: &'static (dyn Any + Send + Sync)) -> Result<Box<dyn Any + Send>, String> {
///         Err("no".into())
///     }
/// }
/// assert_eq!(with_codec(&Refuse, || 7), 7);
/// ```
pub fn with_codec<R>(codec: &(dyn RefCodec + 'static), f: impl FnOnce() -> R) -> R {
    struct Restore(Option<*const (dyn RefCodec + 'static)>);
    impl Drop for Restore {
        fn drop(&mut self) {
            CODEC.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(CODEC.with(|c| c.replace(Some(codec as *const _))));
    f()
}

/// Runs `f`, which delivers messages that arrived from a peer, and then, on this
/// thread, the turn of the first local actor that `f` made runnable, if no worker of
/// its pool was awake to take it. For a transport's reader thread: it is awake
/// already, and waking a parked worker instead costs a thread wake-up (tens of
/// microseconds on a guest whose other vCPU halted), the largest hop of a remote round
/// trip (issue 19).
///
/// The turn is an ordinary one (one message at a time per actor, at most the
/// configured budget, then the pool takes over); it does not linger. A turn that runs
/// long turns this off on the thread for a while (50 ms), so that a long handler holds
/// up the thread's link once, not each time. Outside the pool's threads only; on a
/// worker, or with no turn to run, it is just `f()`.
///
/// ```
/// use odeon::remote::run_delivered;
/// assert_eq!(run_delivered(|| 7), 7);
/// ```
pub fn run_delivered<R>(f: impl FnOnce() -> R) -> R {
    crate::scheduler::inline::run_delivered(f)
}

/// Calls `f` with the thread's codec, if one is installed.
#[cfg_attr(not(feature = "serde"), allow(dead_code))]
pub(crate) fn current_codec<R>(f: impl FnOnce(Option<&dyn RefCodec>) -> R) -> R {
    match CODEC.with(|c| c.get()) {
        // SAFETY: the pointer was installed by `with_codec` from a reference that lives
        // for the whole call to its `f`, and it is removed (restored) when that call
        // returns or unwinds; this function only runs inside such a call on the same
        // thread, and the reference does not escape `f` here.
        Some(p) => f(Some(unsafe { &*p })),
        None => f(None),
    }
}

/// A ref to a remote actor: the endpoint, typed by the actor.
pub(crate) struct RemoteTarget<A> {
    pub(crate) endpoint: Arc<dyn Endpoint>,
    _actor: PhantomData<fn() -> A>,
}

impl<A> Clone for RemoteTarget<A> {
    fn clone(&self) -> Self {
        Self {
            endpoint: self.endpoint.clone(),
            _actor: PhantomData,
        }
    }
}

impl<A: Actor> RemoteTarget<A> {
    pub(crate) fn new(endpoint: Arc<dyn Endpoint>) -> Self {
        Self {
            endpoint,
            _actor: PhantomData,
        }
    }

    #[cold]
    pub(crate) fn tell<M, K>(&self, msg: M) -> Result<(), TellError<M>>
    where
        M: Message,
        A: Handles<M, K>,
    {
        let out = Outgoing {
            message: Box::new(msg),
            type_id: TypeId::of::<M>(),
            type_name: std::any::type_name::<M>(),
            reply: None,
        };
        self.endpoint
            .send(out)
            .map_err(|(why, out)| refused(why, out))
    }

    /// `tell`, waiting for room while the transport's queue is full (backpressure).
    #[cold]
    pub(crate) async fn send<M, K>(&self, mut msg: M) -> Result<(), TellError<M>>
    where
        M: Message,
        A: Handles<M, K>,
    {
        loop {
            match self.tell(msg) {
                Err(TellError::Full(m)) => {
                    msg = m;
                    self.endpoint.room().await;
                }
                other => return other,
            }
        }
    }

    #[cold]
    pub(crate) fn ask<M, K>(&self, msg: M) -> Ask<M::Reply>
    where
        M: Message,
        A: Handles<M, K>,
    {
        let shared = &self.endpoint.system().shared;
        let (reply, ask) = ask::pair::<M::Reply>(shared);
        let out = Outgoing {
            message: Box::new(msg),
            type_id: TypeId::of::<M>(),
            type_name: std::any::type_name::<M>(),
            reply: Some(ReplySlot::new(reply)),
        };
        match self.endpoint.send(out) {
            Ok(()) => ask,
            Err((why, out)) => {
                // The slot inside `out` fails the ask's channel when dropped; report
                // the precise reason instead.
                if let Some(slot) = out.reply {
                    slot.fail(ask_error(&why));
                }
                ask
            }
        }
    }
}

fn refused<M: 'static>(why: Refusal, out: Outgoing) -> TellError<M> {
    let msg = match out.message.downcast::<M>() {
        Ok(m) => *m,
        // The transport hands back what it was given; anything else is a bug in it.
        Err(_) => unreachable!("a transport returned another message than it was given"),
    };
    match why {
        Refusal::Stopped => TellError::Stopped(msg),
        Refusal::Unreachable => TellError::Unreachable(msg),
        Refusal::NotRemote => TellError::NotRemote(msg),
        Refusal::Full => TellError::Full(msg),
        Refusal::Unsupported => TellError::NotRemote(msg),
    }
}

/// `refused`, for the sharing module (a reservation's remote sends).
pub(crate) fn refused_pub<M: 'static>(why: Refusal, out: Outgoing) -> TellError<M> {
    refused(why, out)
}

/// `ask_error`, for the sharing module.
pub(crate) fn ask_error_pub(why: &Refusal) -> AskError {
    ask_error(why)
}

fn ask_error(why: &Refusal) -> AskError {
    match why {
        Refusal::Stopped => AskError::Stopped,
        Refusal::Unreachable => AskError::Unreachable,
        Refusal::NotRemote => AskError::NotRemote,
        Refusal::Full => AskError::Full,
        Refusal::Unsupported => AskError::NotRemote,
    }
}

impl<A: Actor> ActorRef<A> {
    /// A ref to an actor on another node. For transports: the endpoint must belong to
    /// an actor of type `A` (the transport checks the type's wire name). Part of the
    /// unstable transport seam (`odeon::remote`).
    #[doc(hidden)]
    pub fn from_endpoint(endpoint: Arc<dyn Endpoint>) -> Self {
        Self::remote(RemoteTarget::new(endpoint))
    }

    /// Whether the actor lives in this process (then every send is a direct enqueue).
    pub fn is_local(&self) -> bool {
        self.local().is_some()
    }

    /// The endpoint of a remote ref, for transports. Part of the unstable transport
    /// seam (`odeon::remote`).
    #[doc(hidden)]
    pub fn endpoint(&self) -> Option<&Arc<dyn Endpoint>> {
        self.remote_target().map(|r| &r.endpoint)
    }

    /// The system this ref sends from: a local actor's own system, or the system of
    /// the transport a remote ref goes through. For transports that keep state per
    /// system (a node finds itself from a ref to move its actor).
    ///
    /// ```
    /// use odeon::{Actor, System};
    /// struct Idle;
    /// impl Actor for Idle {}
    /// let system = System::new();
    /// let idle = system.spawn(Idle);
    /// assert!(idle.system().same_system(&system.handle()));
    /// ```
    pub fn system(&self) -> SystemHandle {
        match self.local() {
            Some(cell) => SystemHandle {
                shared: cell.shared().clone(),
            },
            None => match self.endpoint() {
                Some(ep) => ep.system().clone(),
                None => unreachable!("a ref is local or remote"),
            },
        }
    }
}

/// Watches a local actor on behalf of something outside this process: `notify` runs
/// once when it stops. Returns the key to cancel with [`unwatch_local`], or `None` if
/// `target` is remote.
pub fn watch_local<A: Actor>(
    target: &ActorRef<A>,
    notify: Box<dyn FnOnce(Terminated) + Send>,
) -> Option<ActorId> {
    let cell = target.local()?;
    let key = ActorId::next();
    cell.add_watcher(key, notify);
    Some(key)
}

/// Stops a local actor because an actor it is linked with on another node failed (or
/// that node was lost), as a local link would. For transports.
pub fn stop_linked<A: Actor>(target: &ActorRef<A>, failed: ActorId) {
    if let Some(cell) = target.local() {
        cell.request_stop(crate::StopReason::LinkFailed(failed));
    }
}

/// Stops a local actor after the messages already in its mailbox: the request joins
/// the mailbox and takes effect when the actor reaches it (then as
/// [`ActorRef::stop`], with `reason`). For transports
/// that forward a stop along the same path as messages, so that the messages a node
/// sent before its stop are handled first.
///
/// ```
/// use odeon::{Actor, Context, Handler, Message, StopReason, System};
/// struct Count(u32);
/// impl Actor for Count {}
/// struct Add;
/// impl Message for Add { type Reply = (); }
/// impl Handler<Add> for Count {
///     fn handle(&mut self, _: Add, _: &mut Context<Self>) { self.0 += 1; }
/// }
/// let system = System::new();
/// let counter = system.spawn(Count(0));
/// counter.tell(Add).unwrap();
/// odeon::remote::stop_in_order(&counter, StopReason::Normal);
/// // The message queued first is handled; then the actor stops.
/// while counter.is_alive() { std::thread::yield_now(); }
/// assert!(counter.tell(Add).is_err());
/// ```
pub fn stop_in_order<A: Actor>(target: &ActorRef<A>, reason: crate::StopReason) {
    if let Some(cell) = target.local() {
        cell.signal(move |cell| cell.request_stop(reason));
    }
}

/// Cancels a watch made with [`watch_local`].
pub fn unwatch_local<A: Actor>(target: &ActorRef<A>, key: ActorId) {
    if let Some(cell) = target.local() {
        cell.remove_watcher(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names itself in `import`, so a test can tell which codec answered.
    struct Named(&'static str);
    impl RefCodec for Named {
        fn export(
            &self,
            _: &'static str,
            _: &'static (dyn Any + Send + Sync),
            _: Option<Box<dyn Any + Send>>,
            _: Option<&Arc<dyn Endpoint>>,
        ) -> Result<Vec<u8>, String> {
            Ok(self.0.as_bytes().to_vec())
        }
        fn import(
            &self,
            _: &[u8],
            _: TypeId,
            _: &'static str,
            _: &'static (dyn Any + Send + Sync),
        ) -> Result<Box<dyn Any + Send>, String> {
            Err(self.0.to_string())
        }
    }

    fn current() -> Option<String> {
        static UNIT: () = ();
        current_codec(|c| c.map(|c| c.import(&[], TypeId::of::<()>(), "", &UNIT).unwrap_err()))
    }

    // Runs under Miri in CI: the thread's codec pointer is only dereferenced while the
    // reference it came from is alive, nested scopes restore the outer one, and an
    // unwinding scope still clears it.
    #[test]
    fn the_codec_is_scoped_nested_and_cleared_even_on_panic() {
        assert_eq!(current(), None);
        let outer = Named("outer");
        with_codec(&outer, || {
            assert_eq!(current().as_deref(), Some("outer"));
            let inner = Named("inner");
            with_codec(&inner, || assert_eq!(current().as_deref(), Some("inner")));
            assert_eq!(current().as_deref(), Some("outer"));
        });
        assert_eq!(current(), None);
        let unwound = std::panic::catch_unwind(|| {
            let gone = Named("gone");
            with_codec(&gone, || panic!("inside a codec scope"));
        });
        assert!(unwound.is_err());
        assert_eq!(
            current(),
            None,
            "an unwinding scope leaves no dangling codec"
        );
    }
}
