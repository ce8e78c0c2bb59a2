//! What travels through a mailbox: one node per message (allocated by `alloc.rs`), holding the message by
//! value, its reply channel, and a static vtable that knows how to deliver it.
//!
//! One allocation per message: the node *is* the queue link (intrusive), so the
//! message is moved into the node once and moved out once, into the handler. A large
//! message costs the same as a small one apart from that move of its inline bytes; its
//! heap buffers never move.

use std::any::{Any, TypeId};
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::ptr::{self, NonNull};

use super::queue::Link;
use crate::cell::Cell;
use crate::refs::ask::ReplyTo;
use crate::refs::remote::{Outgoing, ReplySlot};
use crate::{Actor, AsyncHandler, DeferredHandler, Handler, Message, ReplySender};

/// A type-erased pending async handler. Its real lifetime is the actor's turn; see the
/// SAFETY argument in [`Cell::poll_pending`](crate::cell::Cell).
pub(crate) type PendingFuture = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// What delivering a node did.
pub(crate) enum Delivered {
    /// The handler ran to completion.
    Done,
    /// An async handler started; the actor's turn continues until this completes.
    Suspended(PendingFuture),
}

/// Whether a node is a user message (held back while the actor awaits a supervisor
/// directive), a runtime notice, or a runtime signal (always delivered).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    /// Sent by a user: takes a slot of a bounded mailbox.
    User,
    /// A message the runtime sends to a handler (`Terminated`): handled like a user
    /// message (in order, held while the actor awaits a restart) but never counted
    /// against the bound, so a full mailbox cannot refuse it (guarantee 7).
    Notice,
    Signal,
}

/// The vtable of one node type. Public only because [`NodeVTables`], which
/// [`Handles`](crate::Handles) names, holds it; it has no public API.
#[derive(Debug)]
pub struct NodeVTable<A: Actor> {
    /// Moves the payload out, frees the node, runs the handler.
    pub(crate) deliver: unsafe fn(NonNull<Header<A>>, &Cell<A>) -> Delivered,
    /// Frees the node undelivered; a pending ask learns that the actor stopped.
    pub(crate) discard: unsafe fn(NonNull<Header<A>>),
    pub(crate) kind: Kind,
    /// Message nodes only (`None` for signals): the erased views a migration needs
    /// (`cell/migrate.rs`). Static data; never touched on a send or a delivery.
    pub(crate) erased: Option<Erased<A>>,
    /// The message's type name, for the `odeon.handle` span (`observe/`).
    #[cfg(feature = "observe")]
    pub(crate) message: fn() -> &'static str,
}

/// How a migration reads and moves a message node without knowing its type.
#[derive(Debug)]
pub(crate) struct Erased<A: Actor> {
    /// Borrows the message in place (the node stays queued and owned by its queue).
    pub(crate) peek: unsafe fn(NonNull<Header<A>>) -> Peek,
    /// Moves the message out as an [`Outgoing`] (an ask's reply channel wrapped in a
    /// [`ReplySlot`]) and frees the node.
    pub(crate) into_outgoing: unsafe fn(NonNull<Header<A>>) -> Outgoing,
}

/// A message node seen in place: valid while the node is alive and not moved out.
pub(crate) struct Peek {
    pub(crate) message: NonNull<dyn Any + Send>,
    pub(crate) type_id: TypeId,
    pub(crate) type_name: &'static str,
    pub(crate) ask: bool,
}

/// The start of every node: the queue link, then the vtable.
#[repr(C)]
pub(crate) struct Header<A: Actor> {
    pub(super) link: Link,
    pub(super) vtable: &'static NodeVTable<A>,
}

impl<A: Actor> Header<A> {
    pub(crate) fn link(node: NonNull<Header<A>>) -> NonNull<Link> {
        node.cast()
    }

    /// # Safety
    /// `link` was produced by [`Header::link`] on a node for actor type `A`.
    pub(crate) unsafe fn from_link(link: NonNull<Link>) -> NonNull<Header<A>> {
        link.cast()
    }

