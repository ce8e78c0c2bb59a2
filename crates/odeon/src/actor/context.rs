//! What a handler can do besides changing its own state.

use std::fmt;
use std::mem::ManuallyDrop;
use std::ptr::NonNull;
use std::sync::Arc;
use std::time::Duration;

use crate::cell::{AnyCell, Cell, SpawnOptions, spawn};
use crate::mailbox::node::Header;
use crate::stream::{self, StreamHandle};
use crate::supervision::{Children, Supervisor, SupervisorSpec};
use crate::system::{ChildList, SystemHandle};
use crate::timer::{self, TimerHandle};
use crate::{
    Actor, ActorId, ActorRef, Handler, Handles, Message, StopReason, Terminated, WeakActorRef,
};

/// The actor's view of the runtime inside handlers and hooks: its own reference,
/// children, stopping, watching and linking, timers, stashing.
///
/// A door that queues visitors until it is unlocked, watches a child, and locks itself
/// again after a delay:
///
/// ```
/// use std::sync::mpsc;
/// use std::time::Duration;
/// use odeon::{Actor, Context, Handler, Message, System, Terminated};
///
/// struct Door { open: bool, log: mpsc::Sender<String> }
/// struct Visit(&'static str);
/// struct Unlock;
/// struct Lock;
/// impl Message for Visit { type Reply = (); }
/// impl Message for Unlock { type Reply = (); }
/// impl Message for Lock { type Reply = (); }
///
/// struct Bell;
/// impl Actor for Bell {}
///
/// impl Actor for Door {
///     fn started(&mut self, cx: &mut Context<Self>) {
///         let bell = cx.spawn(Bell);   // a child: stopped when the door stops
///         cx.watch(&bell);             // a `Terminated` arrives when it stops
///         bell.stop();
///     }
/// }
/// impl Handler<Visit> for Door {
///     fn handle(&mut self, v: Visit, cx: &mut Context<Self>) {
///         if self.open {
///             let _ = self.log.send(format!("welcome {}", v.0));
///         } else {
///             cx.stash(v);             // kept aside, in order, until unstashed
///         }
///     }
/// }
/// impl Handler<Unlock> for Door {
///     fn handle(&mut self, _: Unlock, cx: &mut Context<Self>) {
///         self.open = true;
///         cx.unstash_all();            // stashed visits come next, before the mailbox
///         cx.send_after(Duration::from_millis(5), Lock);
///     }
/// }
/// impl Handler<Lock> for Door {
///     fn handle(&mut self, _: Lock, cx: &mut Context<Self>) {
///         self.open = false;
///         let _ = self.log.send("locked".into());
///         cx.stop();
///     }
/// }
/// impl Handler<Terminated> for Door {
///     fn handle(&mut self, t: Terminated, _: &mut Context<Self>) {
///         let _ = self.log.send(format!("bell: {}", t.reason));
///     }
/// }
///
/// let system = System::new();
/// let (tx, log) = mpsc::channel();
/// let door = system.spawn(Door { open: false, log: tx });
/// door.tell(Visit("ann")).unwrap();
/// door.tell(Visit("bob")).unwrap();
/// door.tell(Unlock).unwrap();
/// system.run_until_quiescent();        // waits for the timer too
/// let seen: Vec<String> = log.try_iter().collect();
/// // The bell stops on another worker, so its notice may come at any point...
/// assert!(seen.contains(&"bell: stopped normally".to_string()));
/// // ...while the door's own messages keep their order.
/// let door_events: Vec<&String> = seen.iter().filter(|e| !e.starts_with("bell")).collect();
/// assert_eq!(door_events, ["welcome ann", "welcome bob", "locked"]);
/// ```
pub struct Context<A: Actor> {
    cell: Option<NonNull<Cell<A>>>,
    /// What the handler asked to happen between this message and the next (stop, move):
    /// one pointer, so the turn's check after each message stays one load and test.
    between: Option<Box<Between>>,
    more: Option<Box<More<A>>>,
}

/// Requests a handler leaves for the turn to act on after the current message.
#[derive(Default)]
pub(crate) struct Between {
    pub(crate) stop: Option<StopReason>,
    /// A move (`cell/migrate.rs`). A stop wins over it.
    pub(crate) mv: Option<crate::cell::MoveGuard>,
    /// A supervisor's restart built fresh state: run its `on_start` before the next
    /// message (`cell/start.rs`).
    pub(crate) start: bool,
}

