//! What the peers let any holder of a ref do, beyond tell/ask/stop: drain then stop
//! (kameo's `stop_gracefully`, ractor's `drain`), timers armed from outside the actor
//! (ractor's `ActorRef::send_after`, kameo's `tell(..).send_after`), and an ask that
//! waits for room in a bounded mailbox (actix's `Addr::send`).

use std::sync::Arc;
use std::time::Duration;

use super::ask;
use crate::{
    Actor, ActorRef, Ask, AskError, DrainError, Handles, Message, TellError, TimerHandle, timer,
};

impl<A: Actor> ActorRef<A> {
    /// Stops the actor once it has handled every message already in its mailbox, and
    /// refuses new ones from now on (kameo's `stop_gracefully`, ractor's `drain`).
    ///
    /// Differences with [`ActorRef::stop`], which stops after the *current* message
    /// and drops the queue (failing its asks):
    ///
    /// - every message accepted before this call is handled, in order, and its ask
    ///   answered; a stop request (`stop`, `kill`) meanwhile still cuts the drain short;
    /// - from this call on, `tell`, `send`, `ask`, timers, streams and the actor's own
    ///   [`Context::notify`](crate::Context::notify) are refused with
    ///   [`TellError::Stopped`] / [`AskError::Stopped`], as if it had stopped; a send
    ///   racing with this call may be accepted, and is then dropped at the stop;
    /// - stashed messages that are not unstashed before the end are dropped, as at any
    ///   stop; a running async handler finishes first.
    ///
    /// The reason is [`StopReason::Normal`](crate::StopReason::Normal): a permanent
    /// child is restarted by its supervisor, and the new instance accepts messages.
    /// Calling it again while a drain runs does nothing. Returns at once; await
    /// [`ActorRef::wait_stopped`] for the end.
    ///
    /// # Errors
    /// [`DrainError::Stopped`] if the actor has stopped (also after
    /// [`System::shutdown`](crate::System::shutdown)), [`DrainError::NotLocal`] for an
    /// actor on another node (nothing is sent; use `stop`, or a message whose handler
    /// calls [`Context::stop`](crate::Context::stop)).
    ///
    /// ```
    /// use odeon::{Actor, Context, Handler, Message, StopReason, System, TellError};
    ///
    /// #[derive(Default)]
    /// struct Log(Vec<u32>);
    /// impl Actor for Log {}
    /// struct Entry(u32);
    /// impl Message for Entry { type Reply = usize; }
    /// impl Handler<Entry> for Log {
    ///     fn handle(&mut self, e: Entry, _: &mut Context<Self>) -> usize {
    ///         self.0.push(e.0);
    ///         self.0.len()
    ///     }
    /// }
    ///
    /// let system = System::new();
    /// let log = system.spawn(Log::default());
    /// log.tell(Entry(1)).unwrap();
    /// let second = log.ask(Entry(2));
    /// log.stop_gracefully().unwrap();
    /// assert!(matches!(log.tell(Entry(3)), Err(TellError::Stopped(_))));
    /// assert_eq!(system.block_on(second), Ok(2), "queued before the call: answered");
    /// assert_eq!(system.block_on(log.wait_stopped()), StopReason::Normal);
    /// ```
    pub fn stop_gracefully(&self) -> Result<(), DrainError> {
        match self.local() {
            Some(cell) => cell.stop_gracefully(),
            None => Err(DrainError::NotLocal),
        }
    }