    /// # Safety
    /// `node` is alive.
    pub(crate) unsafe fn vtable(node: NonNull<Header<A>>) -> &'static NodeVTable<A> {
        // SAFETY: caller contract; the vtable field is never written after creation.
        unsafe { (*node.as_ptr()).vtable }
    }
}

/// Where a handler's return value goes: an ask's reply channel, or nowhere. A tell's
/// node has no reply field at all (`()`), which halves the node of a message without
/// payload: 16 bytes instead of 32, because `Option<ReplyTo<_>>` takes 16 (the
/// channel's only niche is spent on its own `Option`).
pub(crate) trait ReplyPort<T>: Send + 'static {
    /// Whether the node is an ask's.
    const ASK: bool;
    fn reply(self, value: T);
    /// The reply channel erased for a transport (a message leaving with a migration).
    fn into_slot(self) -> Option<ReplySlot>;
    /// The reply channel itself, for a handler that replies later.
    fn into_reply_to(self) -> Option<ReplyTo<T>>;
}

impl<T> ReplyPort<T> for () {
    const ASK: bool = false;
    fn reply(self, _: T) {}
    fn into_slot(self) -> Option<ReplySlot> {
        None
    }
    fn into_reply_to(self) -> Option<ReplyTo<T>> {
        None
    }
}

impl<T: Send + 'static> ReplyPort<T> for ReplyTo<T> {
    const ASK: bool = true;
    fn reply(self, value: T) {
        self.send(value);
    }
    fn into_slot(self) -> Option<ReplySlot> {
        Some(ReplySlot::new(self))
    }
    fn into_reply_to(self) -> Option<ReplyTo<T>> {
        Some(self)
    }
}

#[repr(C)]
struct MessageNode<A: Actor, M: Message, P> {
    header: Header<A>,
    msg: M,
    reply: P,
}

/// Moves `msg` (and, for an ask, its reply channel) into a new node for actor `A`.
#[inline]
pub(crate) fn message_node<A: Actor, M: Message, P: ReplyPort<M::Reply>>(
    vtable: &'static NodeVTable<A>,
    msg: M,
    reply: P,
) -> NonNull<Header<A>> {
    let node = super::alloc::alloc_uninit::<MessageNode<A, M, P>>();
    let p = node.as_ptr();
    // SAFETY: `p` is a fresh allocation for a `MessageNode<A, M, P>`; each field is
    // written exactly once, in place, which initializes the whole node.
    unsafe {
        ptr::addr_of_mut!((*p).header).write(Header {
            link: Link::new(),
            vtable,
        });
        ptr::addr_of_mut!((*p).msg).write(msg);
        ptr::addr_of_mut!((*p).reply).write(reply);
    }
    node.cast()
}

/// Moves the message and its reply port out of the node, field by field (not the
/// whole node through the stack, see `message_node`), and frees it.
///
/// # Safety
/// `node` was created by [`message_node`] for this `A`, `M` and `P` and is no longer
/// queued.
#[inline]
unsafe fn unbox<A: Actor, M: Message, P>(node: NonNull<Header<A>>) -> (M, P) {
    let node = node.cast::<MessageNode<A, M, P>>();
    let p = node.as_ptr();
    // SAFETY: caller contract: a fully initialized `MessageNode<A, M, P>` that nobody
    // else reads; each field with a value is moved out once (the header is plain data),
    // and then the memory is freed without dropping anything.
    unsafe {
        let msg = ptr::addr_of!((*p).msg).read();
        let reply = ptr::addr_of!((*p).reply).read();
        super::alloc::free(node);
        (msg, reply)
    }
}

unsafe fn discard_message<A: Actor, M: Message, P>(node: NonNull<Header<A>>) {
    // SAFETY: vtable contract: only called on nodes made by `message_node::<A, M, P>`.
    drop(unsafe { unbox::<A, M, P>(node) });
}

