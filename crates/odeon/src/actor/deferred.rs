//! Replying later: a handler that takes its reply handle with it.

use std::fmt;

use crate::refs::ask::ReplyTo;
use crate::{Actor, AskError, Context, Message};

/// Handles `M` and replies when it is ready, not when it returns: the handler gets a
/// [`ReplySender`] it may keep in its state (to answer from a later message) or move
/// into a task (to answer from anywhere), while the actor goes on with its mailbox.
///
/// Unlike an [`AsyncHandler`](crate::AsyncHandler), the actor is not held while the
/// answer is prepared: other messages are handled meanwhile. An ask resolves when
/// the sender is used; if it is dropped unused, the ask fails with
/// [`AskError::Dropped`] at once (it neither hangs nor waits for its timeout). A
/// `tell` of such a message works as usual: its sender is a no-op.
///
/// ```
/// use odeon::{Actor, Context, DeferredHandler, Handler, Message, ReplySender, System};
///
/// /// Answers "who is next?" only once someone has joined.
/// #[derive(Default)]
/// struct Queue { waiting: Vec<ReplySender<String>> }
/// impl Actor for Queue {}
///
/// struct Next;
/// impl Message for Next { type Reply = String; }
/// impl DeferredHandler<Next> for Queue {
///     fn handle(&mut self, _: Next, reply: ReplySender<String>, _: &mut Context<Self>) {
///         self.waiting.push(reply); // answered by a later message
///     }
/// }
///
/// struct Join(String);
/// impl Message for Join { type Reply = (); }
/// impl Handler<Join> for Queue {
///     fn handle(&mut self, j: Join, _: &mut Context<Self>) {
///         for reply in self.waiting.drain(..) {
///             reply.send(j.0.clone());
///         }
///     }
/// }
///
/// let system = System::new();
/// let queue = system.spawn(Queue::default());
/// let next = queue.ask(Next);          // not answered yet...
/// queue.tell(Join("ann".into())).unwrap();
/// assert_eq!(system.block_on(next).unwrap(), "ann"); // ...until Join arrives
/// ```
pub trait DeferredHandler<M: Message>: Actor {
    /// Handles one message; `reply` answers it, now or later, from anywhere.
    fn handle(&mut self, msg: M, reply: ReplySender<M::Reply>, cx: &mut Context<Self>);
}

/// The reply to one message handled by a [`DeferredHandler`]: `Send`, `'static`, used
/// at most once. Dropping it unused fails the ask with [`AskError::Dropped`].
///
/// ```
/// use odeon::{Actor, AskError, Context, DeferredHandler, Message, ReplySender, System};
///
/// struct Forgetful;
/// impl Actor for Forgetful {}
/// struct Question;
/// impl Message for Question { type Reply = u32; }
/// impl DeferredHandler<Question> for Forgetful {
///     fn handle(&mut self, _: Question, reply: ReplySender<u32>, _: &mut Context<Self>) {
///         // Answer from another thread...
///         std::thread::spawn(move || reply.send(42));
///     }
/// }
///
/// let system = System::new();
/// let actor = system.spawn(Forgetful);
/// assert_eq!(system.block_on(actor.ask(Question)), Ok(42));
///
/// struct Lost;
/// impl Message for Lost { type Reply = (); }
/// impl DeferredHandler<Lost> for Forgetful {
///     fn handle(&mut self, _: Lost, reply: ReplySender<()>, _: &mut Context<Self>) {
///         drop(reply); // ...or never
///     }
/// }
/// assert_eq!(system.block_on(actor.ask(Lost)), Err(AskError::Dropped));
/// ```
pub struct ReplySender<R> {
    /// `None` for a tell (nobody waits) and once used.
    to: Option<ReplyTo<R>>,
}

impl<R: Send + 'static> ReplySender<R> {
    pub(crate) fn new(to: Option<ReplyTo<R>>) -> Self {
        Self { to }
    }

    /// Sends the reply. For a message that was told, not asked, this does nothing;
    /// nor does it when the asker has given up (dropped its ask or timed out).
    pub fn send(mut self, reply: R) {
        if let Some(to) = self.to.take() {
            to.send(reply);
        }
    }

    /// Whether someone waits for the reply: `false` for a message that was told.
    pub fn is_ask(&self) -> bool {
        self.to.is_some()
    }
}

impl<R> Drop for ReplySender<R> {
    fn drop(&mut self) {
        if let Some(to) = self.to.take() {
            // While unwinding (the handler holding it panicked) the asker learns that.
            let error = if std::thread::panicking() {
                AskError::Panicked
            } else {
                AskError::Dropped
            };
            to.fail(error);
        }
    }
}

impl<R> fmt::Debug for ReplySender<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReplySender")
            .field("ask", &self.to.is_some())
            .finish()
    }
}
