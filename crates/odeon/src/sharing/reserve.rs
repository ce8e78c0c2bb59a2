//! Atomic reservations: the holder, and the future that obtains one.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::sync::oneshot;

use super::session::{Session, SessionFuture, State};
use super::{Ended, ReserveError};
use crate::cell::Cell;
use crate::mailbox::node::{Delivered, message_node, turn_node};
use crate::refs::ask;
use crate::remote::{OpenSession, Outgoing, RemoteSession, ReplySlot};
use crate::{Actor, ActorRef, Ask, AskError, Handles, Message, TellError, defaults};

/// Exclusive use of an actor: while it is held, the actor handles only the messages
/// sent through it; every other sender's mail waits in the mailbox, in order.
///
/// Obtained with [`ActorRef::reserve`]. It ends when it is dropped or
/// [released](Reservation::release) (messages already sent through it are handled
/// first), when its lease expires (what is still queued through it is dropped, its
/// asks fail), or when the actor stops. After that, [`Reservation::tell`] fails and
/// [`Reservation::ended`] says why.
///
/// # Semantics
/// - **Order.** Reservations are granted in the order they were requested, in mailbox
///   order with the actor's other mail: a `reserve` waits behind what was sent before
///   it and behind earlier reservations (FIFO).
/// - **Nesting.** Awaiting a second `reserve` of the same actor while holding one
///   waits until the first ends, at the latest when its lease expires. Send through
///   the reservation you hold instead.
/// - **The actor's own sends** (to itself, or timers) go to its mailbox and wait until
///   the reservation ends. A handler that *awaits* a reply from its own mailbox, or
///   from a holder that is itself blocked awaiting this actor, cannot get it while
///   the reservation lasts: it waits for its ask's deadline and gets
///   [`AskError::Timeout`], never a silent hang. Give such asks a short
///   [`timeout`](Ask::timeout).
/// - **Lease.** Counted from the grant ([`defaults::RESERVATION_LEASE`], or
///   [`Reserve::lease`]). At expiry a warning is logged and the holder is cut off; a
///   handler already running finishes first (macro-step).
/// - **Fairness.** The actor's turn still ends every `budget` messages, so other actors
///   keep running; the actor stays reserved across turns.
/// - **Stop.** A stop request ends the reservation after the current message; a kill
///   or a panic ends it at once.
/// - Messages sent through a reservation bypass a bounded mailbox's limit (they never
///   enter the mailbox). A mobile actor asked to move while reserved ends the
///   reservation ([`Ended::ActorStopped`]), then moves.
/// - **Remote actors** can be reserved (with `odeon-remote`): one round trip to open,
///   then each message costs a remote tell; the lease is kept at the actor's node,
///   and losing the holder's node ends it there. See `odeon::sharing` ("Across
///   nodes") for the failure behaviour.
/// - Under [`testkit::Sim`](crate::testkit::Sim) the lease is kept on the wall clock,
///   not the virtual one.
///
/// ```
/// use odeon::{Actor, Context, Handler, Message, System};
///
/// struct Barber { asleep: bool }
/// impl Actor for Barber {}
/// struct IsAsleep;
/// impl Message for IsAsleep { type Reply = bool; }
/// struct Wake;
/// impl Message for Wake { type Reply = (); }
/// impl Handler<IsAsleep> for Barber {
///     fn handle(&mut self, _: IsAsleep, _: &mut Context<Self>) -> bool { self.asleep }
/// }
/// impl Handler<Wake> for Barber {
///     fn handle(&mut self, _: Wake, _: &mut Context<Self>) { self.asleep = false; }
/// }
///
/// let system = System::new();
/// let barber = system.spawn(Barber { asleep: true });
/// system.block_on(async {
///     let r = barber.reserve().await.unwrap();
///     // No other customer can wake the barber between the check and the wake.
///     if r.ask(IsAsleep).await.unwrap() {
///         r.tell(Wake).unwrap();
///     }
///     r.release();
/// });
/// assert!(!system.block_on(barber.ask(IsAsleep)).unwrap());
/// system.shutdown();
/// ```
pub struct Reservation<A: Actor> {
    session: Held<A>,
    actor: ActorRef<A>,
}

