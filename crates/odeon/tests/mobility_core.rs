//! The core's support for moving actors (design `docs/design/mobility.md` §7 step 1),
//! driven by a fake transport: a `MoveRequest` that hands the frozen actor to the test
//! over a channel, and a `Forward` that records what a stub forwards.

use std::any::{Any, TypeId};
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use odeon::remote::{BirthId, Forward, FrozenActor, MoveRequest, NotFrozen, Outgoing, prepare};
use odeon::{
    Actor, ActorId, ActorRef, AskError, AsyncHandler, Context, Handler, Message, MobileActor,
    RemoteActor, StopReason, System, TellError, Terminated,
};

type Log = Arc<Mutex<Vec<String>>>;

/// Under Miri (`cargo +nightly miri test -p odeon --test mobility_core`): one worker
/// and no spares, as in `miri_actor_paths.rs` (work stealing goes through
/// crossbeam-epoch, which Miri's stacked borrows reject), and a long ask deadline.
fn new_system() -> System {
    if cfg!(miri) {
        System::builder()
            .workers(1)
            .max_spare_workers(0)
            .ask_timeout(std::time::Duration::from_secs(600))
            .build()
    } else {
        System::new()
    }
}

fn log_of(log: &Log) -> Vec<String> {
    log.lock().unwrap().clone()
}

struct Counter {
    seen: Vec<u32>,
    log: Log,
}

impl Counter {
    fn new(log: &Log) -> Self {
        Counter {
            seen: Vec::new(),
            log: log.clone(),
        }
    }
    fn note(&self, s: impl Into<String>) {
        self.log.lock().unwrap().push(s.into());
    }
}

impl Actor for Counter {
    fn migrated(&mut self, _: &mut Context<Self>) {
        self.note("migrated");
    }
    fn migration_failed(
        &mut self,
        _: &mut Context<Self>,
        error: &(dyn std::error::Error + 'static),
    ) {
        self.note(format!("migration_failed: {error}"));
    }
    fn stopped(&mut self, _: &StopReason) {
        self.note("stopped");
    }
}

/// In the remote interface.
#[derive(Debug, PartialEq)]
struct Add(u32);
impl Message for Add {
    type Reply = ();
}
impl Handler<Add> for Counter {
    fn handle(&mut self, m: Add, _: &mut Context<Self>) {
        self.note(format!("add {}", m.0));
        self.seen.push(m.0);
    }
}

/// In the remote interface; an ask.
struct Double(u32);
impl Message for Double {
    type Reply = u32;
}
impl Handler<Double> for Counter {
    fn handle(&mut self, m: Double, _: &mut Context<Self>) -> u32 {
        self.note(format!("double {}", m.0));
        m.0 * 2
    }
}

/// In the remote interface; an ask.
struct Seen;
impl Message for Seen {
    type Reply = Vec<u32>;
}
impl Handler<Seen> for Counter {
    fn handle(&mut self, _: Seen, _: &mut Context<Self>) -> Vec<u32> {
        self.seen.clone()
    }
}

/// Not in the remote interface.
#[derive(Debug, PartialEq)]
struct Local(u32);
impl Message for Local {
    type Reply = u32;
}
impl Handler<Local> for Counter {
    fn handle(&mut self, m: Local, _: &mut Context<Self>) -> u32 {
        self.note(format!("local {}", m.0));
        m.0
    }
}

/// Asks for a move from inside a handler.
struct MoveFromHandler(Box<dyn MoveRequest>);
impl Message for MoveFromHandler {
    type Reply = ();
}
impl Handler<MoveFromHandler> for Counter {
    fn handle(&mut self, m: MoveFromHandler, cx: &mut Context<Self>) {
        self.note("move requested");
        cx.request_move(m.0);
    }
}

/// An async handler that waits for the test.
struct Await(tokio::sync::oneshot::Receiver<()>);
impl Message for Await {
    type Reply = ();
}
impl AsyncHandler<Await> for Counter {
    async fn handle(&mut self, m: Await, _: &mut Context<Self>) {
        let _ = m.0.await;
        self.note("await done");
    }
}

impl RemoteActor for Counter {
    const TYPE_NAME: &'static str = "test.Counter";
    fn interface() -> &'static (dyn Any + Send + Sync) {
        &()
    }
}
impl MobileActor for Counter {
    fn mobility() -> &'static (dyn Any + Send + Sync) {
        &()
    }
}

