//! Atomic batches: a group of messages handled back to back.
//!
//! A batch is built on the sender's side as ordinary message nodes, linked to each
//! other in order (a [`Chain`]), and pushed into the mailbox as one: the same single
//! `swap` a plain `tell` does, so no other sender's node can land between them. The
//! turn then pops them one by one like any mail: each is one delivery, counted against
//! the turn's budget, and an async handler in the batch suspends the turn as usual
//! (macro-step: nothing else is handled meanwhile). A long batch ends its turn at the
//! budget and carries on in the next one; other actors run meanwhile, and nothing can
//! have entered the mailbox between its messages.
//!
//! So a batch of one costs what a `tell` costs (one node, one push), and a batch of
//! `n` costs `n` nodes and one push. The plain `tell` path is not touched.
//!
//! A batch to a remote ref keeps its messages as the transport's [`Outgoing`] values
//! instead, and hands them all to the endpoint at once
//! ([`Endpoint::send_batch`](crate::remote::Endpoint::send_batch)): `odeon-remote` sends
//! them as one frame, and the actor's node rebuilds them as one chain with a
//! [`DetachedBatch`] and pushes it the same way.

use std::marker::PhantomData;

use std::any::TypeId;

use crate::cell::Cell;
use crate::mailbox::chain::Chain;
use crate::mailbox::node::{Header, message_node};
use crate::refs::ask;
use crate::remote::{Outgoing, Refusal, ReplySlot};
use crate::{Actor, ActorRef, Ask, AskError, Handles, Message};

use super::BatchError;

/// Message nodes owned by a batch until they are pushed.
struct Nodes<A: Actor> {
    chain: Chain,
    len: usize,
    actor: PhantomData<fn(A)>,
}

impl<A: Actor> Nodes<A> {
    #[inline]
    fn push(&mut self, node: std::ptr::NonNull<Header<A>>) {
        // SAFETY: the node is freshly allocated and in no queue; the chain owns it.
        unsafe { self.chain.push_back(Header::link(node)) };
        self.len += 1;
    }
}

impl<A: Actor> Drop for Nodes<A> {
    fn drop(&mut self) {
        while let Some(link) = self.chain.pop_front() {
            // SAFETY: every link in the chain is a node of actor type `A` (`push`),
            // owned by this batch and in no queue; its ask, if any, learns that the
            // actor stopped.
            unsafe {
                let node = Header::<A>::from_link(link);
                (Header::vtable(node).discard)(node);
            }
        }
    }
}

/// A group of messages for one actor that it handles back to back, with no other
/// sender's message in between. Built with [`ActorRef::batch`], sent with
/// [`Batch::send`]; [`ActorRef::atomic`] does both around a closure.
///
/// Dropping a batch without sending it sends nothing; its asks fail with
/// [`AskError::Stopped`](crate::AskError::Stopped).
///
/// ```
/// use odeon::{Actor, Context, Handler, Message, System};
///
/// struct Account { balance: i64 }
/// impl Actor for Account {}
/// struct Deposit(i64);
/// impl Message for Deposit { type Reply = (); }
/// struct Balance;
/// impl Message for Balance { type Reply = i64; }
/// impl Handler<Deposit> for Account {
///     fn handle(&mut self, d: Deposit, _: &mut Context<Self>) { self.balance += d.0; }
/// }
/// impl Handler<Balance> for Account {
///     fn handle(&mut self, _: Balance, _: &mut Context<Self>) -> i64 { self.balance }
/// }
///
/// let system = System::new();
/// let account = system.spawn(Account { balance: 0 });
/// let mut batch = account.batch();
/// batch.tell(Deposit(30));
/// batch.tell(Deposit(12));
/// let balance = batch.ask(Balance);       // sees both deposits and nothing else
/// assert_eq!(batch.len(), 3);
/// batch.send().unwrap();
/// assert_eq!(system.block_on(balance), Ok(42));
/// system.shutdown();
/// ```
#[must_use = "a batch sends nothing until `send` is called"]
pub struct Batch<'a, A: Actor> {
    actor: &'a ActorRef<A>,
    parts: Parts<A>,
}

/// A batch's messages: nodes for a local actor, the transport's values for a remote
/// one (one or the other, so the local batch stays as small as it was).
enum Parts<A: Actor> {
    Local(Nodes<A>),
    Remote(Vec<Outgoing>),
}