unsafe fn peek_message<A: Actor, M: Message, P: ReplyPort<M::Reply>>(
    node: NonNull<Header<A>>,
) -> Peek {
    let p = node.cast::<MessageNode<A, M, P>>().as_ptr();
    // SAFETY: vtable contract: a live node made by `message_node::<A, M, P>`; the
    // pointer to its `msg` field is derived from the node's own pointer, so it keeps
    // the allocation's provenance, and is never null.
    let msg: NonNull<dyn Any + Send> =
        unsafe { NonNull::new_unchecked(ptr::addr_of_mut!((*p).msg)) };
    Peek {
        message: msg,
        type_id: TypeId::of::<M>(),
        type_name: std::any::type_name::<M>(),
        ask: P::ASK,
    }
}

unsafe fn message_into_outgoing<A: Actor, M: Message, P: ReplyPort<M::Reply>>(
    node: NonNull<Header<A>>,
) -> Outgoing {
    // SAFETY: vtable contract: this node was made by `message_node::<A, M, P>`.
    let (msg, reply) = unsafe { unbox::<A, M, P>(node) };
    Outgoing {
        message: Box::new(msg),
        type_id: TypeId::of::<M>(),
        type_name: std::any::type_name::<M>(),
        reply: reply.into_slot(),
    }
}

/// The erased views of a message node of type `M` with reply port `P`.
const fn erased<A: Actor, M: Message, P: ReplyPort<M::Reply>>() -> Option<Erased<A>> {
    Some(Erased {
        peek: peek_message::<A, M, P>,
        into_outgoing: message_into_outgoing::<A, M, P>,
    })
}

unsafe fn deliver_sync<A: Handler<M>, M: Message, P: ReplyPort<M::Reply>>(
    node: NonNull<Header<A>>,
    cell: &Cell<A>,
) -> Delivered {
    // SAFETY: vtable contract: this node was made by `message_node::<A, M, P>`.
    let (msg, reply) = unsafe { unbox::<A, M, P>(node) };
    // SAFETY: deliver runs inside the actor's turn, with no other borrow of its state.
    let (actor, cx) = unsafe { cell.state_and_context() };
    let out = <A as Handler<M>>::handle(actor, msg, cx);
    reply.reply(out);
    Delivered::Done
}

unsafe fn deliver_deferred<A: DeferredHandler<M>, M: Message, P: ReplyPort<M::Reply>>(
    node: NonNull<Header<A>>,
    cell: &Cell<A>,
) -> Delivered {
    // SAFETY: vtable contract: this node was made by `message_node::<A, M, P>`.
    let (msg, reply) = unsafe { unbox::<A, M, P>(node) };
    // SAFETY: deliver runs inside the actor's turn, with no other borrow of its state.
    let (actor, cx) = unsafe { cell.state_and_context() };
    let reply = ReplySender::new(reply.into_reply_to());
    <A as DeferredHandler<M>>::handle(actor, msg, reply, cx);
    Delivered::Done
}

unsafe fn deliver_async<A: AsyncHandler<M>, M: Message, P: ReplyPort<M::Reply>>(
    node: NonNull<Header<A>>,
    cell: &Cell<A>,
) -> Delivered {
    // SAFETY: vtable contract: this node was made by `message_node::<A, M, P>`.
    let (msg, reply) = unsafe { unbox::<A, M, P>(node) };
    // SAFETY: deliver runs inside the actor's turn, with no other borrow of its state.
    let (actor, cx) = unsafe { cell.state_and_context() };
    let fut = async move {
        let out = <A as AsyncHandler<M>>::handle(actor, msg, cx).await;
        reply.reply(out);
    };
    let fut: Pin<Box<dyn Future<Output = ()> + Send + '_>> = Box::pin(fut);
    // SAFETY: the future borrows the actor's state and context, which live inside the
    // cell at a fixed address until the cell is freed. The cell keeps the future in its
    // own `pending` slot and (1) touches neither the state nor the context while the
    // future exists, (2) drops the future before it drops or replaces the state, and
    // (3) is kept alive by the runtime's reference for as long as the actor has not
    // stopped, which is at least as long as the future. So the erased lifetime never
    // outlives what it borrows.
    Delivered::Suspended(unsafe {
        std::mem::transmute::<Pin<Box<dyn Future<Output = ()> + Send + '_>>, PendingFuture>(fut)
    })
}