fn in_interface(t: TypeId) -> bool {
    t == TypeId::of::<Add>() || t == TypeId::of::<Double>() || t == TypeId::of::<Seen>()
}

/// The fake transport's request: hands the outcome to the test.
struct ToTest(mpsc::Sender<Result<FrozenActor, NotFrozen>>);
impl MoveRequest for ToTest {
    fn frozen(self: Box<Self>, actor: FrozenActor) {
        self.0.send(Ok(actor)).unwrap();
    }
    fn refused(self: Box<Self>, why: NotFrozen) {
        let _ = self.0.send(Err(why));
    }
}

fn request() -> (
    Box<dyn MoveRequest>,
    mpsc::Receiver<Result<FrozenActor, NotFrozen>>,
) {
    let (tx, rx) = mpsc::channel();
    (Box::new(ToTest(tx)), rx)
}

/// The fake route: records forwarded messages and stop requests.
#[derive(Default)]
struct Route {
    got: Mutex<Vec<Outgoing>>,
    stops: Mutex<Vec<(StopReason, bool)>>,
    /// "msg", "stop" and "kill", in the order the route got them.
    order: Mutex<Vec<&'static str>>,
    /// Watches forwarded to the route, by key.
    watches: Mutex<Vec<(ActorId, Notify)>>,
}

type Notify = Box<dyn FnOnce(Terminated) + Send>;
impl Forward for Route {
    fn accepts(&self, type_id: TypeId) -> bool {
        in_interface(type_id)
    }
    fn forward(&self, msg: Outgoing) {
        self.got.lock().unwrap().push(msg);
        self.order.lock().unwrap().push("msg");
    }
    fn stop(&self, reason: StopReason) {
        self.stops.lock().unwrap().push((reason, false));
        self.order.lock().unwrap().push("stop");
    }
    fn kill(&self, reason: StopReason) {
        self.stops.lock().unwrap().push((reason, true));
        self.order.lock().unwrap().push("kill");
    }
    fn watch(&self, key: ActorId, notify: Box<dyn FnOnce(Terminated) + Send>) {
        self.watches.lock().unwrap().push((key, notify));
    }
    fn unwatch(&self, key: ActorId) {
        self.watches.lock().unwrap().retain(|(k, _)| *k != key);
    }
}

fn adds(out: &[Outgoing]) -> Vec<u32> {
    out.iter()
        .filter_map(|o| o.message.downcast_ref::<Add>().map(|a| a.0))
        .collect()
}

#[derive(Debug)]
struct TargetLost;
impl std::fmt::Display for TargetLost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("target lost")
    }
}
impl std::error::Error for TargetLost {}

/// Records every `Terminated` it gets.
struct Watcher(Log);
impl Actor for Watcher {}
impl Handler<Terminated> for Watcher {
    fn handle(&mut self, t: Terminated, _: &mut Context<Self>) {
        self.0.lock().unwrap().push(format!("terminated {}", t.id));
    }
}
struct WatchIt(ActorRef<Counter>);
impl Message for WatchIt {
    type Reply = ();
}
impl Handler<WatchIt> for Watcher {
    fn handle(&mut self, m: WatchIt, cx: &mut Context<Self>) {
        cx.watch(&m.0);
    }
}