/// Where the reservation lives: on this node, or at the remote actor's node.
enum Held<A: Actor> {
    Local(Arc<Session<A>>),
    Remote(Box<dyn RemoteSession>),
}

fn outgoing<M: Message>(msg: M, reply: Option<ReplySlot>) -> Outgoing {
    Outgoing {
        message: Box::new(msg),
        type_id: std::any::TypeId::of::<M>(),
        type_name: std::any::type_name::<M>(),
        reply,
    }
}

impl<A: Actor> std::fmt::Debug for Reservation<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reservation")
            .field("actor", &self.actor.id())
            .field("active", &self.is_active())
            .finish()
    }
}

impl<A: Actor> Reservation<A> {
    /// Sends `msg` inside the reservation. Fails, giving the message back
    /// ([`TellError::Stopped`]), once the reservation has ended.
    pub fn tell<M, K>(&self, msg: M) -> Result<(), TellError<M>>
    where
        M: Message,
        A: Handles<M, K>,
    {
        match &self.session {
            Held::Local(session) => session
                .push(msg, |msg| message_node(A::__vtables().tell, msg, ()))
                .map_err(TellError::Stopped),
            Held::Remote(session) => session
                .send(outgoing(msg, None))
                .map_err(|(why, out)| crate::refs::remote::refused_pub(why, out)),
        }
    }

    /// Sends `msg` inside the reservation and returns the future of its reply. Fails
    /// with [`AskError::Stopped`] if the reservation has ended (see
    /// [`Reservation::ended`] for why) or ends before the message is handled.
    pub fn ask<M, K>(&self, msg: M) -> Ask<M::Reply>
    where
        M: Message,
        A: Handles<M, K>,
    {
        let session = match &self.session {
            Held::Local(session) => session,
            Held::Remote(session) => {
                let system = self.actor.system();
                let (reply, ask) = ask::pair::<M::Reply>(&system.shared);
                if let Err((why, out)) = session.send(outgoing(msg, Some(ReplySlot::new(reply)))) {
                    if let Some(slot) = out.reply {
                        slot.fail(crate::refs::remote::ask_error_pub(&why));
                    }
                }
                return ask;
            }
        };
        let shared = self.actor.cell().shared();
        let (reply, ask) = ask::pair(shared);
        match session.push(msg, |msg| message_node(A::__vtables().ask, msg, reply)) {
            Ok(()) => ask,
            // `reply` was not used: dropped with the closure, it fails `ask`.
            Err(_) => Ask::failed(AskError::Stopped, shared),
        }
    }

    /// Ends the reservation once the messages already sent through it are handled;
    /// the actor then handles its mailbox again. Dropping it does the same.
    pub fn release(self) {
        drop(self);
    }

    /// Whether messages can still be sent through the reservation.
    ///
    /// For a remote actor this is the holder's view: it turns false once released,
    /// once the holder's own count of the lease runs out (it starts at the grant's
    /// arrival, so later than the owner's), or once the link to the actor's node is
    /// lost. An end decided at the actor's node alone (the actor stopped or moved)
    /// shows as asks through the reservation failing with [`AskError::Stopped`].
    pub fn is_active(&self) -> bool {
        match &self.session {
            Held::Local(session) => session.state() == State::Active,
            Held::Remote(session) => session.ended().is_none(),
        }
    }

    /// Why the reservation ended, if it has (a released one that still has messages
    /// to handle has not ended yet). For a remote actor, the holder's view (see
    /// [`Reservation::is_active`]).
    pub fn ended(&self) -> Option<Ended> {
        match &self.session {
            Held::Local(session) => match session.state() {
                State::Ended(why) => Some(why),
                _ => None,
            },
            Held::Remote(session) => session.ended(),
        }
    }

    /// The reserved actor.
    pub fn actor(&self) -> &ActorRef<A> {
        &self.actor
    }
}

impl<A: Actor> Drop for Reservation<A> {
    fn drop(&mut self) {
        match &self.session {
            Held::Local(session) => session.release(),
            Held::Remote(session) => session.release(),
        }
    }
}