/// The rarely used parts, allocated on first use to keep idle actors small.
pub(crate) struct More<A: Actor> {
    children: ChildList,
    timers: Vec<TimerHandle>,
    streams: Vec<StreamHandle>,
    stash: Vec<NonNull<Header<A>>>,
    /// Links to actors on other nodes, and the key of the watcher on this actor that
    /// reports its failure to them.
    remote_links: Vec<(Arc<dyn crate::remote::Endpoint>, ActorId)>,
    /// Why the last move failed, until `migration_failed` has seen it.
    pub(crate) move_error: Option<Box<dyn std::error::Error + Send + Sync>>,
}

// SAFETY: a context is only used on its actor's turn, which may move between threads;
// the node pointers it stashes are owned messages of `Send` types.
unsafe impl<A: Actor> Send for Context<A> {}

impl<A: Actor> fmt::Debug for Context<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("id", &self.id())
            .finish_non_exhaustive()
    }
}

impl<A: Actor> Context<A> {
    pub(crate) fn detached() -> Self {
        Self {
            cell: None,
            between: None,
            more: None,
        }
    }

    pub(crate) fn attach(&mut self, cell: NonNull<Cell<A>>) {
        self.cell = Some(cell);
    }

    fn cell(&self) -> &Cell<A> {
        match self.cell {
            // SAFETY: the context lives inside its cell, so the cell outlives it.
            Some(p) => unsafe { p.as_ref() },
            None => unreachable!("context used before its cell was attached"),
        }
    }

    /// A new `Arc` to the cell (memory only: does not count as a strong reference).
    pub(crate) fn cell_arc(&self) -> Arc<Cell<A>> {
        let ptr: *const Cell<A> = self.cell().raw().as_ptr();
        // SAFETY: cells are always created inside an `Arc` (`cell::spawn`) and alive
        // while their context is used.
        unsafe {
            Arc::increment_strong_count(ptr);
            Arc::from_raw(ptr)
        }
    }

    pub(crate) fn more(&mut self) -> &mut More<A> {
        self.more.get_or_insert_with(|| {
            Box::new(More {
                children: ChildList::default(),
                timers: Vec::new(),
                streams: Vec::new(),
                stash: Vec::new(),
                remote_links: Vec::new(),
                move_error: None,
            })
        })
    }

    /// This actor's id.
    pub fn id(&self) -> ActorId {
        self.cell().id()
    }

    /// A strong reference to this actor. Holding it in the actor's own state keeps the
    /// actor from ever being collected.
    pub fn myself(&self) -> ActorRef<A> {
        let ptr: *const Cell<A> = self.cell().raw().as_ptr();
        // SAFETY: cells are always created inside an `Arc` (`cell::spawn`), and the
        // runtime's own count keeps this one alive while its actor runs. The `Arc` made
        // here only lends the pointer to `new_ref` (which takes whatever count the new
        // ref needs) and is never dropped.
        let cell = ManuallyDrop::new(unsafe { Arc::from_raw(ptr) });
        ActorRef::new_ref(&cell)
    }

    /// A weak reference to this actor.
    pub fn weak(&self) -> WeakActorRef<A> {
        self.myself().downgrade()
    }

    /// A handle to the system, to spawn top-level actors.
    pub fn system(&self) -> SystemHandle {
        SystemHandle {
            shared: self.cell().shared().clone(),
        }
    }

    /// Stops this actor once the current message is handled (for an async handler: once
    /// its future completes).
    pub fn stop(&mut self) {
        self.stop_with(StopReason::Normal);
    }

    pub(crate) fn stop_with(&mut self, reason: StopReason) {
        self.between.get_or_insert_with(Default::default).stop = Some(reason);
    }