#[test]
fn a_move_asked_for_in_a_handler_freezes_after_that_message_and_resume_keeps_order() {
    let system = new_system();
    let log = Log::default();
    let counter = system.spawn(Counter::new(&log));
    let (req, frozen) = request();
    counter.tell(Add(1)).unwrap();
    counter.tell(MoveFromHandler(req)).unwrap();
    counter.tell(Add(2)).unwrap();
    counter.tell(Add(3)).unwrap();
    let mut actor = frozen.recv().unwrap().unwrap();
    // Frozen right after the requesting message: what came later is queued, unhandled.
    assert_eq!(log_of(&log), ["add 1", "move requested"]);
    let state = actor.state().downcast_ref::<Counter>().unwrap();
    assert_eq!(state.seen, [1]);
    let snapshot = actor.snapshot(&in_interface).unwrap();
    let queued: Vec<u32> = snapshot
        .iter()
        .map(|q| q.message.downcast_ref::<Add>().unwrap().0)
        .collect();
    assert_eq!(queued, [2, 3]);
    // Arrives while frozen: held behind the snapshot.
    counter.tell(Add(4)).unwrap();
    assert_eq!(log_of(&log), ["add 1", "move requested"]);
    actor.resume(Box::new(TargetLost));
    assert_eq!(system.block_on(counter.ask(Seen)).unwrap(), [1, 2, 3, 4]);
    assert_eq!(
        log_of(&log),
        [
            "add 1",
            "move requested",
            "migration_failed: target lost",
            "add 2",
            "add 3",
            "add 4"
        ]
    );
}

#[test]
fn a_move_asked_for_from_outside_comes_after_the_messages_sent_before_it() {
    let system = new_system();
    let log = Log::default();
    let counter = system.spawn(Counter::new(&log));
    for i in 0..50 {
        counter.tell(Add(i)).unwrap();
    }
    let (req, frozen) = request();
    counter.request_move(req);
    let mut actor = frozen.recv().unwrap().unwrap();
    let state = actor.state().downcast_ref::<Counter>().unwrap();
    assert_eq!(state.seen, (0..50).collect::<Vec<_>>());
    assert!(actor.snapshot(&in_interface).unwrap().is_empty());
    actor.resume(Box::new(TargetLost));
    system.run_until_quiescent();
    assert_eq!(
        log_of(&log).last().unwrap(),
        "migration_failed: target lost"
    );
}

#[test]
fn an_awaiting_async_handler_completes_before_the_actor_freezes() {
    let system = new_system();
    let log = Log::default();
    let counter = system.spawn(Counter::new(&log));
    let (go, wait) = tokio::sync::oneshot::channel();
    counter.tell(Await(wait)).unwrap();
    let (req, frozen) = request();
    counter.request_move(req);
    counter.tell(Add(1)).unwrap();
    go.send(()).unwrap();
    let mut actor = frozen.recv().unwrap().unwrap();
    assert_eq!(log_of(&log), ["await done"]);
    assert_eq!(actor.snapshot(&in_interface).unwrap().len(), 1);
    actor.resume(Box::new(TargetLost));
    system.run_until_quiescent();
    assert_eq!(
        log_of(&log),
        ["await done", "migration_failed: target lost", "add 1"]
    );
}

#[test]
fn the_snapshot_keeps_send_order_and_asks_are_answered_through_their_slots() {
    let system = new_system();
    let log = Log::default();
    let counter = system.spawn(Counter::new(&log));
    let (req, frozen) = request();
    counter.request_move(req);
    let mut actor = frozen.recv().unwrap().unwrap();
    counter.tell(Add(1)).unwrap();
    let doubled = counter.ask(Double(21));
    counter.tell(Add(3)).unwrap();
    let snapshot = actor.snapshot(&in_interface).unwrap();
    let shape: Vec<(&str, bool)> = snapshot
        .iter()
        .map(|q| (q.type_name.rsplit("::").next().unwrap(), q.ask))
        .collect();
    assert_eq!(shape, [("Add", false), ("Double", true), ("Add", false)]);
    let route = Arc::new(Route::default());
    let mut out = actor.commit(route.clone());
    assert_eq!(out.len(), 3);
    // The fake transport answers the ask as the target would.
    let slot = out[1].reply.take().unwrap();
    assert_eq!(out[1].message.downcast_ref::<Double>().unwrap().0, 21);
    slot.reply(Box::new(42u32));
    assert_eq!(system.block_on(doubled).unwrap(), 42);
    assert!(log_of(&log).is_empty(), "nothing was handled here");
}