struct SyncNodes<A, M, P>(PhantomData<(A, M, P)>);
impl<A: Handler<M>, M: Message, P: ReplyPort<M::Reply>> SyncNodes<A, M, P> {
    const VTABLE: NodeVTable<A> = NodeVTable {
        deliver: deliver_sync::<A, M, P>,
        discard: discard_message::<A, M, P>,
        kind: Kind::User,
        erased: erased::<A, M, P>(),
        #[cfg(feature = "observe")]
        message: std::any::type_name::<M>,
    };
}

struct NoticeNodes<A, M>(PhantomData<(A, M)>);
impl<A: Handler<M>, M: Message> NoticeNodes<A, M> {
    const VTABLE: NodeVTable<A> = NodeVTable {
        deliver: deliver_sync::<A, M, ()>,
        discard: discard_message::<A, M, ()>,
        kind: Kind::Notice,
        erased: erased::<A, M, ()>(),
        #[cfg(feature = "observe")]
        message: std::any::type_name::<M>,
    };
}

/// The vtable of a runtime notice `M` (see [`Kind::Notice`]).
pub(crate) fn notice_vtable<A: Handler<M>, M: Message>() -> &'static NodeVTable<A> {
    &NoticeNodes::<A, M>::VTABLE
}

struct AsyncNodes<A, M, P>(PhantomData<(A, M, P)>);
impl<A: AsyncHandler<M>, M: Message, P: ReplyPort<M::Reply>> AsyncNodes<A, M, P> {
    const VTABLE: NodeVTable<A> = NodeVTable {
        deliver: deliver_async::<A, M, P>,
        discard: discard_message::<A, M, P>,
        kind: Kind::User,
        erased: erased::<A, M, P>(),
        #[cfg(feature = "observe")]
        message: std::any::type_name::<M>,
    };
}

struct DeferredNodes<A, M, P>(PhantomData<(A, M, P)>);
impl<A: DeferredHandler<M>, M: Message, P: ReplyPort<M::Reply>> DeferredNodes<A, M, P> {
    const VTABLE: NodeVTable<A> = NodeVTable {
        deliver: deliver_deferred::<A, M, P>,
        discard: discard_message::<A, M, P>,
        kind: Kind::User,
        erased: erased::<A, M, P>(),
        #[cfg(feature = "observe")]
        message: std::any::type_name::<M>,
    };
}

/// The vtables of one (actor, message) pair: for asks (nodes with a reply channel)
/// and for tells (nodes without). Public only so that [`Handles`](crate::Handles) can
/// name it; it has no public API.
#[derive(Debug)]
pub struct NodeVTables<A: Actor> {
    pub(crate) ask: &'static NodeVTable<A>,
    pub(crate) tell: &'static NodeVTable<A>,
}

pub(crate) fn sync_vtables<A: Handler<M>, M: Message>() -> NodeVTables<A> {
    NodeVTables {
        ask: &SyncNodes::<A, M, ReplyTo<M::Reply>>::VTABLE,
        tell: &SyncNodes::<A, M, ()>::VTABLE,
    }
}

pub(crate) fn async_vtables<A: AsyncHandler<M>, M: Message>() -> NodeVTables<A> {
    NodeVTables {
        ask: &AsyncNodes::<A, M, ReplyTo<M::Reply>>::VTABLE,
        tell: &AsyncNodes::<A, M, ()>::VTABLE,
    }
}

pub(crate) fn deferred_vtables<A: DeferredHandler<M>, M: Message>() -> NodeVTables<A> {
    NodeVTables {
        ask: &DeferredNodes::<A, M, ReplyTo<M::Reply>>::VTABLE,
        tell: &DeferredNodes::<A, M, ()>::VTABLE,
    }
}

/// A runtime signal: a closure run on the actor's turn (restart, child events, GC check).
#[repr(C)]
struct SignalNode<A: Actor, F> {
    header: Header<A>,
    f: F,
}