    /// Fails this actor once the current message is handled: it stops with
    /// [`StopReason::Failed`] carrying `error`'s text, which counts as a failure
    /// ([`StopReason::is_failure`]). Watchers see that reason, links propagate it, and a
    /// supervisor restarts the actor exactly as after a panic (see
    /// [`Restart`](crate::Restart)). The reply to the current message, if any, is sent
    /// as usual.
    ///
    /// This is how a handler fails without panicking, which is the only way under
    /// `panic = "abort"` (see [`Supervisor`]). A later [`Context::stop`] or `fail` in the
    /// same handler replaces the request.
    ///
    /// ```
    /// use odeon::{Actor, Context, Handler, Message, Strategy, SupervisorSpec, System};
    ///
    /// #[derive(Default)]
    /// struct Parser { parsed: u32 }
    /// impl Actor for Parser {}
    /// struct Parse(&'static str);
    /// impl Message for Parse { type Reply = Option<u32>; }
    /// impl Handler<Parse> for Parser {
    ///     fn handle(&mut self, msg: Parse, cx: &mut Context<Self>) -> Option<u32> {
    ///         match msg.0.parse::<u32>() {
    ///             Ok(n) => { self.parsed += 1; Some(n) }
    ///             Err(e) => { cx.fail(format!("bad input {:?}: {e}", msg.0)); None }
    ///         }
    ///     }
    /// }
    /// struct Parsed;
    /// impl Message for Parsed { type Reply = u32; }
    /// impl Handler<Parsed> for Parser {
    ///     fn handle(&mut self, _: Parsed, _: &mut Context<Self>) -> u32 { self.parsed }
    /// }
    ///
    /// let system = System::new();
    /// let (_sup, parser) = system.supervise(SupervisorSpec::new(Strategy::OneForOne), |c| {
    ///     c.spawn(Parser::default)
    /// });
    /// assert_eq!(system.block_on(parser.ask(Parse("7"))).unwrap(), Some(7));
    /// assert_eq!(system.block_on(parser.ask(Parse("x"))).unwrap(), None); // then fails
    /// // Restarted with fresh state, through the same ref.
    /// assert_eq!(system.block_on(parser.ask(Parsed)).unwrap(), 0);
    /// ```
    pub fn fail(&mut self, error: impl fmt::Display) {
        self.stop_with(StopReason::Failed(error.to_string()));
    }

    /// Whether a stop (or kill) of this actor was requested from outside and not yet
    /// acted on.
    pub(crate) fn stop_requested(&self) -> bool {
        self.cell().stop_requested()
    }

    /// Asks the turn to run `on_start` before the next message (after a restart).
    pub(crate) fn request_start(&mut self) {
        self.between.get_or_insert_with(Default::default).start = true;
    }

    /// Records a move for the turn to take after the current message; a second call
    /// replaces (and refuses) the first.
    pub(crate) fn set_move(&mut self, mv: crate::cell::MoveGuard) {
        let old = self
            .between
            .get_or_insert_with(Default::default)
            .mv
            .replace(mv);
        if let Some(old) = old {
            old.refuse(crate::remote::NotFrozen::Replaced);
        }
    }

    /// What the handler asked for, if anything. The turn asks after every message.
    #[inline]
    pub(crate) fn take_between(&mut self) -> Option<Box<Between>> {
        // Read before writing: an unconditional `take` would write the context's line
        // after every message (see `Cell`'s layout).
        self.between.as_ref()?;
        self.between.take()
    }

    /// Whether a handler asked for a stop or a move (a reservation then ends, `sharing/`).
    pub(crate) fn has_between(&self) -> bool {
        self.between.is_some()
    }

    /// Drops a requested stop or move (a panic overrides both; a dropped move request
    /// is refused by its guard).
    pub(crate) fn clear_between(&mut self) {
        self.between = None;
    }

    /// Whether the actor has children that have not stopped (a move is refused then).
    pub(crate) fn has_live_children(&self) -> bool {
        self.more.as_ref().is_some_and(|m| m.children.any_alive())
    }

    /// The stash, taken out (a freeze moves it into the snapshot).
    pub(crate) fn take_stash(&mut self) -> Vec<NonNull<Header<A>>> {
        self.more
            .as_mut()
            .map(|m| std::mem::take(&mut m.stash))
            .unwrap_or_default()
    }

    /// Puts a stash back (a move was aborted).
    pub(crate) fn restore_stash(&mut self, stash: Vec<NonNull<Header<A>>>) {
        if !stash.is_empty() {
            self.more().stash = stash;
        }
    }

    /// Spawns a child: it is stopped when this actor stops. Like a top-level actor it
    /// is also collected (stopped) once its last strong reference is dropped and its
    /// mailbox is empty (see [`SystemHandle::spawn`]), unless spawned with
    /// [`SpawnOptions::keep_alive`].
    #[must_use = "an actor is stopped (collected) once its last ActorRef is dropped and its mailbox is empty; keep the ref, or spawn it with SpawnOptions::keep_alive()"]
    pub fn spawn<B: Actor>(&mut self, actor: B) -> ActorRef<B> {
        self.spawn_with(actor, SpawnOptions::default())
    }