#[test]
fn a_stub_forwards_everything_in_order_and_the_actor_is_not_reported_stopped() {
    let system = new_system();
    let log = Log::default();
    let watched = Log::default();
    let counter = system.spawn(Counter::new(&log));
    let watcher = system.spawn(Watcher(watched.clone()));
    system
        .block_on(watcher.ask(WatchIt(counter.clone())))
        .unwrap();
    let (req, frozen) = request();
    counter.request_move(req);
    let mut actor = frozen.recv().unwrap().unwrap();
    counter.tell(Add(0)).unwrap();
    assert_eq!(actor.snapshot(&in_interface).unwrap().len(), 1);
    // Held after the snapshot: forwarded by the stub, first.
    counter.tell(Add(1)).unwrap();
    counter.tell(Add(2)).unwrap();
    let route = Arc::new(Route::default());
    let snapshot = actor.commit(route.clone());
    assert_eq!(adds(&snapshot), [0]);
    // Several senders at once: each one's messages arrive in its order.
    let senders: Vec<_> = (1..=4u32)
        .map(|t| {
            let c = counter.clone();
            std::thread::spawn(move || {
                for i in 0..200 {
                    c.tell(Add(t * 1000 + i)).unwrap();
                }
            })
        })
        .collect();
    for s in senders {
        s.join().unwrap();
    }
    system.run_until_quiescent();
    let got = adds(&route.got.lock().unwrap());
    assert_eq!(got.len(), 2 + 4 * 200);
    assert_eq!(got[..2], [1, 2]);
    for t in 1..=4u32 {
        let mine: Vec<u32> = got.iter().copied().filter(|v| v / 1000 == t).collect();
        assert_eq!(mine, (0..200).map(|i| t * 1000 + i).collect::<Vec<_>>());
    }
    assert!(counter.is_alive());
    assert!(log_of(&log).is_empty(), "no hook ran: {:?}", log_of(&log));
    assert!(
        log_of(&watched).is_empty(),
        "a watcher was told: {:?}",
        log_of(&watched)
    );
}

#[test]
fn a_stub_refuses_local_only_types_with_the_message_back() {
    let system = new_system();
    let log = Log::default();
    let counter = system.spawn(Counter::new(&log));
    let (req, frozen) = request();
    counter.request_move(req);
    let actor = frozen.recv().unwrap().unwrap();
    let route = Arc::new(Route::default());
    assert!(actor.commit(route.clone()).is_empty());
    assert!(matches!(
        counter.tell(Local(5)),
        Err(TellError::NotRemote(Local(5)))
    ));
    assert_eq!(
        system.block_on(counter.ask(Local(6))),
        Err(AskError::NotRemote)
    );
    counter.tell(Add(7)).unwrap();
    system.run_until_quiescent();
    assert_eq!(adds(&route.got.lock().unwrap()), [7]);
}

#[test]
fn a_local_only_message_refuses_the_snapshot_and_resume_loses_nothing() {
    let system = new_system();
    let log = Log::default();
    let counter = system.spawn(Counter::new(&log));
    let (req, frozen) = request();
    counter.request_move(req);
    let mut actor = frozen.recv().unwrap().unwrap();
    counter.tell(Local(1)).unwrap();
    counter.tell(Add(2)).unwrap();
    let refused = actor.snapshot(&in_interface).unwrap_err();
    assert!(
        refused.type_name.ends_with("Local"),
        "{}",
        refused.type_name
    );
    counter.tell(Add(3)).unwrap();
    actor.resume(Box::new(refused));
    system.run_until_quiescent();
    let log = log_of(&log);
    assert!(log[0].starts_with("migration_failed: a queued"), "{log:?}");
    assert_eq!(log[1..], ["local 1", "add 2", "add 3"]);
}

#[test]
fn dropping_the_frozen_actor_resumes_it() {
    let system = new_system();
    let log = Log::default();
    let counter = system.spawn(Counter::new(&log));
    let (req, frozen) = request();
    counter.request_move(req);
    let actor = frozen.recv().unwrap().unwrap();
    counter.tell(Add(1)).unwrap();
    drop(actor);
    assert_eq!(system.block_on(counter.ask(Seen)).unwrap(), [1]);
    assert!(log_of(&log)[0].starts_with("migration_failed"));
}