impl<A: Actor> std::fmt::Debug for Batch<'_, A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batch")
            .field("actor", &self.actor.id())
            .field("len", &self.len())
            .finish()
    }
}

fn new_nodes<A: Actor>() -> Nodes<A> {
    Nodes {
        chain: Chain::new(),
        len: 0,
        actor: PhantomData,
    }
}

fn outgoing<M: Message>(msg: M, reply: Option<ReplySlot>) -> Outgoing {
    Outgoing {
        message: Box::new(msg),
        type_id: TypeId::of::<M>(),
        type_name: std::any::type_name::<M>(),
        reply,
    }
}

/// Adds an ask for `msg` to `nodes`, for the local actor `actor`.
fn ask_local<A, M, K>(actor: &ActorRef<A>, nodes: &mut Nodes<A>, msg: M) -> Ask<M::Reply>
where
    A: Handles<M, K>,
    M: Message,
{
    let Some(cell) = actor.local() else {
        unreachable!("only called for a local ref");
    };
    if cell.has_moved() {
        // A local ref to a mobile actor that moved away: `send` refuses the batch
        // as for a remote ref, and the ask says so in the same words (it would
        // otherwise be discarded with the batch and read `Stopped`).
        return Ask::failed(AskError::Unreachable, cell.shared());
    }
    let (reply, ask) = ask::pair(cell.shared());
    nodes.push(message_node(A::__vtables().ask, msg, reply));
    ask
}

impl<'a, A: Actor> Batch<'a, A> {
    #[inline]
    pub(crate) fn new(actor: &'a ActorRef<A>) -> Self {
        let parts = if actor.local().is_some() {
            Parts::Local(new_nodes())
        } else {
            Parts::Remote(Vec::new())
        };
        Self { actor, parts }
    }

    /// Adds a message to the batch.
    #[inline]
    pub fn tell<M, K>(&mut self, msg: M) -> &mut Self
    where
        M: Message,
        A: Handles<M, K>,
    {
        match &mut self.parts {
            Parts::Local(nodes) => nodes.push(message_node(A::__vtables().tell, msg, ())),
            Parts::Remote(remote) => remote.push(outgoing(msg, None)),
        }
        self
    }

    /// Adds a request to the batch and returns the future of its reply, which completes
    /// once the batch is sent and the message handled.
    pub fn ask<M, K>(&mut self, msg: M) -> Ask<M::Reply>
    where
        M: Message,
        A: Handles<M, K>,
    {
        match &mut self.parts {
            Parts::Local(nodes) => ask_local(self.actor, nodes, msg),
            Parts::Remote(remote) => {
                let Some(target) = self.actor.remote_target() else {
                    unreachable!("a remote batch is for a remote ref");
                };
                let (reply, ask) = ask::pair::<M::Reply>(&target.endpoint.system().shared);
                remote.push(outgoing(msg, Some(ReplySlot::new(reply))));
                ask
            }
        }
    }

    /// Number of messages in the batch.
    pub fn len(&self) -> usize {
        match &self.parts {
            Parts::Local(nodes) => nodes.len,
            Parts::Remote(remote) => remote.len(),
        }
    }

    /// Whether the batch holds no message.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Sends the batch: its messages are handled in order, back to back.
    ///
    /// Fails, dropping the messages (their asks fail), if the actor has stopped, if
    /// its bounded mailbox has fewer free slots than the batch has messages, or, with
    /// [`BatchError::Remote`], if the actor is a mobile actor that has moved away (or
    /// a remote ref whose transport has no batches).
    ///
    /// **To a remote ref** the whole batch travels as one frame and enters the
    /// actor's mailbox, at its node, as one run, exactly as a local batch does: no
    /// other sender's message, local or remote, is handled between its messages. It
    /// fails whole, sending nothing, with [`BatchError::NotRemote`] if one of its
    /// messages is not in the actor's remote interface, [`BatchError::Unreachable`]
    /// if the node is gone, [`BatchError::Stopped`] if the actor is known to have
    /// stopped, and [`BatchError::Full`] if the outbox toward the node is full. The
    /// asks of a refused batch fail with the matching [`AskError`]. Once sent, its
    /// asks' replies come back as those of remote asks; if the actor stops or its
    /// node is lost before the batch is handled, the asks fail with `Stopped` or
    /// `Unreachable`, and the batch was handled whole or not at all (see
    /// `odeon::sharing`).
    #[inline]
    pub fn send(self) -> Result<(), BatchError> {
        // Taken apart, so that the local path moves its nodes out as before (no
        // placeholder chain, no second drop).
        let Batch { actor, parts } = self;
        match parts {
            Parts::Local(nodes) => {
                let Some(cell) = actor.local() else {
                    unreachable!("a local batch is for a local ref");
                };
                if nodes.len == 0 {
                    return Ok(());
                }
                send_nodes(cell, nodes)
            }
            Parts::Remote(remote) => send_remote(actor, remote),
        }
    }
}

