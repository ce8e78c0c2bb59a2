//! Probes: actors that record what they receive, for tests to assert on.

use std::any::type_name;
use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use super::inbox::Inbox;
use crate::sync::Mutex;
use crate::system::Shared;
use crate::{
    Actor, ActorId, ActorRef, Context, Handler, Message, Recipient, StopReason, SystemHandle,
    Terminated,
};

/// Computes the reply of an ask a probe receives.
type Autopilot<M> = Box<dyn FnMut(&M) -> <M as Message>::Reply + Send>;

/// The actor behind a [`TestProbe`]: it records every `M` it receives and answers
/// asks with the probe's autopilot. Reach it through [`TestProbe::actor_ref`].
pub struct ProbeActor<M: Message> {
    inbox: Arc<Inbox<M>>,
    autopilot: Arc<Mutex<Autopilot<M>>>,
}

impl<M: Message> std::fmt::Debug for ProbeActor<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProbeActor")
            .field("message", &type_name::<M>())
            .finish_non_exhaustive()
    }
}

impl<M: Message> Actor for ProbeActor<M> {}

impl<M: Message> Handler<M> for ProbeActor<M> {
    fn handle(&mut self, msg: M, _: &mut Context<Self>) -> M::Reply {
        let reply = (self.autopilot.lock())(&msg);
        self.inbox.put(msg);
        reply
    }
}

/// An actor that tests hand out where an `ActorRef` or a [`Recipient<M>`] is wanted,
/// and whose messages they then assert on, in arrival order.
///
/// Every expectation that is not met panics with a message naming what was expected
/// and what came, which fails the test. Timeouts are real time on a [`System`], and
/// virtual time on a [`Sim`](super::Sim), where an expectation runs the simulation
/// until the message comes (see the [module docs](super)).
///
/// ```
/// use std::time::Duration;
/// use odeon::{Actor, Context, Handler, Message, Recipient, System};
/// use odeon::testkit::TestProbe;
///
/// #[derive(Debug, PartialEq)]
/// struct Done(u32);
/// impl Message for Done { type Reply = (); }
///
/// struct Worker { report_to: Recipient<Done> }
/// impl Actor for Worker {}
/// struct Job(u32);
/// impl Message for Job { type Reply = (); }
/// impl Handler<Job> for Worker {
///     fn handle(&mut self, job: Job, _: &mut Context<Self>) {
///         self.report_to.tell(Done(job.0 * 2)).unwrap();
///     }
/// }
///
/// let system = System::new();
/// let probe = TestProbe::<Done>::new(&system.handle());
/// let worker = system.spawn(Worker { report_to: probe.recipient() });
/// worker.tell(Job(21)).unwrap();
/// probe.expect_msg_eq(&Done(42), Duration::from_secs(5));
/// probe.expect_no_msg(Duration::from_millis(10));
/// ```
///
/// [`System`]: crate::System
pub struct TestProbe<M: Message> {
    actor: ActorRef<ProbeActor<M>>,
    inbox: Arc<Inbox<M>>,
    autopilot: Arc<Mutex<Autopilot<M>>>,
    shared: Arc<Shared>,
}

impl<M: Message> std::fmt::Debug for TestProbe<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestProbe")
            .field("message", &type_name::<M>())
            .field("id", &self.actor.id())
            .field("queued", &self.inbox.len())
            .finish_non_exhaustive()
    }
}

impl<M: Message<Reply = ()>> TestProbe<M> {
    /// A probe for tell-only messages.
    pub fn new(system: &SystemHandle) -> Self {
        Self::with_autopilot(system, |_| ())
    }
}

impl<M: Message> TestProbe<M> {
    /// A probe that answers each ask with `autopilot(&msg)` (and records the message
    /// as any other).
    ///
    /// ```
    /// use std::time::Duration;
    /// use odeon::{Message, System};
    /// use odeon::testkit::TestProbe;
    ///
    /// struct Price(&'static str);
    /// impl Message for Price { type Reply = u32; }
    ///
    /// let system = System::new();
    /// let probe = TestProbe::with_autopilot(&system.handle(), |p: &Price| p.0.len() as u32);
    /// assert_eq!(system.block_on(probe.actor_ref().ask(Price("tea"))), Ok(3));
    /// assert_eq!(probe.expect_msg(Duration::from_secs(5)).0, "tea");
    /// ```
    pub fn with_autopilot(
        system: &SystemHandle,
        autopilot: impl FnMut(&M) -> M::Reply + Send + 'static,
    ) -> Self {
        let inbox = Arc::new(Inbox::new());
        let autopilot: Arc<Mutex<Autopilot<M>>> = Arc::new(Mutex::new(Box::new(autopilot)));
        let actor = system.spawn(ProbeActor {
            inbox: inbox.clone(),
            autopilot: autopilot.clone(),
        });
        Self {
            actor,
            inbox,
            autopilot,
            shared: system.shared.clone(),
        }
    }