#[test]
fn stop_and_kill_at_a_stub_are_forwarded() {
    let system = new_system();
    let log = Log::default();
    let counter = system.spawn(Counter::new(&log));
    let (req, frozen) = request();
    counter.request_move(req);
    let actor = frozen.recv().unwrap().unwrap();
    let route = Arc::new(Route::default());
    let _ = actor.commit(route.clone());
    counter.tell(Add(1)).unwrap();
    counter.stop();
    system.run_until_quiescent();
    counter.kill();
    system.run_until_quiescent();
    assert_eq!(
        *route.stops.lock().unwrap(),
        [(StopReason::Normal, false), (StopReason::Killed, true)]
    );
    // The stop follows what was pushed before it (the stub forwards in mailbox order).
    assert_eq!(*route.order.lock().unwrap(), ["msg", "stop", "kill"]);
    assert!(counter.is_alive());
    assert!(log_of(&log).is_empty());
}

#[test]
fn a_stop_at_a_stub_is_forwarded_after_the_messages_pushed_before_it() {
    let system = new_system();
    let log = Log::default();
    let counter = system.spawn(Counter::new(&log));
    let (req, frozen) = request();
    counter.request_move(req);
    let actor = frozen.recv().unwrap().unwrap();
    let route = Arc::new(Route::default());
    let _ = actor.commit(route.clone());
    // The stop waits behind the messages pushed before it; the kill does not wait
    // (it may overtake them, depending on when the stub's turn runs).
    for i in 0..100 {
        counter.tell(Add(i)).unwrap();
    }
    counter.stop();
    counter.kill();
    system.run_until_quiescent();
    let order = route.order.lock().unwrap().clone();
    let stop = order
        .iter()
        .position(|e| *e == "stop")
        .expect("stop forwarded");
    assert_eq!(order.iter().filter(|e| **e == "msg").count(), 100);
    assert!(
        order[..stop].iter().filter(|e| **e == "msg").count() == 100,
        "{order:?}"
    );
    assert!(order.contains(&"kill"));
    assert_eq!(
        adds(&route.got.lock().unwrap()),
        (0..100).collect::<Vec<_>>()
    );
}

#[test]
fn a_stop_requested_while_frozen_is_forwarded_at_commit() {
    let system = new_system();
    let log = Log::default();
    let counter = system.spawn(Counter::new(&log));
    let (req, frozen) = request();
    counter.request_move(req);
    let actor = frozen.recv().unwrap().unwrap();
    counter.stop();
    let route = Arc::new(Route::default());
    let _ = actor.commit(route.clone());
    counter.tell(Add(1)).unwrap();
    system.run_until_quiescent();
    assert_eq!(*route.stops.lock().unwrap(), [(StopReason::Normal, false)]);
    assert_eq!(
        adds(&route.got.lock().unwrap()),
        [1],
        "the stub still forwards"
    );
}

#[test]
fn a_stop_requested_while_frozen_stops_the_actor_after_a_resume() {
    let system = new_system();
    let log = Log::default();
    let counter = system.spawn(Counter::new(&log));
    let (req, frozen) = request();
    counter.request_move(req);
    let actor = frozen.recv().unwrap().unwrap();
    counter.stop();
    actor.resume(Box::new(TargetLost));
    system.run_until_quiescent();
    assert!(!counter.is_alive());
    assert_eq!(log_of(&log), ["migration_failed: target lost", "stopped"]);
}

#[test]
fn moving_a_stub_again_is_refused_as_moved() {
    let system = new_system();
    let counter = system.spawn(Counter::new(&Log::default()));
    let (req, frozen) = request();
    counter.request_move(req);
    let _ = frozen
        .recv()
        .unwrap()
        .unwrap()
        .commit(Arc::new(Route::default()));
    let (req, again) = request();
    counter.request_move(req);
    assert_eq!(again.recv().unwrap().unwrap_err(), NotFrozen::Moved);
}

/// Starts a drain of its own actor, then asks for a move in the same message.
struct DrainThenMove(Box<dyn MoveRequest>);
impl Message for DrainThenMove {
    type Reply = ();
}
impl Handler<DrainThenMove> for Counter {
    fn handle(&mut self, m: DrainThenMove, cx: &mut Context<Self>) {
        cx.myself().stop_gracefully().unwrap();
        cx.request_move(m.0);
    }
}