#[cold]
fn send_remote<A: Actor>(actor: &ActorRef<A>, msgs: Vec<Outgoing>) -> Result<(), BatchError> {
    let Some(remote) = actor.remote_target() else {
        unreachable!("a ref is local or remote");
    };
    if msgs.is_empty() {
        return Ok(());
    }
    remote.endpoint.send_batch(msgs).map_err(|(why, msgs)| {
        let (batch, ask) = match why {
            Refusal::Stopped => (BatchError::Stopped, AskError::Stopped),
            Refusal::Unreachable => (BatchError::Unreachable, AskError::Unreachable),
            Refusal::NotRemote => (BatchError::NotRemote, AskError::NotRemote),
            Refusal::Full => (BatchError::Full, AskError::Full),
            // A transport without batches (and a mobile actor's route).
            _ => (BatchError::Remote, AskError::Unreachable),
        };
        for out in msgs {
            if let Some(slot) = out.reply {
                slot.fail(ask.clone());
            }
        }
        batch
    })
}

/// A batch owned by itself, for transports: the actor's node rebuilds a batch that
/// arrived in one frame with it, then pushes it as one run (as [`Batch::send`]).
/// Part of the unstable transport seam (`odeon::remote`).
///
/// ```
/// use odeon::{Actor, Context, Handler, Message, System};
/// use odeon::remote::DetachedBatch;
///
/// struct Sum(u32);
/// impl Actor for Sum {}
/// struct Add(u32);
/// impl Message for Add { type Reply = u32; }
/// impl Handler<Add> for Sum {
///     fn handle(&mut self, m: Add, _: &mut Context<Self>) -> u32 { self.0 += m.0; self.0 }
/// }
/// let system = System::new();
/// let sum = system.spawn(Sum(0));
/// let mut batch = DetachedBatch::new(&sum);
/// batch.tell(Add(1));
/// let total = batch.ask(Add(2));
/// batch.send().unwrap();
/// assert_eq!(system.block_on(total), Ok(3));
/// system.shutdown();
/// ```
pub struct DetachedBatch<A: Actor> {
    actor: ActorRef<A>,
    nodes: Nodes<A>,
}

impl<A: Actor> std::fmt::Debug for DetachedBatch<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DetachedBatch")
            .field("actor", &self.actor.id())
            .field("len", &self.nodes.len)
            .finish()
    }
}

impl<A: Actor> DetachedBatch<A> {
    /// An empty batch for `actor`, which must be local (else `send` fails with
    /// [`BatchError::Remote`]).
    pub fn new(actor: &ActorRef<A>) -> Self {
        Self {
            actor: actor.clone(),
            nodes: new_nodes(),
        }
    }

    /// Adds a message.
    pub fn tell<M, K>(&mut self, msg: M)
    where
        M: Message,
        A: Handles<M, K>,
    {
        self.nodes.push(message_node(A::__vtables().tell, msg, ()));
    }

    /// Adds a request; its reply completes once the batch is sent and handled.
    pub fn ask<M, K>(&mut self, msg: M) -> Ask<M::Reply>
    where
        M: Message,
        A: Handles<M, K>,
    {
        match self.actor.remote_target() {
            None => ask_local(&self.actor, &mut self.nodes, msg),
            Some(remote) => Ask::failed(AskError::Unreachable, &remote.endpoint.system().shared),
        }
    }

    /// Number of messages.
    pub fn len(&self) -> usize {
        self.nodes.len
    }

    /// Whether it holds no message.
    pub fn is_empty(&self) -> bool {
        self.nodes.len == 0
    }

    /// Pushes the batch into the actor's mailbox as one run; fails whole as
    /// [`Batch::send`] does for a local actor.
    pub fn send(self) -> Result<(), BatchError> {
        let Some(cell) = self.actor.local() else {
            return Err(BatchError::Remote);
        };
        if self.nodes.len == 0 {
            return Ok(());
        }
        send_nodes(cell, self.nodes)
    }
}

