//! References erased to one message type.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use super::{ActorRef, Ask, TellError};
use crate::{Actor, ActorId, Handles, Message};

trait Erased<M: Message>: Send + Sync {
    fn tell(&self, msg: M) -> Result<(), TellError<M>>;
    fn ask(&self, msg: M) -> Ask<M::Reply>;
    fn id(&self) -> ActorId;
    fn is_alive(&self) -> bool;
}

struct Typed<A: Actor, K>(ActorRef<A>, PhantomData<fn() -> K>);

impl<A, M, K> Erased<M> for Typed<A, K>
where
    A: Handles<M, K>,
    M: Message,
    K: 'static,
{
    fn tell(&self, msg: M) -> Result<(), TellError<M>> {
        self.0.tell(msg)
    }
    fn ask(&self, msg: M) -> Ask<M::Reply> {
        self.0.ask(msg)
    }
    fn id(&self) -> ActorId {
        self.0.id()
    }
    fn is_alive(&self) -> bool {
        self.0.is_alive()
    }
}

/// A reference to any actor that handles `M`. Keeps the actor alive.
///
/// ```
/// use odeon::{Actor, Context, Handler, Message, Recipient, System};
///
/// struct Tick;
/// impl Message for Tick { type Reply = u32; }
/// struct Clock(u32);
/// impl Actor for Clock {}
/// impl Handler<Tick> for Clock {
///     fn handle(&mut self, _: Tick, _: &mut Context<Self>) -> u32 { self.0 += 1; self.0 }
/// }
///
/// let system = System::new();
/// let r: Recipient<Tick> = system.spawn(Clock(0)).recipient();
/// assert_eq!(system.block_on(r.ask(Tick)).unwrap(), 1);
/// ```
pub struct Recipient<M: Message> {
    inner: Arc<dyn Erased<M>>,
}

impl<M: Message> Recipient<M> {
    pub(crate) fn new<A: Handles<M, K>, K: 'static>(r: ActorRef<A>) -> Self {
        Self {
            inner: Arc::new(Typed::<A, K>(r, PhantomData)),
        }
    }

    /// Sends without waiting (see [`ActorRef::tell`]).
    pub fn tell(&self, msg: M) -> Result<(), TellError<M>> {
        self.inner.tell(msg)
    }

    /// Asks (see [`ActorRef::ask`]).
    pub fn ask(&self, msg: M) -> Ask<M::Reply> {
        self.inner.ask(msg)
    }

    /// The actor's id.
    pub fn id(&self) -> ActorId {
        self.inner.id()
    }

    /// Whether the actor has not stopped.
    pub fn is_alive(&self) -> bool {
        self.inner.is_alive()
    }
}

impl<M: Message> Clone for Recipient<M> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

impl<M: Message> fmt::Debug for Recipient<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Recipient<{}>({})",
            std::any::type_name::<M>(),
            self.id()
        )
    }
}