    /// Sends `msg` to the actor after `delay`, from outside it (ractor's
    /// `ActorRef::send_after`); inside a handler [`Context::send_after`] is the same
    /// thing, cancelled when the actor stops.
    ///
    /// The timer runs on the system's timer: odeon's I/O runtime, the application's
    /// runtime given with [`SystemBuilder::io_handle`](crate::SystemBuilder::io_handle)
    /// (then a paused tokio clock drives it), or a [`Sim`](crate::testkit::Sim)'s
    /// virtual clock. It may be armed from any thread, inside a tokio runtime or not.
    /// Until it fires it holds a reference, so it keeps the actor alive; cancel it
    /// with [`TimerHandle::cancel`] (dropping the handle does not). If the mailbox is
    /// bounded and full when it fires, it waits for room; if the actor has stopped by
    /// then, the message is dropped.
    ///
    /// # Errors
    /// [`TellError::Stopped`] (with the message) if the actor has stopped or is
    /// draining, also after the system's shutdown; [`TellError::NotRemote`] for an
    /// actor on another node (timers are local: arm one on its node).
    ///
    /// [`Context::send_after`]: crate::Context::send_after
    ///
    /// ```
    /// use std::time::Duration;
    /// use odeon::{Actor, Context, Handler, Message, System};
    ///
    /// struct Alarm;
    /// impl Actor for Alarm {}
    /// struct Ring;
    /// impl Message for Ring { type Reply = (); }
    /// impl Handler<Ring> for Alarm {
    ///     fn handle(&mut self, _: Ring, cx: &mut Context<Self>) { cx.stop(); }
    /// }
    ///
    /// let system = System::new();
    /// let alarm = system.spawn(Alarm);
    /// let timer = alarm.send_after(Duration::from_millis(5), Ring).unwrap();
    /// system.block_on(alarm.wait_stopped());
    /// assert!(timer.is_finished());
    /// ```
    pub fn send_after<M, K>(&self, delay: Duration, msg: M) -> Result<TimerHandle, TellError<M>>
    where
        M: Message,
        A: Handles<M, K>,
        K: 'static,
    {
        let Some(cell) = self.local() else {
            return Err(TellError::NotRemote(msg));
        };
        if cell.is_stopped() || cell.is_draining() {
            return Err(TellError::Stopped(msg));
        }
        let shared = Arc::clone(cell.shared());
        // The deadline is read on the timer's own clock (a caller inside another
        // runtime, paused or not, must not lend it its clock).
        let _io = shared.io.enter();
        Ok(timer::send_after(&shared, self.clone(), delay, msg))
    }

    /// Sends a clone of `msg` to the actor every `period`, first after one period,
    /// from outside it (ractor's `ActorRef::send_interval`), until cancelled with
    /// [`TimerHandle::cancel`] or the actor stops. Runs on the system's timer, as
    /// [`ActorRef::send_after`], and keeps the actor alive while it runs. A tick that
    /// finds a bounded mailbox full waits for room (later ticks are delayed, not
    /// bunched).
    ///
    /// # Errors
    /// As [`ActorRef::send_after`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use odeon::{Actor, Context, Handler, Message, System};
    ///
    /// struct Beat(u32);
    /// impl Actor for Beat {}
    /// #[derive(Clone)]
    /// struct Tick;
    /// impl Message for Tick { type Reply = (); }
    /// impl Handler<Tick> for Beat {
    ///     fn handle(&mut self, _: Tick, cx: &mut Context<Self>) {
    ///         self.0 += 1;
    ///         if self.0 == 3 { cx.stop(); }
    ///     }
    /// }
    ///
    /// let system = System::new();
    /// let beat = system.spawn(Beat(0));
    /// let timer = beat.send_interval(Duration::from_millis(1), Tick).unwrap();
    /// system.block_on(beat.wait_stopped());   // three ticks, then it stops itself
    /// system.run_until_quiescent();            // the stopped target ended the timer
    /// assert!(timer.is_finished());
    /// ```
    pub fn send_interval<M, K>(&self, period: Duration, msg: M) -> Result<TimerHandle, TellError<M>>
    where
        M: Message + Clone,
        A: Handles<M, K>,
        K: 'static,
    {
        let Some(cell) = self.local() else {
            return Err(TellError::NotRemote(msg));
        };
        if cell.is_stopped() || cell.is_draining() {
            return Err(TellError::Stopped(msg));
        }
        let shared = Arc::clone(cell.shared());
        let _io = shared.io.enter();
        Ok(timer::send_interval(&shared, self.clone(), period, msg))
    }

