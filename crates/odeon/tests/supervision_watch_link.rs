//! Watching and linking: who is told when an actor stops, and with which reason.

use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use odeon::{
    Actor, ActorRef, AskError, Context, Handler, Message, StopReason, System, TellError, Terminated,
};

const HANG_GUARD: Duration = Duration::from_secs(5);

/// An actor that can crash, quit, link and unlink, and records why it stopped.
struct Target {
    stopped: Arc<Mutex<Vec<StopReason>>>,
    pings: u32,
}
impl Actor for Target {
    fn stopped(&mut self, reason: &StopReason) {
        self.stopped.lock().unwrap().push(reason.clone());
    }
}

fn target() -> (Target, Arc<Mutex<Vec<StopReason>>>) {
    let stopped = Arc::new(Mutex::new(Vec::new()));
    (
        Target {
            stopped: stopped.clone(),
            pings: 0,
        },
        stopped,
    )
}

struct Ping;
impl Message for Ping {
    type Reply = u32;
}
impl Handler<Ping> for Target {
    fn handle(&mut self, _: Ping, _: &mut Context<Self>) -> u32 {
        self.pings += 1;
        self.pings
    }
}

struct Crash(&'static str);
impl Message for Crash {
    type Reply = ();
}
impl Handler<Crash> for Target {
    fn handle(&mut self, msg: Crash, _: &mut Context<Self>) {
        panic!("{}", msg.0);
    }
}

struct Quit;
impl Message for Quit {
    type Reply = ();
}
impl Handler<Quit> for Target {
    fn handle(&mut self, _: Quit, cx: &mut Context<Self>) {
        cx.stop();
    }
}

struct LinkTo<B: Actor>(ActorRef<B>);
impl<B: Actor> Message for LinkTo<B> {
    type Reply = ();
}
impl<B: Actor> Handler<LinkTo<B>> for Target {
    fn handle(&mut self, msg: LinkTo<B>, cx: &mut Context<Self>) {
        cx.link(&msg.0);
    }
}

struct UnlinkFrom<B: Actor>(ActorRef<B>);
impl<B: Actor> Message for UnlinkFrom<B> {
    type Reply = ();
}
impl<B: Actor> Handler<UnlinkFrom<B>> for Target {
    fn handle(&mut self, msg: UnlinkFrom<B>, cx: &mut Context<Self>) {
        cx.unlink(&msg.0);
    }
}

/// Forwards every `Terminated` it receives to a channel.
struct Watcher {
    tx: mpsc::Sender<Terminated>,
}
impl Actor for Watcher {}

struct Watch<B: Actor>(ActorRef<B>);
impl<B: Actor> Message for Watch<B> {
    type Reply = ();
}
impl<B: Actor> Handler<Watch<B>> for Watcher {
    fn handle(&mut self, msg: Watch<B>, cx: &mut Context<Self>) {
        cx.watch(&msg.0);
    }
}

struct Unwatch<B: Actor>(ActorRef<B>);
impl<B: Actor> Message for Unwatch<B> {
    type Reply = ();
}
impl<B: Actor> Handler<Unwatch<B>> for Watcher {
    fn handle(&mut self, msg: Unwatch<B>, cx: &mut Context<Self>) {
        cx.unwatch(&msg.0);
    }
}

impl Handler<Terminated> for Watcher {
    fn handle(&mut self, msg: Terminated, _: &mut Context<Self>) {
        let _ = self.tx.send(msg);
    }
}

fn small_system() -> System {
    System::builder().workers(2).build()
}

fn watcher(system: &System) -> (ActorRef<Watcher>, mpsc::Receiver<Terminated>) {
    let (tx, rx) = mpsc::channel();
    (system.spawn(Watcher { tx }), rx)
}

fn link(system: &System, a: &ActorRef<Target>, b: &ActorRef<Target>) {
    system.block_on(a.ask(LinkTo(b.clone()))).unwrap();
}

#[test]
fn a_watcher_gets_terminated_with_the_panic_message_when_the_watched_actor_panics() {
    let system = small_system();
    let (w, rx) = watcher(&system);
    let (t, stopped) = target();
    let t = system.spawn(t);
    system.block_on(w.ask(Watch(t.clone()))).unwrap();

    assert_eq!(
        system.block_on(t.ask(Crash("kaboom"))),
        Err(AskError::Panicked)
    );
    let got = rx.recv_timeout(HANG_GUARD).expect("Terminated delivered");
    assert_eq!(
        got,
        Terminated {
            id: t.id(),
            reason: StopReason::Panicked("kaboom".into())
        }
    );
    assert!(!t.is_alive());
    assert_eq!(
        *stopped.lock().unwrap(),
        vec![StopReason::Panicked("kaboom".into())]
    );
}

#[test]
fn a_watcher_gets_terminated_normal_when_the_watched_actor_is_stopped() {
    let system = small_system();
    let (w, rx) = watcher(&system);
    let from_outside = system.spawn(target().0);
    let from_inside = system.spawn(target().0);
    system.block_on(w.ask(Watch(from_outside.clone()))).unwrap();
    system.block_on(w.ask(Watch(from_inside.clone()))).unwrap();

    from_outside.stop();
    let got = rx.recv_timeout(HANG_GUARD).expect("Terminated delivered");
    assert_eq!(
        got,
        Terminated {
            id: from_outside.id(),
            reason: StopReason::Normal
        }
    );

    from_inside.tell(Quit).unwrap();
    let got = rx.recv_timeout(HANG_GUARD).expect("Terminated delivered");
    assert_eq!(
        got,
        Terminated {
            id: from_inside.id(),
            reason: StopReason::Normal
        }
    );
}

#[test]
fn a_watcher_gets_terminated_unreferenced_when_the_watched_actor_is_collected() {
    let system = small_system();
    let (w, rx) = watcher(&system);
    let (t, stopped) = target();
    let t = system.spawn(t);
    let id = t.id();
    let weak = t.downgrade();
    // The message's clone of the ref is dropped once handled: the watch holds none.
    system.block_on(w.ask(Watch(t.clone()))).unwrap();
    drop(t);

    let got = rx.recv_timeout(HANG_GUARD).expect("Terminated delivered");
    assert_eq!(
        got,
        Terminated {
            id,
            reason: StopReason::Unreferenced
        }
    );
    assert!(weak.upgrade().is_none());
    assert_eq!(*stopped.lock().unwrap(), vec![StopReason::Unreferenced]);
}

#[test]
fn watching_an_already_stopped_actor_delivers_terminated_at_once_with_its_final_reason() {
    let system = small_system();
    let (w, rx) = watcher(&system);
    let quit = system.spawn(target().0);
    let crashed = system.spawn(target().0);
    quit.stop();
    crashed.tell(Crash("earlier")).unwrap();
    system.run_until_quiescent();
    assert!(!quit.is_alive() && !crashed.is_alive());

    system.block_on(w.ask(Watch(quit.clone()))).unwrap();
    let got = rx.recv_timeout(HANG_GUARD).expect("Terminated delivered");
    assert_eq!(
        got,
        Terminated {
            id: quit.id(),
            reason: StopReason::Normal
        }
    );

    system.block_on(w.ask(Watch(crashed.clone()))).unwrap();
    let got = rx.recv_timeout(HANG_GUARD).expect("Terminated delivered");
    assert_eq!(
        got,
        Terminated {
            id: crashed.id(),
            reason: StopReason::Panicked("earlier".into())
        }
    );
}

#[test]
fn unwatch_prevents_delivery_of_terminated() {
    let system = small_system();
    let (w, rx) = watcher(&system);
    let unwatched = system.spawn(target().0);
    let watched = system.spawn(target().0);
    system.block_on(w.ask(Watch(unwatched.clone()))).unwrap();
    system.block_on(w.ask(Watch(watched.clone()))).unwrap();
    system.block_on(w.ask(Unwatch(unwatched.clone()))).unwrap();

    unwatched.tell(Crash("unseen")).unwrap();
    system.run_until_quiescent();
    assert!(!unwatched.is_alive());
    watched.stop();

    // Anything about `unwatched` would have been queued at the watcher first.
    let got = rx.recv_timeout(HANG_GUARD).expect("Terminated delivered");
    assert_eq!(got.id, watched.id());
    system.run_until_quiescent();
    assert!(rx.try_recv().is_err(), "nothing about the unwatched actor");
}

#[test]
fn every_watcher_of_an_actor_is_told_once() {
    let system = small_system();
    let t = system.spawn(target().0);
    let watchers: Vec<_> = (0..5).map(|_| watcher(&system)).collect();
    for (w, _) in &watchers {
        system.block_on(w.ask(Watch(t.clone()))).unwrap();
    }
    t.tell(Crash("seen by all")).unwrap();
    for (_, rx) in &watchers {
        let got = rx.recv_timeout(HANG_GUARD).expect("Terminated delivered");
        assert_eq!(got.id, t.id());
        assert_eq!(got.reason, StopReason::Panicked("seen by all".into()));
    }
    system.run_until_quiescent();
    for (_, rx) in &watchers {
        assert!(rx.try_recv().is_err(), "told exactly once");
    }
}

#[test]
fn a_panicking_actor_stops_its_linked_peer_with_link_failed() {
    let system = small_system();
    let (a, a_stopped) = target();
    let (b, b_stopped) = target();
    let (a, b) = (system.spawn(a), system.spawn(b));
    let (w, rx) = watcher(&system);
    system.block_on(w.ask(Watch(b.clone()))).unwrap();
    link(&system, &a, &b);

    a.tell(Crash("a failed")).unwrap();
    let got = rx.recv_timeout(HANG_GUARD).expect("peer stopped");
    assert_eq!(
        got,
        Terminated {
            id: b.id(),
            reason: StopReason::LinkFailed(a.id())
        }
    );
    system.run_until_quiescent();
    assert!(!a.is_alive() && !b.is_alive());
    assert_eq!(
        *a_stopped.lock().unwrap(),
        vec![StopReason::Panicked("a failed".into())]
    );
    assert_eq!(
        *b_stopped.lock().unwrap(),
        vec![StopReason::LinkFailed(a.id())]
    );
}

#[test]
fn a_link_propagates_failure_in_both_directions() {
    let system = small_system();
    let (a, a_stopped) = target();
    let (a, b) = (system.spawn(a), system.spawn(target().0));
    // `a` made the link; `b` fails.
    link(&system, &a, &b);

    b.tell(Crash("b failed")).unwrap();
    system.run_until_quiescent();
    assert!(!a.is_alive());
    assert_eq!(
        *a_stopped.lock().unwrap(),
        vec![StopReason::LinkFailed(b.id())]
    );
}

#[test]
fn link_failures_propagate_along_a_chain_of_links() {
    let system = small_system();
    let (a, b, c) = (target(), target(), target());
    let (b_stopped, c_stopped) = (b.1, c.1);
    let (a, b, c) = (system.spawn(a.0), system.spawn(b.0), system.spawn(c.0));
    link(&system, &a, &b);
    link(&system, &b, &c);

    a.tell(Crash("start of chain")).unwrap();
    system.run_until_quiescent();
    assert!(!a.is_alive() && !b.is_alive() && !c.is_alive());
    assert_eq!(
        *b_stopped.lock().unwrap(),
        vec![StopReason::LinkFailed(a.id())]
    );
    assert_eq!(
        *c_stopped.lock().unwrap(),
        vec![StopReason::LinkFailed(b.id())]
    );
}

#[test]
fn a_normal_stop_does_not_stop_a_linked_peer() {
    let system = small_system();
    let (peer, peer_stopped) = target();
    let peer = system.spawn(peer);
    let stopped_outside = system.spawn(target().0);
    let stopped_inside = system.spawn(target().0);
    let collected = system.spawn(target().0);
    let collected_weak = collected.downgrade();
    for other in [&stopped_outside, &stopped_inside, &collected] {
        link(&system, other, &peer);
    }

    stopped_outside.stop();
    stopped_inside.tell(Quit).unwrap();
    drop(collected);
    system.run_until_quiescent();

    assert!(!stopped_outside.is_alive() && !stopped_inside.is_alive());
    assert!(collected_weak.upgrade().is_none(), "collected");
    assert!(peer.is_alive());
    assert_eq!(system.block_on(peer.ask(Ping)).unwrap(), 1);
    assert!(peer_stopped.lock().unwrap().is_empty());
}

#[test]
fn unlink_prevents_failure_propagation() {
    let system = small_system();
    let (peer, peer_stopped) = target();
    let peer = system.spawn(peer);
    let (a, b) = (system.spawn(target().0), system.spawn(target().0));
    // `a` unlinks the link it made; `b` unlinks the link `peer` made.
    link(&system, &a, &peer);
    link(&system, &peer, &b);
    system.block_on(a.ask(UnlinkFrom(peer.clone()))).unwrap();
    system.block_on(b.ask(UnlinkFrom(peer.clone()))).unwrap();

    a.tell(Crash("a failed")).unwrap();
    b.tell(Crash("b failed")).unwrap();
    system.run_until_quiescent();

    assert!(!a.is_alive() && !b.is_alive());
    assert!(peer.is_alive());
    assert_eq!(system.block_on(peer.ask(Ping)).unwrap(), 1);
    assert!(peer_stopped.lock().unwrap().is_empty());
}

#[test]
fn linking_to_an_actor_that_already_failed_stops_the_linker() {
    let system = small_system();
    let failed = system.spawn(target().0);
    let quit = system.spawn(target().0);
    failed.tell(Crash("before the link")).unwrap();
    quit.stop();
    system.run_until_quiescent();

    let (to_quit, to_quit_stopped) = target();
    let to_quit = system.spawn(to_quit);
    link(&system, &to_quit, &quit);
    assert_eq!(system.block_on(to_quit.ask(Ping)).unwrap(), 1);
    assert!(to_quit_stopped.lock().unwrap().is_empty());

    let (to_failed, to_failed_stopped) = target();
    let to_failed = system.spawn(to_failed);
    link(&system, &to_failed, &failed);
    system.run_until_quiescent();
    assert!(!to_failed.is_alive());
    assert_eq!(
        *to_failed_stopped.lock().unwrap(),
        vec![StopReason::LinkFailed(failed.id())]
    );
}

#[test]
fn a_panic_fails_only_that_actor_and_the_system_keeps_working() {
    let system = small_system();
    let others: Vec<_> = (0..10).map(|_| system.spawn(target().0)).collect();
    for o in &others {
        system.block_on(o.ask(Ping)).unwrap();
    }
    let (victim, victim_stopped) = target();
    let victim = system.spawn(victim);

    let crash = victim.ask(Crash("only me"));
    let queued = victim.ask(Ping);
    assert_eq!(system.block_on(crash), Err(AskError::Panicked));
    assert_eq!(system.block_on(queued), Err(AskError::Stopped));
    assert!(!victim.is_alive());
    assert!(matches!(victim.tell(Ping), Err(TellError::Stopped(Ping))));
    assert_eq!(system.block_on(victim.ask(Ping)), Err(AskError::Stopped));
    assert_eq!(
        *victim_stopped.lock().unwrap(),
        vec![StopReason::Panicked("only me".into())]
    );

    for o in &others {
        assert!(o.is_alive());
        assert_eq!(system.block_on(o.ask(Ping)).unwrap(), 2);
    }
    let fresh = system.spawn(target().0);
    assert_eq!(system.block_on(fresh.ask(Ping)).unwrap(), 1);
    system.run_until_quiescent();
    assert_eq!(system.live_actors(), 11);
}