/// Pushes `nodes` into the actor's mailbox as one run.
#[inline]
fn send_nodes<A: Actor>(cell: &Cell<A>, mut nodes: Nodes<A>) -> Result<(), BatchError> {
    if cell.is_stopped() {
        return Err(BatchError::Stopped);
    }
    if cell.has_moved() {
        // A stub forwards mail one message at a time; the run would not stay whole.
        return Err(BatchError::Remote);
    }
    // A bounded mailbox: the batch takes all its slots now or none; the turn gives
    // each back as it pops the message, as for a `tell`.
    if let Some(bound) = cell.semaphore() {
        let n = u32::try_from(nodes.len).map_err(|_| BatchError::Full)?;
        match bound.try_acquire_many(n) {
            Ok(permit) => permit.forget(),
            Err(tokio::sync::TryAcquireError::NoPermits) => return Err(BatchError::Full),
            Err(tokio::sync::TryAcquireError::Closed) => return Err(BatchError::Stopped),
        }
    }
    // An observing system counts each message as sent (mailbox depth) and notes the
    // trace context current now, as a `tell` does: only at the push, so that a batch
    // dropped unsent leaves nothing behind in the actor's trace table.
    #[cfg(feature = "observe")]
    if cell.shared().config.observe {
        let mut observed = Chain::new();
        while let Some(link) = nodes.chain.pop_front() {
            // SAFETY: every link in the chain is a live node of actor type `A`, owned
            // by this batch and in no queue (`Nodes::push`).
            let node = unsafe { Header::<A>::from_link(link) };
            cell.observe_send(node);
            // SAFETY: as above; it moves from one chain of the batch to the other.
            unsafe { observed.push_back(link) };
        }
        nodes.chain = observed;
    }
    // The chain leaves `nodes` (whose drop then has nothing to discard).
    let chain = std::mem::replace(&mut nodes.chain, Chain::new());
    cell.push_chain(chain);
    Ok(())
}

impl<A: Actor> ActorRef<A> {
    /// Starts an atomic batch for this actor; see [`Batch`].
    pub fn batch(&self) -> Batch<'_, A> {
        Batch::new(self)
    }

    /// Builds a batch with `f` and sends it: the messages `f` adds are handled back to
    /// back, with no other sender's message in between. Returns what `f` returns (for
    /// example the batch's asks), or why the batch was not sent.
    ///
    /// A long batch still respects the per-turn budget: the actor's turn ends after
    /// `budget` messages so other actors run, and the next turn resumes the batch
    /// before anything else in the mailbox.
    ///
    /// If a handler in the batch calls [`Context::unstash_all`](crate::Context), the
    /// messages it unstashes come next, before the rest of the batch: the actor asked
    /// for that itself.
    ///
    /// ```
    /// use odeon::{Actor, Context, Handler, Message, System};
    ///
    /// struct Log(Vec<&'static str>);
    /// impl Actor for Log {}
    /// struct Line(&'static str);
    /// impl Message for Line { type Reply = (); }
    /// struct Dump;
    /// impl Message for Dump { type Reply = Vec<&'static str>; }
    /// impl Handler<Line> for Log {
    ///     fn handle(&mut self, l: Line, _: &mut Context<Self>) { self.0.push(l.0); }
    /// }
    /// impl Handler<Dump> for Log {
    ///     fn handle(&mut self, _: Dump, _: &mut Context<Self>) -> Vec<&'static str> {
    ///         self.0.clone()
    ///     }
    /// }
    ///
    /// let system = System::new();
    /// let log = system.spawn(Log(Vec::new()));
    /// let dump = log
    ///     .atomic(|b| {
    ///         b.tell(Line("begin")).tell(Line("commit"));
    ///         b.ask(Dump)
    ///     })
    ///     .unwrap();
    /// assert_eq!(system.block_on(dump).unwrap(), ["begin", "commit"]);
    /// system.shutdown();
    /// ```
    pub fn atomic<R>(&self, f: impl FnOnce(&mut Batch<'_, A>) -> R) -> Result<R, BatchError> {
        let mut batch = self.batch();
        let out = f(&mut batch);
        batch.send().map(|()| out)
    }
}
