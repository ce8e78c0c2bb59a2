//! The documented lifecycle, checked as a user reads it: `Context::stop`/`fail`
//! precedence, `kill` keeping an earlier stop's reason, links and kills, timers and
//! streams after a stop, weak refs and recipients of a stopped actor, the registry's
//! `unregister` answer, `wait_quiescent` with a limit, `live_actors`.
//! (Each claim is quoted from the rustdoc it checks.)

use std::sync::mpsc;
use std::time::Duration;

use futures_util::stream;
use odeon::{
    Actor, ActorRef, AskError, AsyncHandler, Context, Handler, Message, StopReason, StreamHandle,
    System, TellError, Terminated, TimerHandle,
};

const HANG_GUARD: Duration = Duration::from_secs(20);

fn small_system() -> System {
    System::builder().workers(2).build()
}

fn wait_stopped<A: Actor>(system: &System, actor: &ActorRef<A>) -> StopReason {
    let done = actor.wait_stopped();
    system.block_on(async {
        tokio::time::timeout(HANG_GUARD, done)
            .await
            .expect("the actor stopped in time")
    })
}

/// Does what its message says, in one handler.
#[derive(Default)]
struct Doer;
impl Actor for Doer {}

enum Do {
    FailThenStop,
    StopThenFail,
    FailAndReply,
}
impl Message for Do {
    type Reply = u32;
}
impl Handler<Do> for Doer {
    fn handle(&mut self, msg: Do, cx: &mut Context<Self>) -> u32 {
        match msg {
            Do::FailThenStop => {
                cx.fail("first");
                cx.stop();
            }
            Do::StopThenFail => {
                cx.stop();
                cx.fail("second");
            }
            Do::FailAndReply => cx.fail("bad input"),
        }
        7
    }
}

/// "A later [`Context::stop`] or `fail` in the same handler replaces the request."
#[test]
fn a_later_stop_or_fail_in_the_same_handler_replaces_the_earlier_request() {
    let system = small_system();
    let a = system.spawn(Doer);
    a.tell(Do::FailThenStop).unwrap();
    assert_eq!(wait_stopped(&system, &a), StopReason::Normal);

    let b = system.spawn(Doer);
    b.tell(Do::StopThenFail).unwrap();
    assert_eq!(
        wait_stopped(&system, &b),
        StopReason::Failed("second".into())
    );
    system.shutdown();
}

/// "The reply to the current message, if any, is sent as usual."
#[test]
fn cx_fail_still_sends_the_reply_to_the_current_ask() {
    let system = small_system();
    let a = system.spawn(Doer);
    assert_eq!(system.block_on(a.ask(Do::FailAndReply)), Ok(7));
    let reason = wait_stopped(&system, &a);
    assert_eq!(reason, StopReason::Failed("bad input".into()));
    assert!(reason.is_failure());
    system.shutdown();
}

/// Awaits a gate in an async handler.
struct Waiter;
impl Actor for Waiter {}
struct Park(tokio::sync::oneshot::Receiver<()>, mpsc::Sender<()>);
impl Message for Park {
    type Reply = ();
}
impl AsyncHandler<Park> for Waiter {
    async fn handle(&mut self, msg: Park, _: &mut Context<Self>) {
        let _ = msg.1.send(());
        let _ = msg.0.await;
    }
}

/// `ActorRef::kill`: "The reason is [`StopReason::Killed`], unless a stop was
/// requested before (its reason is kept)."
#[test]
fn a_kill_after_a_stop_keeps_the_stops_reason() {
    let system = small_system();
    let w = system.spawn(Waiter);
    let (_gate, gate_rx) = tokio::sync::oneshot::channel();
    let (entered_tx, entered) = mpsc::channel();
    let ask = w.ask(Park(gate_rx, entered_tx)).timeout(HANG_GUARD);
    entered.recv_timeout(HANG_GUARD).expect("the handler runs");
    w.stop();
    w.kill();
    assert_eq!(wait_stopped(&system, &w), StopReason::Normal);
    // The kill still cancelled the awaiting handler: no reply.
    assert_eq!(system.block_on(ask), Err(AskError::Stopped));
    system.shutdown();
}

/// Watches and links a peer, reporting what it sees.
struct Linker {
    peer: ActorRef<Waiter>,
    seen: mpsc::Sender<StopReason>,
}
impl Actor for Linker {
    fn started(&mut self, cx: &mut Context<Self>) {
        cx.link(&self.peer);
        cx.watch(&self.peer);
    }
}
impl Handler<Terminated> for Linker {
    fn handle(&mut self, t: Terminated, _: &mut Context<Self>) {
        let _ = self.seen.send(t.reason);
    }
}
struct Ready;
impl Message for Ready {
    type Reply = ();
}
impl Handler<Ready> for Linker {
    fn handle(&mut self, _: Ready, _: &mut Context<Self>) {}
}

