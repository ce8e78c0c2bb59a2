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

use std::marker::PhantomData;

use crate::cell::Cell;
use crate::mailbox::chain::Chain;
use crate::mailbox::node::{Header, message_node};
use crate::refs::ask;
use crate::{Actor, ActorRef, Ask, Handles, Message};

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
    nodes: Nodes<A>,
}

impl<A: Actor> std::fmt::Debug for Batch<'_, A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batch")
            .field("actor", &self.actor.id())
            .field("len", &self.nodes.len)
            .finish()
    }
}

impl<'a, A: Actor> Batch<'a, A> {
    #[inline]
    pub(crate) fn new(actor: &'a ActorRef<A>) -> Self {
        Self {
            actor,
            nodes: Nodes {
                chain: Chain::new(),
                len: 0,
                actor: PhantomData,
            },
        }
    }

    /// Adds a message to the batch.
    #[inline]
    pub fn tell<M, K>(&mut self, msg: M) -> &mut Self
    where
        M: Message,
        A: Handles<M, K>,
    {
        self.nodes.push(message_node(A::__vtables().tell, msg, ()));
        self
    }

    /// Adds a request to the batch and returns the future of its reply, which completes
    /// once the batch is sent and the message handled.
    pub fn ask<M, K>(&mut self, msg: M) -> Ask<M::Reply>
    where
        M: Message,
        A: Handles<M, K>,
    {
        let Some(cell) = self.actor.local() else {
            // `send` refuses a batch for a remote actor; the ask fails the same way.
            let shared = &self
                .actor
                .remote_target()
                .map(|r| r.endpoint.system().shared.clone());
            return match shared {
                Some(shared) => Ask::failed(crate::AskError::Unreachable, shared),
                None => unreachable!("a ref is local or remote"),
            };
        };
        if cell.has_moved() {
            // A local ref to a mobile actor that moved away: `send` refuses the batch
            // as for a remote ref, and the ask says so in the same words (it would
            // otherwise be discarded with the batch and read `Stopped`).
            return Ask::failed(crate::AskError::Unreachable, cell.shared());
        }
        let (reply, ask) = ask::pair(cell.shared());
        self.nodes
            .push(message_node(A::__vtables().ask, msg, reply));
        ask
    }

    /// Number of messages in the batch.
    pub fn len(&self) -> usize {
        self.nodes.len
    }

    /// Whether the batch holds no message.
    pub fn is_empty(&self) -> bool {
        self.nodes.len == 0
    }

    /// Sends the batch: its messages are handled in order, back to back.
    ///
    /// Fails, dropping the messages (their asks fail), if the actor has stopped, if
    /// its bounded mailbox has fewer free slots than the batch has messages, or, with
    /// [`BatchError::Remote`], if the actor is on another node (a remote ref, or a
    /// mobile actor that has moved away): batches are local only.
    #[inline]
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