    /// Spawns a child with options (collection: see [`Context::spawn`]).
    #[must_use = "an actor is stopped (collected) once its last ActorRef is dropped and its mailbox is empty; keep the ref, or spawn it with SpawnOptions::keep_alive()"]
    pub fn spawn_with<B: Actor>(&mut self, actor: B, opts: SpawnOptions) -> ActorRef<B> {
        let cell = spawn(self.cell().shared(), actor, opts, None);
        self.more().children.push(cell.clone());
        ActorRef::from_cell(cell)
    }

    /// Starts a supervisor as a child of this actor (stopped when this actor stops);
    /// `children` spawns its children and may add sub-supervisors with
    /// [`Children::supervise`] to build a tree.
    pub fn supervise<T>(
        &mut self,
        spec: SupervisorSpec,
        children: impl FnOnce(&mut Children) -> T,
    ) -> (ActorRef<Supervisor>, T) {
        let (sup, out) = crate::supervision::start(self.cell().shared(), spec, children);
        self.more().children.push(sup.cell().clone());
        (sup, out)
    }

    /// Stops the children, or kills them if this actor is being killed.
    pub(crate) fn stop_children(&mut self, kill: bool) {
        if let Some(m) = self.more.as_mut() {
            m.children.stop_all(&StopReason::ParentStopped, kill);
        }
    }

    /// Whether this actor is being killed rather than stopped (its supervised children
    /// are then killed too).
    pub(crate) fn is_killed(&self) -> bool {
        self.cell().is_killed()
    }

    /// Delivers a [`Terminated`] to this actor when `other` stops (at once if it already
    /// has). For an actor on another node, losing that node counts as its stop
    /// ([`StopReason::NodeLost`]).
    pub fn watch<B: Actor>(&mut self, other: &ActorRef<B>)
    where
        A: Handler<Terminated>,
    {
        let me = self.cell_arc();
        // A notice, not a tell: a full bounded mailbox must not lose it (guarantee 7).
        let notify: Box<dyn FnOnce(Terminated) + Send> = Box::new(move |t| me.send_notice(t));
        match other.local() {
            Some(cell) => cell.add_watcher(self.id(), notify),
            None => {
                if let Some(ep) = other.endpoint() {
                    ep.watch(self.id(), notify);
                }
            }
        }
    }

    /// Stops watching `other`.
    pub fn unwatch<B: Actor>(&mut self, other: &ActorRef<B>) {
        match other.local() {
            Some(cell) => cell.remove_watcher(self.id()),
            None => {
                if let Some(ep) = other.endpoint() {
                    ep.unwatch(self.id());
                }
            }
        }
    }

    /// Links this actor with `other`: when either fails (see
    /// [`StopReason::is_failure`]), the other stops with [`StopReason::LinkFailed`].
    /// With an actor on another node, losing that node counts as its failure, and this
    /// node's loss as this actor's.
    pub fn link<B: Actor>(&mut self, other: &ActorRef<B>) {
        let me: Arc<dyn AnyCell> = self.cell_arc();
        let Some(peer) = other.cell_any() else {
            if let Some(ep) = other.endpoint() {
                self.link_remote(me, ep.clone());
            }
            return;
        };
        match peer.add_link(me.clone()) {
            Ok(()) => {
                if me.add_link(peer.clone()).is_err() {
                    peer.remove_link(me.id());
                }
            }
            Err(reason) if reason.is_failure() => {
                self.stop_with(StopReason::LinkFailed(peer.id()));
            }
            Err(_) => {}
        }
    }

    /// A link across nodes: each side watches the other's failure.
    fn link_remote(&mut self, me: Arc<dyn AnyCell>, ep: Arc<dyn crate::remote::Endpoint>) {
        let (my_id, peer_id) = (self.id(), ep.id());
        // Its failure (or its node's loss) stops this actor.
        ep.watch(
            my_id,
            Box::new(move |t| {
                if t.reason.is_failure() {
                    me.request_stop(StopReason::LinkFailed(peer_id));
                }
            }),
        );
        // This actor's failure stops it; its node also stops it if this node is lost.
        ep.link(my_id);
        let key = ActorId::next();
        let notify = ep.clone();
        self.cell().add_watcher(
            key,
            Box::new(move |t| {
                if t.reason.is_failure() {
                    notify.link_failed(my_id);
                }
            }),
        );
        self.more().remote_links.push((ep, key));
    }