    /// Replaces the autopilot for the asks that come from now on.
    pub fn set_autopilot(&self, autopilot: impl FnMut(&M) -> M::Reply + Send + 'static) {
        *self.autopilot.lock() = Box::new(autopilot);
    }

    /// The probe's actor. It lives as long as the probe or any ref to it.
    pub fn actor_ref(&self) -> ActorRef<ProbeActor<M>> {
        self.actor.clone()
    }

    /// The probe's actor as a [`Recipient<M>`].
    pub fn recipient(&self) -> Recipient<M> {
        self.actor.recipient()
    }

    /// The probe actor's id.
    pub fn id(&self) -> ActorId {
        self.actor.id()
    }

    /// Messages received and not yet taken by an expectation.
    pub fn queued(&self) -> usize {
        self.inbox.len()
    }

    /// Takes the next message if one has arrived, without waiting (or running a
    /// simulation).
    pub fn try_recv(&self) -> Option<M> {
        self.inbox.try_take()
    }

    /// The next message, waiting up to `timeout` for it.
    ///
    /// # Panics
    /// If none comes in time.
    #[track_caller]
    pub fn expect_msg(&self, timeout: Duration) -> M {
        match self.inbox.wait(&self.shared, timeout, |q| q.pop_front()) {
            Some(m) => m,
            None => panic!(
                "TestProbe: expected a message of type {} within {timeout:?}, but none came",
                type_name::<M>()
            ),
        }
    }

    /// The next message, which must equal `expected`.
    ///
    /// # Panics
    /// If none comes within `timeout`, or the next one differs.
    #[track_caller]
    pub fn expect_msg_eq(&self, expected: &M, timeout: Duration) -> M
    where
        M: PartialEq + Debug,
    {
        match self.inbox.wait(&self.shared, timeout, |q| q.pop_front()) {
            Some(m) if m == *expected => m,
            Some(m) => panic!("TestProbe: expected {expected:?}, but got {m:?}"),
            None => panic!("TestProbe: expected {expected:?} within {timeout:?}, but none came"),
        }
    }

    /// The next message, which must satisfy `pred`; `what` describes it for the
    /// failure message.
    ///
    /// # Panics
    /// If none comes within `timeout`, or the next one does not satisfy `pred`.
    #[track_caller]
    pub fn expect_msg_where(
        &self,
        what: &str,
        timeout: Duration,
        pred: impl FnOnce(&M) -> bool,
    ) -> M
    where
        M: Debug,
    {
        match self.inbox.wait(&self.shared, timeout, |q| q.pop_front()) {
            Some(m) if pred(&m) => m,
            Some(m) => panic!("TestProbe: expected a message that is {what}, but got {m:?}"),
            None => panic!(
                "TestProbe: expected a message that is {what} within {timeout:?}, but none came"
            ),
        }
    }

    /// The next `n` messages, within `timeout` in all.
    ///
    /// # Panics
    /// If fewer than `n` come in time.
    #[track_caller]
    pub fn receive_n(&self, n: usize, timeout: Duration) -> Vec<M> {
        let got = self.inbox.wait(&self.shared, timeout, |q| {
            (q.len() >= n).then(|| q.drain(..n).collect())
        });
        match got {
            Some(v) => v,
            None => panic!(
                "TestProbe: expected {n} messages of type {} within {timeout:?}, but only {} came",
                type_name::<M>(),
                self.inbox.len()
            ),
        }
    }

    /// Skips messages until one satisfies `pred`, and returns it; the skipped ones are
    /// dropped.
    ///
    /// # Panics
    /// If no such message comes within `timeout`.
    #[track_caller]
    pub fn fish_for(&self, timeout: Duration, mut pred: impl FnMut(&M) -> bool) -> M {
        let mut skipped = 0usize;
        let found = self.inbox.wait(&self.shared, timeout, |q| {
            while let Some(m) = q.pop_front() {
                if pred(&m) {
                    return Some(m);
                }
                skipped += 1;
            }
            None
        });
        match found {
            Some(m) => m,
            None => panic!(
                "TestProbe: fish_for found no matching message of type {} within {timeout:?} \
                 ({skipped} did not match)",
                type_name::<M>()
            ),
        }
    }