/// `StopReason::Killed`: "Not a failure, like [`StopReason::Normal`]" — and links
/// propagate failures only, so a killed actor's linked peer lives on.
#[test]
fn killing_an_actor_does_not_stop_its_linked_peer() {
    let system = small_system();
    let peer = system.spawn(Waiter);
    let (tx, seen) = mpsc::channel();
    let linker = system.spawn(Linker {
        peer: peer.clone(),
        seen: tx,
    });
    system.block_on(linker.ask(Ready)).unwrap(); // link and watch in place
    peer.kill();
    assert_eq!(
        seen.recv_timeout(HANG_GUARD).expect("the watcher is told"),
        StopReason::Killed
    );
    assert!(!StopReason::Killed.is_failure());
    // Still alive after the notice: it answers.
    assert_eq!(system.block_on(linker.ask(Ready)), Ok(()));
    assert!(linker.is_alive());
    system.shutdown();
}

/// Arms a timer and opens an endless stream, handing back their handles.
struct Armed;
impl Actor for Armed {}
#[derive(Clone)]
struct Tick;
impl Message for Tick {
    type Reply = ();
}
impl Handler<Tick> for Armed {
    fn handle(&mut self, _: Tick, _: &mut Context<Self>) {}
}
struct Arm;
impl Message for Arm {
    type Reply = (TimerHandle, TimerHandle, StreamHandle);
}
impl Handler<Arm> for Armed {
    fn handle(
        &mut self,
        _: Arm,
        cx: &mut Context<Self>,
    ) -> (TimerHandle, TimerHandle, StreamHandle) {
        let once = cx.send_after(Duration::from_secs(3600), Tick);
        let every = cx.send_interval(Duration::from_millis(1), Tick);
        let endless = cx.add_stream(stream::repeat_with(|| Tick));
        (once, every, endless)
    }
}

/// `send_after`: "it is cancelled when the actor stops"; `send_interval`: "until
/// cancelled or the actor stops"; `add_stream`: "until ... the actor stops (the
/// stream is then dropped)", and `StreamHandle::is_finished` says so.
#[test]
fn timers_and_streams_end_when_their_actor_stops() {
    let system = small_system();
    let a = system.spawn(Armed);
    let (once, every, endless) = system.block_on(a.ask(Arm)).unwrap();
    assert!(!once.is_finished());
    assert!(!every.is_finished());
    a.stop();
    assert_eq!(wait_stopped(&system, &a), StopReason::Normal);
    assert!(
        system.wait_quiescent(Some(HANG_GUARD)),
        "the stopped actor's timers and stream no longer count as work"
    );
    assert!(once.is_finished(), "the one-hour timer was cancelled");
    assert!(every.is_finished(), "the interval was cancelled");
    assert!(endless.is_finished(), "the stream was dropped");
    system.shutdown();
}

/// `StreamHandle::is_finished`: "Whether the stream ended".
#[test]
fn a_finite_streams_handle_reports_it_finished_once_it_ended() {
    struct Sink(mpsc::Sender<u32>);
    impl Actor for Sink {}
    struct Item(u32);
    impl Message for Item {
        type Reply = ();
    }
    impl Handler<Item> for Sink {
        fn handle(&mut self, m: Item, _: &mut Context<Self>) {
            let _ = self.0.send(m.0);
        }
    }
    struct Feed;
    impl Message for Feed {
        type Reply = StreamHandle;
    }
    impl Handler<Feed> for Sink {
        fn handle(&mut self, _: Feed, cx: &mut Context<Self>) -> StreamHandle {
            cx.add_stream(stream::iter((1..=3).map(Item)))
        }
    }

    let system = small_system();
    let (tx, got) = mpsc::channel();
    let sink = system.spawn(Sink(tx));
    let handle = system.block_on(sink.ask(Feed)).unwrap();
    let items: Vec<u32> = (0..3)
        .map(|_| got.recv_timeout(HANG_GUARD).unwrap())
        .collect();
    assert_eq!(items, [1, 2, 3]);
    assert!(system.wait_quiescent(Some(HANG_GUARD)));
    assert!(handle.is_finished());
    assert!(sink.is_alive(), "a stream ending does not stop its actor");
    system.shutdown();
}

/// `wait_quiescent`: "returns whether quiescence was reached" — an armed interval
/// keeps a system from quiescence, so a short limit gives `false`; once cancelled,
/// `true`.
#[test]
fn wait_quiescent_reports_false_while_an_interval_runs_and_true_after_cancel() {
    let system = small_system();
    let a = system.spawn(Armed);
    let (once, every, endless) = system.block_on(a.ask(Arm)).unwrap();
    endless.cancel();
    assert!(!system.wait_quiescent(Some(Duration::from_millis(50))));
    once.cancel();
    every.cancel();
    assert!(system.wait_quiescent(Some(HANG_GUARD)));
    assert!(
        a.is_alive(),
        "cancelling its timers does not stop the actor"
    );
    system.shutdown();
}

