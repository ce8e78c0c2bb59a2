//! Atomic batches: a group of messages handled back to back.
//!
//! A batch is built on the sender's side as ordinary message nodes, then sent as one
//! runtime signal. When the signal reaches the front of the mailbox, it moves the
//! nodes, in order, into the turn's *held* queue, which the turn always drains before
//! it pops the mailbox again. Nothing from another sender can get in between, yet each
//! message is still one delivery: the turn's budget counts them, an async handler in
//! the batch suspends the turn as usual, and a long batch ends its turn at the budget
//! and carries on in the next one (other actors run meanwhile; this actor's mailbox
//! still waits, because the held queue comes first).
//!
//! The plain `tell` path is not touched: the held queue already existed (stash and
//! supervision use it), and the turn already drains it first.

use std::ptr::NonNull;

use crate::cell::Cell;
use crate::mailbox::node::{Header, message_node};
use crate::refs::ask;
use crate::{Actor, ActorRef, Ask, Handles, Message};

use super::BatchError;

/// Message nodes owned by a batch until the actor's turn takes them.
struct Nodes<A: Actor>(Vec<NonNull<Header<A>>>);

// SAFETY: every node owns a message of a `Send + 'static` type (and, for an ask, a
// reply channel that is `Send`); nothing else points at the nodes.
unsafe impl<A: Actor> Send for Nodes<A> {}

impl<A: Actor> Drop for Nodes<A> {
    fn drop(&mut self) {
        for node in self.0.drain(..) {
            // SAFETY: the node is owned by this batch and no queue holds it; its ask,
            // if any, learns that the actor stopped.
            unsafe { (Header::vtable(node).discard)(node) };
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
    /// User messages (each takes a slot of a bounded mailbox).
    users: usize,
}

impl<A: Actor> std::fmt::Debug for Batch<'_, A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batch")
            .field("actor", &self.actor.id())
            .field("len", &self.nodes.0.len())
            .finish()
    }
}

impl<'a, A: Actor> Batch<'a, A> {
    pub(crate) fn new(actor: &'a ActorRef<A>) -> Self {
        Self {
            actor,
            nodes: Nodes(Vec::new()),
            users: 0,
        }
    }

    /// Adds a message to the batch.
    pub fn tell<M, K>(&mut self, msg: M) -> &mut Self
    where
        M: Message,
        A: Handles<M, K>,
    {
        self.nodes
            .0
            .push(message_node(A::__vtables().tell, msg, ()));
        self.users += 1;
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
        let (reply, ask) = ask::pair(cell.shared());
        self.nodes
            .0
            .push(message_node(A::__vtables().ask, msg, reply));
        self.users += 1;
        ask
    }

    /// Number of messages in the batch.
    pub fn len(&self) -> usize {
        self.nodes.0.len()
    }

    /// Whether the batch holds no message.
    pub fn is_empty(&self) -> bool {
        self.nodes.0.is_empty()
    }

    /// Sends the batch: its messages are handled in order, back to back.
    ///
    /// Fails, dropping the messages (their asks fail), if the actor has stopped, if
    /// its bounded mailbox has fewer free slots than the batch has messages, or if the
    /// actor is on another node (batches to remote actors are not supported yet).
    pub fn send(self) -> Result<(), BatchError> {
        let Some(cell) = self.actor.local() else {
            return Err(BatchError::Remote);
        };
        if self.nodes.0.is_empty() {
            return Ok(());
        }
        send_nodes(cell, self.nodes, self.users)
    }
}

/// Moves `nodes` into the actor's held queue, in one step of its turn.
fn send_nodes<A: Actor>(cell: &Cell<A>, nodes: Nodes<A>, users: usize) -> Result<(), BatchError> {
    if cell.is_stopped() {
        return Err(BatchError::Stopped);
    }
    // A bounded mailbox: the batch takes its slots now and gives them back when its
    // messages leave the mailbox for the held queue (the turn frees a slot only for
    // what it pops from the mailbox itself).
    if let Some(bound) = cell.semaphore() {
        let n = u32::try_from(users).map_err(|_| BatchError::Full)?;
        match bound.try_acquire_many(n) {
            Ok(permit) => permit.forget(),
            Err(tokio::sync::TryAcquireError::NoPermits) => return Err(BatchError::Full),
            Err(tokio::sync::TryAcquireError::Closed) => return Err(BatchError::Stopped),
        }
    }
    cell.signal(move |cell: &Cell<A>| {
        let mut nodes = nodes;
        if let Some(bound) = cell.semaphore() {
            bound.add_permits(users);
        }
        // SAFETY: signals run on the actor's turn, with no other borrow of `life`.
        let life = unsafe { cell.life() };
        // Appended, not put in front: while the actor runs, the turn only pops the
        // mailbox (where this signal was) once the held queue is empty, so the batch
        // lands in front of everything that came after it. While it awaits a
        // supervisor's restart, earlier held messages stay before it (FIFO per pair).
        life.held.extend(nodes.0.drain(..));
    });
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