    /// Waits `duration` and checks that no message came meanwhile.
    ///
    /// # Panics
    /// If one did (or was already queued).
    #[track_caller]
    pub fn expect_no_msg(&self, duration: Duration)
    where
        M: Debug,
    {
        if let Some(m) = self.inbox.wait(&self.shared, duration, |q| q.pop_front()) {
            panic!("TestProbe: expected no message for {duration:?}, but got {m:?}");
        }
    }
}

/// The actor behind a [`TerminationProbe`].
#[derive(Debug)]
pub struct TerminationWatcher {
    inbox: Arc<Inbox<Terminated>>,
}

impl Actor for TerminationWatcher {}

impl Handler<Terminated> for TerminationWatcher {
    fn handle(&mut self, t: Terminated, _: &mut Context<Self>) {
        self.inbox.put(t);
    }
}

/// Runs a closure on the watcher's turn (to watch an actor of any type).
struct OnTurn(Box<dyn FnOnce(&mut WatcherContext) + Send>);

type WatcherContext = Context<TerminationWatcher>;

impl Message for OnTurn {
    type Reply = ();
}

impl Handler<OnTurn> for TerminationWatcher {
    fn handle(&mut self, f: OnTurn, cx: &mut Context<Self>) {
        (f.0)(cx);
    }
}

/// Watches an actor and asserts how it stopped.
///
/// ```
/// use std::time::Duration;
/// use odeon::{Actor, Context, Handler, Message, StopReason, System};
/// use odeon::testkit::TerminationProbe;
///
/// struct Fragile;
/// impl Actor for Fragile {}
/// struct Poke;
/// impl Message for Poke { type Reply = (); }
/// impl Handler<Poke> for Fragile {
///     fn handle(&mut self, _: Poke, _: &mut Context<Self>) { panic!("poked"); }
/// }
///
/// let system = System::new();
/// let fragile = system.spawn(Fragile);
/// let probe = TerminationProbe::new(&system.handle(), &fragile);
/// fragile.tell(Poke).unwrap();
/// let reason = probe.expect_terminated(Duration::from_secs(5));
/// assert_eq!(reason, StopReason::Panicked("poked".into()));
/// ```
pub struct TerminationProbe {
    target: ActorId,
    watcher: ActorRef<TerminationWatcher>,
    inbox: Arc<Inbox<Terminated>>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for TerminationProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TerminationProbe")
            .field("target", &self.target)
            .finish_non_exhaustive()
    }
}

impl TerminationProbe {
    /// Watches `target`. The probe does not keep it alive. A target that has already
    /// stopped is reported at once (with its reason).
    pub fn new<A: Actor>(system: &SystemHandle, target: &ActorRef<A>) -> Self {
        let inbox = Arc::new(Inbox::new());
        let watcher = system.spawn(TerminationWatcher {
            inbox: inbox.clone(),
        });
        // The ref is dropped once the watch is in place (a watch of an actor that
        // has stopped reports it at once), so the probe keeps nothing alive.
        let target_ref = target.clone();
        let watch = OnTurn(Box::new(move |cx| cx.watch(&target_ref)));
        if watcher.tell(watch).is_err() {
            unreachable!("a probe's watcher is alive while the probe holds it");
        }
        Self {
            target: target.id(),
            watcher,
            inbox,
            shared: system.shared.clone(),
        }
    }

    /// The watched actor's id.
    pub fn target(&self) -> ActorId {
        self.target
    }

    /// Waits up to `timeout` for the watched actor to stop; returns why it did.
    ///
    /// # Panics
    /// If it does not stop in time.
    #[track_caller]
    pub fn expect_terminated(&self, timeout: Duration) -> StopReason {
        match self.inbox.wait(&self.shared, timeout, |q| q.pop_front()) {
            Some(t) => t.reason,
            None => panic!(
                "TerminationProbe: expected actor {} to terminate within {timeout:?}, but it is \
                 still running",
                self.target
            ),
        }
    }

    /// Waits `duration` and checks that the watched actor did not stop meanwhile.
    ///
    /// # Panics
    /// If it did.
    #[track_caller]
    pub fn expect_no_termination(&self, duration: Duration) {
        if let Some(t) = self.inbox.wait(&self.shared, duration, |q| q.pop_front()) {
            panic!(
                "TerminationProbe: expected actor {} to keep running for {duration:?}, but it \
                 terminated: {}",
                self.target, t.reason
            );
        }
    }
}

impl Drop for TerminationProbe {
    fn drop(&mut self) {
        self.watcher.stop();
    }
}