/// `StreamHandle::cancel`: "Stops forwarding: items not yet sent will not be" — also
/// for a stream that is always ready, feeding an unbounded mailbox (the forwarding
/// task never has to wait). Before the fix it was never cancelled: the task did not
/// yield, so its abort was never seen, and the system never became quiescent.
#[test]
fn cancel_stops_a_stream_that_is_always_ready() {
    struct Flooded;
    impl Actor for Flooded {}
    impl Handler<Tick> for Flooded {
        fn handle(&mut self, _: Tick, _: &mut Context<Self>) {}
    }
    struct Open;
    impl Message for Open {
        type Reply = StreamHandle;
    }
    impl Handler<Open> for Flooded {
        fn handle(&mut self, _: Open, cx: &mut Context<Self>) -> StreamHandle {
            cx.add_stream(stream::repeat_with(|| Tick))
        }
    }

    let system = small_system();
    let a = system.spawn(Flooded);
    let endless = system.block_on(a.ask(Open)).unwrap();
    std::thread::sleep(Duration::from_millis(5));
    endless.cancel();
    assert!(
        system.wait_quiescent(Some(HANG_GUARD)),
        "the cancelled stream stopped feeding the actor"
    );
    assert!(endless.is_finished());
    assert!(a.is_alive());
    system.shutdown();
}

/// `WeakActorRef::upgrade`: "A strong reference, if the actor has not stopped";
/// a `Recipient` of a stopped actor refuses with `Stopped`.
#[test]
fn weak_refs_and_recipients_of_a_stopped_actor_are_dead() {
    let system = small_system();
    let a = system.spawn(Armed);
    let weak = a.downgrade();
    let tick = a.recipient::<Tick, _>();
    assert!(weak.upgrade().is_some() && tick.is_alive());
    assert_eq!(weak.id(), a.id());
    assert_eq!(tick.id(), a.id());
    a.stop();
    wait_stopped(&system, &a);
    assert!(weak.upgrade().is_none());
    assert!(!tick.is_alive());
    assert!(matches!(tick.tell(Tick), Err(TellError::Stopped(Tick))));
    assert_eq!(system.block_on(tick.ask(Tick)), Err(AskError::Stopped));
    system.shutdown();
}

/// `unregister`: "Frees `name`. Returns whether a live actor held it." And
/// `registered_names`: "The names held by live actors, sorted."
#[test]
fn unregister_says_whether_a_live_actor_held_the_name() {
    let system = small_system();
    let a = system.spawn(Armed);
    let b = system.spawn(Armed);
    system.register("zeta", &a).unwrap();
    system.register("alpha", &b).unwrap();
    assert_eq!(system.registered_names(), ["alpha", "zeta"]);

    assert!(system.unregister("zeta"));
    assert!(!system.unregister("zeta"), "already free");
    assert!(!system.unregister("never-registered"));
    assert!(system.lookup::<Armed>("zeta").is_none());
    // Free again: anyone may take it, the same actor too.
    system.register("zeta", &a).unwrap();
    assert_eq!(system.lookup::<Armed>("zeta").map(|r| r.id()), Some(a.id()));

    b.stop();
    wait_stopped(&system, &b);
    assert!(
        !system.unregister("alpha"),
        "a stopped actor no longer holds its name"
    );
    assert_eq!(system.registered_names(), ["zeta"]);
    system.shutdown();
}

/// `live_actors`: "Number of actors spawned and not yet stopped."
#[test]
fn live_actors_counts_spawned_actors_until_they_stop() {
    let system = small_system();
    let before = system.live_actors();
    let a = system.spawn(Armed);
    let b = system.spawn(Armed);
    assert_eq!(system.live_actors(), before + 2);
    a.stop();
    wait_stopped(&system, &a);
    assert_eq!(system.live_actors(), before + 1);
    drop(b);
    assert!(system.wait_quiescent(Some(HANG_GUARD)));
    assert_eq!(system.live_actors(), before);
    system.shutdown();
}

/// `System::shutdown`: "It never panics" — with the largest shutdown timeout too; and
/// `wait_quiescent` takes the largest limit.
#[test]
fn the_largest_shutdown_timeout_and_quiescence_limit_do_not_panic() {
    let system = System::builder()
        .workers(2)
        .shutdown_timeout(Duration::MAX)
        .build();
    let a = system.spawn(Doer);
    assert_eq!(system.block_on(a.ask(Do::FailAndReply)), Ok(7));
    assert!(system.wait_quiescent(Some(Duration::MAX)));
    assert!(system.shutdown());
}
