//! Messages and handlers.

use std::future::Future;

use crate::mailbox::node::{NodeVTables, async_vtables, deferred_vtables, sync_vtables};
use crate::{Actor, Context, DeferredHandler};

/// A message: moved (never copied) from sender to receiver, with a typed reply.
///
/// `Send + 'static` is what makes isolation a compile-time property: a message cannot
/// hold an `Rc`, a `RefCell` borrow or any non-`'static` reference, so nothing mutable
/// is ever shared between actors.
///
/// ```
/// struct Add(u64, u64);
/// impl odeon::Message for Add {
///     type Reply = u64;
/// }
/// ```
///
/// With the `macros` feature (on by default), `#[derive(Message)]` writes the impl; the
/// reply type is `()` unless an attribute names it:
///
#[cfg_attr(feature = "macros", doc = "```")]
#[cfg_attr(not(feature = "macros"), doc = "```ignore")]
/// use odeon::Message;
///
/// #[derive(Message)]
/// #[message(reply = u64)]
/// struct Add(u64, u64);
///
/// #[derive(Message)] // type Reply = ();
/// struct Stop;
/// ```
pub trait Message: Send + 'static {
    /// What [`ActorRef::ask`](crate::ActorRef::ask) resolves to. Use `()` for tell-only
    /// messages.
    type Reply: Send + 'static;
}

/// Handles `M` synchronously: the fast path.
///
/// ```
/// use odeon::{Actor, Context, Handler, Message, System};
///
/// struct Counter(u64);
/// impl Actor for Counter {}
///
/// struct Add(u64);
/// impl Message for Add { type Reply = u64; }
///
/// impl Handler<Add> for Counter {
///     fn handle(&mut self, msg: Add, _cx: &mut Context<Self>) -> u64 {
///         self.0 += msg.0;
///         self.0
///     }
/// }
///
/// let system = System::new();
/// let counter = system.spawn(Counter(0));
/// counter.tell(Add(2)).unwrap();
/// assert_eq!(system.block_on(counter.ask(Add(3))).unwrap(), 5);
/// ```
pub trait Handler<M: Message>: Actor {
    /// Handles one message with exclusive access to the actor's state.
    fn handle(&mut self, msg: M, cx: &mut Context<Self>) -> M::Reply;
}

/// Handles `M` with a future that may await (another actor's reply, a timer, tokio I/O).
///
/// The actor handles nothing else until the future completes, so `&mut self` stays
/// exclusive across every `.await`; no worker thread is blocked meanwhile.
///
/// ```
/// use odeon::{Actor, AsyncHandler, Context, Handler, Message, System, ActorRef};
///
/// struct Oracle;
/// impl Actor for Oracle {}
/// struct Question;
/// impl Message for Question { type Reply = u32; }
/// impl Handler<Question> for Oracle {
///     fn handle(&mut self, _: Question, _: &mut Context<Self>) -> u32 { 42 }
/// }
///
/// struct Asker { oracle: ActorRef<Oracle>, answers: u32 }
/// impl Actor for Asker {}
/// struct Consult;
/// impl Message for Consult { type Reply = u32; }
/// impl AsyncHandler<Consult> for Asker {
///     async fn handle(&mut self, _: Consult, _: &mut Context<Self>) -> u32 {
///         let answer = self.oracle.ask(Question).await.unwrap_or(0);
///         self.answers += 1;
///         answer
///     }
/// }
///
/// let system = System::new();
/// let oracle = system.spawn(Oracle);
/// let asker = system.spawn(Asker { oracle, answers: 0 });
/// assert_eq!(system.block_on(asker.ask(Consult)).unwrap(), 42);
/// ```
pub trait AsyncHandler<M: Message>: Actor {
    /// Handles one message; the actor's turn lasts until the future completes.
    fn handle(&mut self, msg: M, cx: &mut Context<Self>) -> impl Future<Output = M::Reply> + Send;
}

/// Marker types that let [`Handles`] tell synchronous from asynchronous handlers.
/// Never named by users: the compiler infers them.
pub mod marker {
    /// `Handles<M, Sync>` is implemented for every [`Handler<M>`](crate::Handler).
    #[derive(Debug)]
    pub enum Sync {}
    /// `Handles<M, Async>` is implemented for every [`AsyncHandler<M>`](crate::AsyncHandler).
    #[derive(Debug)]
    pub enum Async {}
    /// `Handles<M, Deferred>` is implemented for every
    /// [`DeferredHandler<M>`](crate::DeferredHandler).
    #[derive(Debug)]
    pub enum Deferred {}
}

/// "This actor handles `M`", synchronously, asynchronously or with a deferred reply. Implemented automatically;
/// it is the bound on [`ActorRef::tell`](crate::ActorRef::tell) and friends.
pub trait Handles<M: Message, K>: Actor {
    #[doc(hidden)]
    fn __vtables() -> NodeVTables<Self>;
}

impl<A: Handler<M>, M: Message> Handles<M, marker::Sync> for A {
    fn __vtables() -> NodeVTables<Self> {
        sync_vtables::<A, M>()
    }
}

impl<A: AsyncHandler<M>, M: Message> Handles<M, marker::Async> for A {
    fn __vtables() -> NodeVTables<Self> {
        async_vtables::<A, M>()
    }
}

impl<A: DeferredHandler<M>, M: Message> Handles<M, marker::Deferred> for A {
    fn __vtables() -> NodeVTables<Self> {
        deferred_vtables::<A, M>()
    }
}