    /// Removes a link made by [`Context::link`].
    pub fn unlink<B: Actor>(&mut self, other: &ActorRef<B>) {
        match other.local() {
            Some(cell) => cell.remove_link(self.id()),
            None => {
                if let Some(ep) = other.endpoint() {
                    ep.unwatch(self.id());
                    ep.unlink(self.id());
                    let address = ep.address();
                    let mut keys = Vec::new();
                    if let Some(m) = self.more.as_mut() {
                        m.remote_links.retain(|(e, key)| {
                            let same = e.address() == address;
                            if same {
                                keys.push(*key);
                            }
                            !same
                        });
                    }
                    for key in keys {
                        self.cell().remove_watcher(key);
                    }
                }
            }
        }
        self.cell().remove_link(other.id());
    }

    /// Sends `msg` to this actor after `delay`. The pending timer keeps the actor alive;
    /// it is cancelled when the actor stops.
    pub fn send_after<M, K>(&mut self, delay: Duration, msg: M) -> TimerHandle
    where
        M: Message,
        A: Handles<M, K>,
        K: 'static,
    {
        let h = timer::send_after(self.cell().shared(), self.myself(), delay, msg);
        self.track_timer(h.clone());
        h
    }

    /// Sends a clone of `msg` to this actor every `period`, first after one period,
    /// until cancelled or the actor stops. The timer keeps the actor alive.
    pub fn send_interval<M, K>(&mut self, period: Duration, msg: M) -> TimerHandle
    where
        M: Message + Clone,
        A: Handles<M, K>,
        K: 'static,
    {
        let h = timer::send_interval(self.cell().shared(), self.myself(), period, msg);
        self.track_timer(h.clone());
        h
    }

    fn track_timer(&mut self, h: TimerHandle) {
        let timers = &mut self.more().timers;
        if timers.len() >= 16 {
            timers.retain(|t| !t.is_finished());
        }
        timers.push(h);
    }

    /// Cancels the timers and streams (the actor stops or moves: neither follows it).
    pub(crate) fn cancel_timers(&mut self) {
        if let Some(m) = self.more.as_mut() {
            for t in m.timers.drain(..) {
                t.cancel();
            }
            for s in m.streams.drain(..) {
                s.cancel();
            }
        }
    }

    /// Feeds this actor from `stream`: each item is sent to it as a message, in the
    /// stream's order, until the stream ends, [`StreamHandle::cancel`] is called, or the
    /// actor stops (the stream is then dropped). Items go through
    /// [`ActorRef::send`]: a full bounded mailbox makes the stream wait for room
    /// (backpressure), and no item is dropped. The stream is polled on the system's
    /// tokio runtime ([`SystemBuilder::io_handle`](crate::SystemBuilder::io_handle)),
    /// so it may use tokio timers and I/O.
    ///
    /// Like a timer, a running stream holds a strong reference (the actor is not
    /// collected while it runs) and counts as work in flight for
    /// [`System::run_until_quiescent`](crate::System::run_until_quiescent): a stream
    /// that never ends keeps the system from quiescence until it is cancelled. Streams
    /// do not follow an actor that moves to another node.
    ///
    /// To learn that the stream ended (actix's `StreamHandler::finished`), map its
    /// items into a message type that also has an end marker, and chain the marker:
    ///
    /// ```
    /// use futures_util::stream::{self, StreamExt};
    /// use odeon::{Actor, Context, Handler, Message, System};
    ///
    /// enum Line { Text(String), End }
    /// impl Message for Line { type Reply = (); }
    ///
    /// struct Reader { lines: Vec<String>, done: std::sync::mpsc::Sender<Vec<String>> }
    /// impl Actor for Reader {
    ///     fn started(&mut self, cx: &mut Context<Self>) {
    ///         let lines = stream::iter(["a", "b", "c"]).map(|s| Line::Text(s.into()));
    ///         cx.add_stream(lines.chain(stream::once(async { Line::End })));
    ///     }
    /// }
    /// impl Handler<Line> for Reader {
    ///     fn handle(&mut self, line: Line, cx: &mut Context<Self>) {
    ///         match line {
    ///             Line::Text(t) => self.lines.push(t),
    ///             Line::End => {
    ///                 let _ = self.done.send(std::mem::take(&mut self.lines));
    ///                 cx.stop();
    ///             }
    ///         }
    ///     }
    /// }
    ///
    /// let system = System::new();
    /// let (done, lines) = std::sync::mpsc::channel();
    /// let _reader = system.spawn(Reader { lines: Vec::new(), done });
    /// assert_eq!(lines.recv().unwrap(), ["a", "b", "c"]);
    /// ```
    pub fn add_stream<M, K>(
        &mut self,
        stream: impl futures_core::Stream<Item = M> + Send + 'static,
    ) -> StreamHandle
    where
        M: Message,
        A: Handles<M, K>,
        K: 'static,
    {
        let h = stream::add_stream(self.cell().shared(), self.myself(), stream);
        let streams = &mut self.more().streams;
        if streams.len() >= 16 {
            streams.retain(|s| !s.is_finished());
        }
        streams.push(h.clone());
        h
    }