#[test]
fn a_draining_actor_refuses_to_move_and_stops_here() {
    let system = new_system();
    let log = Log::default();
    let counter = system.spawn(Counter::new(&log));
    let (req, frozen) = request();
    counter.tell(DrainThenMove(req)).unwrap();
    let answer = frozen.recv_timeout(std::time::Duration::from_secs(10));
    assert_eq!(answer.unwrap().unwrap_err(), NotFrozen::Stopped);
    assert_eq!(system.block_on(counter.wait_stopped()), StopReason::Normal);
}

#[test]
fn a_move_request_to_a_stopped_actor_is_refused() {
    let system = new_system();
    let counter = system.spawn(Counter::new(&Log::default()));
    counter.stop();
    system.run_until_quiescent();
    let (req, frozen) = request();
    counter.request_move(req);
    assert_eq!(frozen.recv().unwrap().unwrap_err(), NotFrozen::Stopped);
}

fn birth() -> BirthId {
    BirthId {
        node: "node-a".into(),
        incarnation: 3,
        id: ActorId::from_u64(7),
    }
}

fn hash_of(r: &ActorRef<Counter>) -> u64 {
    let mut h = DefaultHasher::new();
    r.hash(&mut h);
    h.finish()
}

#[test]
fn a_prepared_actor_holds_messages_until_activation_and_runs_migrated_first() {
    let system = new_system();
    let log = Log::default();
    let mut state = Counter::new(&log);
    state.seen = vec![10];
    let prepared = prepare(&system.handle(), state, birth());
    let counter = prepared.actor_ref();
    counter.tell(Add(11)).unwrap();
    let seen = counter.ask(Seen);
    system.run_until_quiescent();
    assert!(log_of(&log).is_empty(), "a prepared actor runs nothing");
    prepared.activate();
    assert_eq!(system.block_on(seen).unwrap(), [10, 11]);
    assert_eq!(log_of(&log), ["migrated", "add 11"]);
    // The birth identity, not the local cell's id.
    assert_eq!(counter.id(), ActorId::from_u64(7));
    assert_eq!(counter.downgrade().id(), ActorId::from_u64(7));
    let mut h = DefaultHasher::new();
    ActorId::from_u64(7).hash(&mut h);
    assert_eq!(hash_of(&counter), h.finish());
    assert_eq!(counter, counter.clone());
}

#[test]
fn discarding_a_prepared_actor_fails_its_queued_asks_without_hooks() {
    let system = new_system();
    let log = Log::default();
    let prepared = prepare(&system.handle(), Counter::new(&log), birth());
    let counter = prepared.actor_ref();
    let seen = counter.ask(Seen);
    counter.tell(Add(1)).unwrap();
    prepared.discard(AskError::Unreachable);
    assert_eq!(system.block_on(seen), Err(AskError::Unreachable));
    assert!(!counter.is_alive());
    assert!(matches!(
        counter.tell(Add(2)),
        Err(TellError::Stopped(Add(2)))
    ));
    system.run_until_quiescent();
    assert!(log_of(&log).is_empty(), "no hook ran: {:?}", log_of(&log));
}

#[test]
fn an_actor_moves_through_a_fake_transport_with_nothing_lost() {
    // Source and target in one system: the fake transport installs the state on the
    // "target" and replays the snapshot, then routes what the stub forwards.
    let system = new_system();
    let log = Log::default();
    let source = system.spawn(Counter::new(&log));
    source.tell(Add(1)).unwrap();
    let (req, frozen) = request();
    source.request_move(req);
    source.tell(Add(2)).unwrap();
    let mut actor = frozen.recv().unwrap().unwrap();
    assert_eq!(actor.snapshot(&in_interface).unwrap().len(), 1);
    let state = actor.state().downcast_ref::<Counter>().unwrap();
    let moved = Counter {
        seen: state.seen.clone(),
        log: log.clone(),
    };
    let prepared = prepare(&system.handle(), moved, birth());
    let target = prepared.actor_ref();
    let route = Arc::new(Route::default());
    for out in actor.commit(route.clone()) {
        target
            .tell(*out.message.downcast::<Add>().unwrap())
            .unwrap();
    }
    prepared.activate();
    source.tell(Add(3)).unwrap();
    system.run_until_quiescent();
    for out in route.got.lock().unwrap().drain(..) {
        target
            .tell(*out.message.downcast::<Add>().unwrap())
            .unwrap();
    }
    assert_eq!(system.block_on(target.ask(Seen)).unwrap(), [1, 2, 3]);
    assert_eq!(log_of(&log), ["add 1", "migrated", "add 2", "add 3"]);
}