    /// An ask that waits for room in a full bounded mailbox instead of failing at once
    /// with [`AskError::Full`] as [`ActorRef::ask`] does: `ask` is to `ask_wait` what
    /// [`ActorRef::tell`] is to [`ActorRef::send`] (actix's `Addr::send`, kameo's
    /// `ask(..).await`).
    ///
    /// The ask's deadline ([`Ask::timeout`], or the system's default) counts from the
    /// first poll and covers the wait for room as well as the reply: when it passes
    /// first, the ask fails with [`AskError::Timeout`] and the message is dropped
    /// unsent. Waiting senders get room in FIFO order. An unbounded mailbox never
    /// waits, and for an actor on another node this is [`ActorRef::ask`]. Nothing is
    /// sent until the returned [`Ask`] is polled, if the mailbox is full.
    ///
    /// # Errors (in the reply)
    /// As [`ActorRef::ask`], except `Full`; [`AskError::Stopped`] also when the actor
    /// stops (or starts draining) while the ask waits for room.
    ///
    /// ```
    /// use std::time::Duration;
    /// use odeon::{Actor, AskError, Context, Handler, Message, SpawnOptions, System};
    ///
    /// struct Doubler;
    /// impl Actor for Doubler {}
    /// struct Twice(u32);
    /// impl Message for Twice { type Reply = u32; }
    /// impl Handler<Twice> for Doubler {
    ///     fn handle(&mut self, t: Twice, _: &mut Context<Self>) -> u32 { t.0 * 2 }
    /// }
    ///
    /// let system = System::new();
    /// let d = system.spawn_with(Doubler, SpawnOptions::new().bounded(1));
    /// // Many asks at once on a mailbox of one: `ask` may fail with `Full`,
    /// // `ask_wait` waits its turn.
    /// let asks: Vec<_> = (0..20).map(|n| d.ask_wait(Twice(n))).collect();
    /// for (n, ask) in asks.into_iter().enumerate() {
    ///     let ask = ask.timeout(Duration::from_secs(30));
    ///     assert_eq!(system.block_on(ask), Ok(n as u32 * 2));
    /// }
    /// # let _ = AskError::Full;
    /// ```
    pub fn ask_wait<M, K>(&self, msg: M) -> Ask<M::Reply>
    where
        M: Message,
        A: Handles<M, K>,
        K: 'static,
    {
        let cell = match self.local() {
            Some(cell) => cell,
            None => return self.ask(msg),
        };
        let Some(bound) = cell.semaphore() else {
            return self.ask(msg);
        };
        let (reply, ask) = ask::pair(cell.shared());
        // Fast path: room now, sent now, as `ask`.
        match bound.try_acquire() {
            Ok(permit) => {
                permit.forget();
                return match cell.send_with_permit(msg, Some(reply)) {
                    Ok(()) => ask,
                    Err(e) => Ask::failed(e.into(), cell.shared()),
                };
            }
            Err(tokio::sync::TryAcquireError::Closed) => {
                return Ask::failed(AskError::Stopped, cell.shared());
            }
            Err(tokio::sync::TryAcquireError::NoPermits) => {}
        }
        // The wait holds an `Arc` of the cell, not a strong ref: a waiting ask does not
        // keep the actor alive, as a queued one does not.
        let cell = Arc::clone(cell);
        ask.after(async move {
            let Some(bound) = cell.semaphore() else {
                return Err(AskError::Stopped);
            };
            match bound.acquire().await {
                Ok(permit) => {
                    permit.forget();
                    cell.send_with_permit(msg, Some(reply))
                        .map_err(AskError::from)
                }
                Err(_) => Err(AskError::Stopped),
            }
        })
    }
}