    /// Puts `msg` aside; [`Context::unstash_all`] puts stashed messages back in front of
    /// the mailbox, in the order they were stashed.
    pub fn stash<M, K>(&mut self, msg: M)
    where
        M: Message,
        A: Handles<M, K>,
    {
        let node = Cell::<A>::make_node::<M, K>(msg);
        self.more().stash.push(node);
    }

    /// Number of stashed messages.
    pub fn stashed(&self) -> usize {
        self.more.as_ref().map_or(0, |m| m.stash.len())
    }

    /// Makes every stashed message the next to be handled, before the mailbox.
    pub fn unstash_all(&mut self) {
        let Some(m) = self.more.as_mut() else { return };
        let nodes = std::mem::take(&mut m.stash);
        // SAFETY: called from a handler, i.e. on the actor's turn, and the turn holds no
        // borrow of `life` while a handler runs.
        let life = unsafe { self.cell().life() };
        for node in nodes.into_iter().rev() {
            life.held.push_front(node);
        }
    }

    pub(crate) fn discard_stash(&mut self) {
        if let Some(m) = self.more.as_mut() {
            for node in m.stash.drain(..) {
                // SAFETY: stashed nodes are owned by the context and of this actor type.
                unsafe { (Header::vtable(node).discard)(node) };
            }
        }
    }

    /// Sends `msg` to this actor, behind everything already in its mailbox (actix's
    /// `notify`). Unlike `myself().tell(..)` it takes no reference, so it never keeps
    /// the actor alive. A bounded mailbox bounds these messages too: when it is full
    /// the message comes back in [`TellError::Full`](crate::TellError::Full).
    ///
    /// ```
    /// use odeon::{Actor, Context, Handler, Message, System};
    ///
    /// struct Countdown(u32);
    /// impl Actor for Countdown {}
    /// struct Step;
    /// impl Message for Step { type Reply = (); }
    /// impl Handler<Step> for Countdown {
    ///     fn handle(&mut self, _: Step, cx: &mut Context<Self>) {
    ///         self.0 -= 1;
    ///         if self.0 > 0 {
    ///             cx.notify(Step).unwrap(); // one step per message: others interleave
    ///         } else {
    ///             cx.stop();
    ///         }
    ///     }
    /// }
    ///
    /// let system = System::new();
    /// let countdown = system.spawn(Countdown(3));
    /// countdown.tell(Step).unwrap();
    /// assert!(system.block_on(countdown.wait_stopped()) == odeon::StopReason::Normal);
    /// ```
    pub fn notify<M, K>(&mut self, msg: M) -> Result<(), crate::TellError<M>>
    where
        M: Message,
        A: Handles<M, K>,
    {
        self.cell().send::<M, K>(msg, None)
    }

    /// The old name of [`Context::notify`].
    #[deprecated(note = "renamed to notify")]
    pub fn defer<M, K>(&mut self, msg: M) -> Result<(), crate::TellError<M>>
    where
        M: Message,
        A: Handles<M, K>,
    {
        self.notify(msg)
    }

    /// This actor's name, if it was spawned with one
    /// ([`SpawnOptions::name`](crate::SpawnOptions::name)).
    pub fn name(&self) -> Option<&str> {
        self.cell().name()
    }
}