#[test]
fn watches_made_before_and_after_a_commit_go_to_the_route_and_an_unwatch_follows() {
    let system = new_system();
    let log = Log::default();
    let counter = system.spawn(Counter::new(&log));
    let ended = Arc::new(Mutex::new(Vec::new()));
    let note = |tag: &'static str| {
        let ended = ended.clone();
        Box::new(move |t: Terminated| ended.lock().unwrap().push((tag, t.reason)))
            as Box<dyn FnOnce(Terminated) + Send>
    };
    let before = odeon::remote::watch_local(&counter, note("before")).unwrap();
    let (req, frozen) = request();
    counter.request_move(req);
    let actor = frozen.recv().unwrap().unwrap();
    let route = Arc::new(Route::default());
    let _ = actor.commit(route.clone());
    // The cell's watch went to the route at commit; a watch of the stub goes there too.
    let after = odeon::remote::watch_local(&counter, note("after")).unwrap();
    let gone = odeon::remote::watch_local(&counter, note("gone")).unwrap();
    odeon::remote::unwatch_local(&counter, gone);
    let keys: Vec<ActorId> = route
        .watches
        .lock()
        .unwrap()
        .iter()
        .map(|(k, _)| *k)
        .collect();
    assert_eq!(keys, [before, after]);
    // The transport calls them when the actor stops wherever it runs.
    for (_, notify) in route.watches.lock().unwrap().drain(..) {
        notify(Terminated {
            id: counter.id(),
            reason: StopReason::Normal,
        });
    }
    assert_eq!(
        *ended.lock().unwrap(),
        [
            ("before", StopReason::Normal),
            ("after", StopReason::Normal)
        ]
    );
    // Retiring the stub tells nobody: the actor did not stop.
    drop(counter);
    system.run_until_quiescent();
    assert_eq!(ended.lock().unwrap().len(), 2);
}

/// A route that knows the actor's birth identity (as a transport's does).
struct NamedRoute(BirthId);
impl Forward for NamedRoute {
    fn accepts(&self, type_id: TypeId) -> bool {
        in_interface(type_id)
    }
    fn forward(&self, _: Outgoing) {}
    fn stop(&self, _: StopReason) {}
    fn kill(&self, _: StopReason) {}
    fn identity(&self) -> Option<BirthId> {
        Some(self.0.clone())
    }
}

#[test]
fn a_stub_equals_the_cell_its_actor_came_back_to_and_only_that_one() {
    let system = new_system();
    let log = Log::default();
    let counter = system.spawn(Counter::new(&log));
    let birth = |id: ActorId| BirthId {
        node: "a".into(),
        incarnation: 1,
        id,
    };
    let (req, frozen) = request();
    counter.request_move(req);
    let actor = frozen.recv().unwrap().unwrap();
    let _ = actor.commit(Arc::new(NamedRoute(birth(counter.id()))));
    // The actor comes back into a new cell under the same birth identity.
    let back = prepare(&system.handle(), Counter::new(&log), birth(counter.id()));
    let back_ref = back.actor_ref();
    back.activate();
    assert_eq!(back_ref, counter);
    assert_eq!(counter, back_ref);
    let hash = |r: &ActorRef<Counter>| {
        let mut h = DefaultHasher::new();
        r.hash(&mut h);
        h.finish()
    };
    assert_eq!(hash(&back_ref), hash(&counter));
    // Another actor with the same id but another birth node is not the same.
    let other = prepare(
        &system.handle(),
        Counter::new(&log),
        BirthId {
            node: "b".into(),
            incarnation: 1,
            id: counter.id(),
        },
    );
    let other_ref = other.actor_ref();
    other.activate();
    assert_ne!(other_ref, counter);
    assert_ne!(other_ref, back_ref);
    // Plain actors stay equal only to themselves.
    let plain = system.spawn(Counter::new(&log));
    assert_ne!(plain, counter);
    assert_eq!(plain, plain.clone());
}