pub(crate) fn signal_node<A: Actor, F>(f: F) -> NonNull<Header<A>>
where
    F: FnOnce(&Cell<A>) + Send + 'static,
{
    super::alloc::alloc(SignalNode {
        header: Header {
            link: Link::new(),
            vtable: &SignalNodes::<A, F>::VTABLE,
        },
        f,
    })
    .cast()
}

struct SignalNodes<A, F>(PhantomData<(A, F)>);
impl<A: Actor, F: FnOnce(&Cell<A>) + Send + 'static> SignalNodes<A, F> {
    const VTABLE: NodeVTable<A> = NodeVTable {
        deliver: deliver_signal::<A, F>,
        discard: discard_signal::<A, F>,
        kind: Kind::Signal,
        erased: None,
        // Never read: signals get no span (`cell/turn.rs`).
        #[cfg(feature = "observe")]
        message: || "signal",
    };
}

unsafe fn deliver_signal<A: Actor, F: FnOnce(&Cell<A>)>(
    node: NonNull<Header<A>>,
    cell: &Cell<A>,
) -> Delivered {
    // SAFETY: vtable contract: the node was made by `alloc::<SignalNode<A, F>>`.
    let node = unsafe { super::alloc::take(node.cast::<SignalNode<A, F>>()) };
    (node.f)(cell);
    Delivered::Done
}

unsafe fn discard_signal<A: Actor, F>(node: NonNull<Header<A>>) {
    // SAFETY: vtable contract: the node was made by `alloc::<SignalNode<A, F>>`.
    drop(unsafe { super::alloc::take(node.cast::<SignalNode<A, F>>()) });
}

/// A closure that takes the actor's turn like a message (`sharing/`: a reservation):
/// in mailbox order, held while the actor awaits a restart, never counted against a
/// bound (a [`Kind::Notice`]), and it may suspend the turn as an async handler does.
/// A stub runs it as a signal would; the closure must check that the state exists.
pub(crate) fn turn_node<A: Actor, F>(f: F) -> NonNull<Header<A>>
where
    F: FnOnce(&Cell<A>) -> Delivered + Send + 'static,
{
    super::alloc::alloc(SignalNode {
        header: Header {
            link: Link::new(),
            vtable: &TurnNodes::<A, F>::VTABLE,
        },
        f,
    })
    .cast()
}

struct TurnNodes<A, F>(PhantomData<(A, F)>);
impl<A: Actor, F: FnOnce(&Cell<A>) -> Delivered + Send + 'static> TurnNodes<A, F> {
    const VTABLE: NodeVTable<A> = NodeVTable {
        deliver: deliver_turn::<A, F>,
        discard: discard_signal::<A, F>,
        kind: Kind::Notice,
        erased: None,
        #[cfg(feature = "observe")]
        message: std::any::type_name::<F>,
    };
}

unsafe fn deliver_turn<A: Actor, F: FnOnce(&Cell<A>) -> Delivered>(
    node: NonNull<Header<A>>,
    cell: &Cell<A>,
) -> Delivered {
    // SAFETY: vtable contract: the node was made by `alloc::<SignalNode<A, F>>`.
    let node = unsafe { super::alloc::take(node.cast::<SignalNode<A, F>>()) };
    (node.f)(cell)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::size_of;

    struct Quiet;
    impl Actor for Quiet {}

    struct Tick;
    impl Message for Tick {
        type Reply = u64;
    }

    #[test]
    fn a_tell_node_carries_no_reply_field() {
        // Header only (link and vtable) for a message without payload...
        assert_eq!(
            size_of::<MessageNode<Quiet, Tick, ()>>(),
            size_of::<Header<Quiet>>()
        );
        // ...while an ask's node also carries its reply channel.
        assert_eq!(
            size_of::<MessageNode<Quiet, Tick, ReplyTo<u64>>>(),
            size_of::<Header<Quiet>>() + size_of::<ReplyTo<u64>>()
        );
    }
}