/// The future of a [`Reservation`], from [`ActorRef::reserve`]. The request is sent
/// when it is first polled; dropping it before it completes gives up the reservation.
#[must_use = "a reservation is only requested when the future is awaited"]
pub struct Reserve<A: Actor> {
    actor: ActorRef<A>,
    lease: Duration,
    waiting: Option<(oneshot::Receiver<()>, Arc<Session<A>>)>,
    /// A remote actor's: the transport's request, once sent.
    remote: Option<OpenSession>,
}

impl<A: Actor> std::fmt::Debug for Reserve<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reserve")
            .field("actor", &self.actor.id())
            .field("lease", &self.lease)
            .finish()
    }
}

impl<A: Actor> Reserve<A> {
    /// Sets the lease: how long the reservation may last once granted.
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    fn request(
        &self,
        cell: &Cell<A>,
    ) -> Result<(oneshot::Receiver<()>, Arc<Session<A>>), ReserveError> {
        if cell.is_stopped() {
            return Err(ReserveError::Stopped);
        }
        if cell.has_moved() {
            // A local ref to a mobile actor that moved away: the grant would be
            // discarded by the stub (read as `Stopped`), but the actor is on another
            // node, as for a remote ref.
            return Err(ReserveError::Remote);
        }
        let session = Arc::new(Session::new(self.lease));
        let (grant, granted) = oneshot::channel::<()>();
        let theirs = session.clone();
        cell.push_node(turn_node(move |cell: &Cell<A>| {
            let mut alive = false;
            cell.with_state(|_, _| alive = true);
            if !alive {
                theirs.end(Ended::ActorStopped);
                return Delivered::Done;
            }
            {
                let mut q = theirs.queue.lock();
                if q.state != super::session::State::Waiting {
                    // Given up before it was granted.
                    return Delivered::Done;
                }
                q.state = State::Active;
            }
            if grant.send(()).is_err() {
                theirs.end(Ended::Released);
                return Delivered::Done;
            }
            // SAFETY: on the actor's turn, from a node's deliver; the turn keeps the
            // future in its pending slot (`Delivered::Suspended`).
            unsafe { SessionFuture::start(theirs, cell) }
        }));
        Ok((granted, session))
    }
}

impl<A: Actor> Future for Reserve<A> {
    type Output = Result<Reservation<A>, ReserveError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        if this.waiting.is_none() {
            let Some(cell) = this.actor.local() else {
                return this.poll_remote(cx);
            };
            match this.request(cell) {
                Ok(w) => this.waiting = Some(w),
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
        let Some((granted, _)) = this.waiting.as_mut() else {
            unreachable!("set above");
        };
        match Pin::new(granted).poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(res) => {
                let Some((_, session)) = this.waiting.take() else {
                    unreachable!("set above");
                };
                match res {
                    Ok(()) => Poll::Ready(Ok(Reservation {
                        session: Held::Local(session),
                        actor: this.actor.clone(),
                    })),
                    // The request was dropped undelivered: the actor stopped.
                    Err(_) => Poll::Ready(Err(ReserveError::Stopped)),
                }
            }
        }
    }
}

impl<A: Actor> Reserve<A> {
    #[cold]
    fn poll_remote(&mut self, cx: &mut Context<'_>) -> Poll<Result<Reservation<A>, ReserveError>> {
        let Some(endpoint) = self.actor.endpoint() else {
            unreachable!("a ref is local or remote");
        };
        let open = self
            .remote
            .get_or_insert_with(|| endpoint.reserve(self.lease));
        match open.as_mut().poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(res) => {
                self.remote = None;
                Poll::Ready(res.map(|session| Reservation {
                    session: Held::Remote(session),
                    actor: self.actor.clone(),
                }))
            }
        }
    }
}

impl<A: Actor> Drop for Reserve<A> {
    fn drop(&mut self) {
        // Given up while waiting (or granted but never seen): free the actor.
        if let Some((_, session)) = self.waiting.take() {
            session.release();
        }
    }
}

impl<A: Actor> ActorRef<A> {
    /// Reserves the actor: the returned future completes with a [`Reservation`] once
    /// every message and reservation sent before it has been handled. See
    /// [`Reservation`] for the semantics (lease, nesting, fairness).
    pub fn reserve(&self) -> Reserve<A> {
        Reserve {
            actor: self.clone(),
            lease: defaults::RESERVATION_LEASE,
            waiting: None,
            remote: None,
        }
    }
}
