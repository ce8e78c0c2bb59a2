//! Local actor GC: an actor with no strong reference left and an empty mailbox is
//! stopped with `StopReason::Unreferenced` and its state is dropped. Weak refs do not
//! keep it alive; clones and `Recipient`s do.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use odeon::{
    Actor, ActorRef, AsyncHandler, Context, Handler, Message, Recipient, SpawnOptions, StopReason,
    System,
};
use tokio::sync::Notify;

fn system() -> System {
    System::builder().workers(2).build()
}

/// Shared observations of every `Tracked` actor in one test.
#[derive(Clone, Default)]
struct Probe {
    drops: Arc<AtomicUsize>,
    handled: Arc<AtomicUsize>,
    reasons: Arc<Mutex<Vec<StopReason>>>,
}

impl Probe {
    fn drops(&self) -> usize {
        self.drops.load(Ordering::SeqCst)
    }
    fn handled(&self) -> usize {
        self.handled.load(Ordering::SeqCst)
    }
    fn reasons(&self) -> Vec<StopReason> {
        self.reasons.lock().unwrap().clone()
    }
}

struct Tracked {
    probe: Probe,
    /// Something the actor holds: another actor's ref.
    holds: Option<ActorRef<Tracked>>,
}

impl Tracked {
    fn new(probe: &Probe) -> Self {
        Tracked {
            probe: probe.clone(),
            holds: None,
        }
    }
}

impl Actor for Tracked {
    fn stopped(&mut self, reason: &StopReason) {
        self.probe.reasons.lock().unwrap().push(reason.clone());
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.probe.drops.fetch_add(1, Ordering::SeqCst);
    }
}

struct Ping;
impl Message for Ping {
    type Reply = usize;
}
impl Handler<Ping> for Tracked {
    fn handle(&mut self, _: Ping, _cx: &mut Context<Self>) -> usize {
        self.probe.handled.fetch_add(1, Ordering::SeqCst) + 1
    }
}

struct Keep(ActorRef<Tracked>);
impl Message for Keep {
    type Reply = ();
}
impl Handler<Keep> for Tracked {
    fn handle(&mut self, msg: Keep, _cx: &mut Context<Self>) {
        self.holds = Some(msg.0);
    }
}

/// Suspends until `gate` is notified, then counts as handled.
struct Wait {
    entered: mpsc::Sender<()>,
    gate: Arc<Notify>,
}
impl Message for Wait {
    type Reply = ();
}
impl AsyncHandler<Wait> for Tracked {
    async fn handle(&mut self, msg: Wait, _cx: &mut Context<Self>) {
        let _ = msg.entered.send(());
        msg.gate.notified().await;
        self.probe.handled.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn dropping_the_last_ref_stops_the_actor_as_unreferenced_and_drops_its_state() {
    let system = system();
    let probe = Probe::default();
    let r = system.spawn(Tracked::new(&probe));
    assert_eq!(system.block_on(r.ask(Ping)), Ok(1));
    system.run_until_quiescent();
    assert_eq!(probe.drops(), 0, "alive while referenced");
    assert_eq!(system.live_actors(), 1);

    drop(r);
    system.run_until_quiescent();
    assert_eq!(probe.drops(), 1);
    assert_eq!(probe.reasons(), vec![StopReason::Unreferenced]);
    assert_eq!(system.live_actors(), 0);
}

#[test]
fn an_actor_never_sent_anything_is_collected_when_its_only_ref_is_dropped() {
    let system = system();
    let probe = Probe::default();
    drop(system.spawn(Tracked::new(&probe)));
    system.run_until_quiescent();
    assert_eq!(probe.drops(), 1);
    assert_eq!(probe.reasons(), vec![StopReason::Unreferenced]);
    assert_eq!(system.live_actors(), 0);
}

#[test]
fn messages_sent_before_the_last_ref_is_dropped_are_all_handled_before_collection() {
    let system = system();
    let probe = Probe::default();
    let r = system.spawn(Tracked::new(&probe));
    for _ in 0..5_000 {
        r.tell(Ping).unwrap();
    }
    drop(r);
    system.run_until_quiescent();
    assert_eq!(probe.handled(), 5_000, "no message was lost to GC");
    assert_eq!(probe.drops(), 1);
    assert_eq!(probe.reasons(), vec![StopReason::Unreferenced]);
}

#[test]
fn messages_sent_from_other_threads_before_their_refs_drop_are_all_handled() {
    let system = system();
    let probe = Probe::default();
    let r = system.spawn(Tracked::new(&probe));
    std::thread::scope(|s| {
        for _ in 0..4 {
            let r = r.clone();
            s.spawn(move || {
                for _ in 0..1_000 {
                    r.tell(Ping).unwrap();
                }
            });
        }
        drop(r);
    });
    system.run_until_quiescent();
    assert_eq!(probe.handled(), 4_000);
    assert_eq!(probe.drops(), 1);
    assert_eq!(probe.reasons(), vec![StopReason::Unreferenced]);
}

#[test]
fn a_weak_ref_does_not_keep_the_actor_alive() {
    let system = system();
    let probe = Probe::default();
    let r = system.spawn(Tracked::new(&probe));
    let weak = r.downgrade();
    assert!(weak.upgrade().is_some());
    let id = r.id();
    drop(r);
    system.run_until_quiescent();
    assert_eq!(probe.drops(), 1);
    assert_eq!(probe.reasons(), vec![StopReason::Unreferenced]);
    assert!(weak.upgrade().is_none());
    assert_eq!(weak.id(), id);
}

#[test]
fn a_ref_upgraded_from_a_weak_one_keeps_the_actor_alive() {
    let system = system();
    let probe = Probe::default();
    let r = system.spawn(Tracked::new(&probe));
    let weak = r.downgrade();
    let strong = weak.upgrade().unwrap();
    drop(r);
    system.run_until_quiescent();
    assert_eq!(probe.drops(), 0);
    assert_eq!(system.block_on(strong.ask(Ping)), Ok(1));
    drop(strong);
    system.run_until_quiescent();
    assert_eq!(probe.drops(), 1);
}

#[test]
fn a_recipient_keeps_the_actor_alive_until_it_is_dropped() {
    let system = system();
    let probe = Probe::default();
    let r = system.spawn(Tracked::new(&probe));
    let rec: Recipient<Ping> = r.recipient();
    let rec2 = rec.clone();
    drop(r);
    system.run_until_quiescent();
    assert_eq!(probe.drops(), 0, "the recipient keeps it alive");
    assert_eq!(system.block_on(rec.ask(Ping)), Ok(1));

    drop(rec);
    system.run_until_quiescent();
    assert_eq!(probe.drops(), 0, "a clone of the recipient keeps it alive");
    assert!(rec2.is_alive());
    assert_eq!(system.block_on(rec2.ask(Ping)), Ok(2));

    drop(rec2);
    system.run_until_quiescent();
    assert_eq!(probe.drops(), 1);
    assert_eq!(probe.reasons(), vec![StopReason::Unreferenced]);
}

#[test]
fn a_clone_of_the_ref_keeps_the_actor_alive_until_it_is_dropped() {
    let system = system();
    let probe = Probe::default();
    let r = system.spawn(Tracked::new(&probe));
    let clone = r.clone();
    drop(r);
    system.run_until_quiescent();
    assert_eq!(probe.drops(), 0);
    assert!(clone.is_alive());
    assert_eq!(system.block_on(clone.ask(Ping)), Ok(1));
    drop(clone);
    system.run_until_quiescent();
    assert_eq!(probe.drops(), 1);
    assert_eq!(probe.reasons(), vec![StopReason::Unreferenced]);
}

#[test]
fn a_ref_held_in_another_actors_state_keeps_it_alive_until_the_holder_is_collected() {
    let system = system();
    let probe = Probe::default();
    let held = system.spawn(Tracked::new(&probe));
    let holder = system.spawn(Tracked::new(&probe));
    let weak_held = held.downgrade();
    holder.tell(Keep(held)).unwrap();
    system.run_until_quiescent();
    assert_eq!(
        probe.drops(),
        0,
        "the holder's state keeps the held actor alive"
    );
    assert!(weak_held.upgrade().is_some());

    drop(holder);
    system.run_until_quiescent();
    assert_eq!(
        probe.drops(),
        2,
        "collecting the holder released the held actor"
    );
    assert_eq!(
        probe.reasons(),
        vec![StopReason::Unreferenced, StopReason::Unreferenced]
    );
    assert_eq!(system.live_actors(), 0);
}

#[test]
fn ten_thousand_actors_spawned_and_dropped_are_all_collected() {
    const N: usize = 10_000;
    let system = system();
    let probe = Probe::default();
    for i in 0..N {
        let r = system.spawn(Tracked::new(&probe));
        if i % 2 == 0 {
            r.tell(Ping).unwrap();
        }
    }
    system.run_until_quiescent();
    assert_eq!(probe.handled(), N / 2);
    assert_eq!(probe.drops(), N);
    assert_eq!(system.live_actors(), 0);
    let reasons = probe.reasons();
    assert_eq!(reasons.len(), N);
    assert!(reasons.iter().all(|r| *r == StopReason::Unreferenced));
}

#[test]
fn an_actor_stopped_explicitly_is_dropped_once_and_not_collected_again() {
    let system = system();
    let probe = Probe::default();
    let r = system.spawn(Tracked::new(&probe));
    r.stop();
    system.run_until_quiescent();
    assert_eq!(probe.drops(), 1);
    drop(r);
    system.run_until_quiescent();
    assert_eq!(probe.drops(), 1);
    assert_eq!(probe.reasons(), vec![StopReason::Normal]);
}

#[test]
fn a_blocking_actor_is_collected_like_any_other_once_unreferenced() {
    let system = system();
    let probe = Probe::default();
    let refs: Vec<_> = (0..4)
        .map(|_| system.spawn_with(Tracked::new(&probe), SpawnOptions::new().blocking()))
        .collect();
    for r in &refs {
        for _ in 0..100 {
            r.tell(Ping).unwrap();
        }
    }
    drop(refs);
    system.run_until_quiescent();
    assert_eq!(probe.handled(), 400);
    assert_eq!(probe.drops(), 4);
    assert_eq!(probe.reasons(), vec![StopReason::Unreferenced; 4]);
    assert_eq!(system.live_actors(), 0);
}

#[test]
fn an_actor_unreferenced_during_a_suspended_async_handler_finishes_it_before_collection() {
    let system = system();
    let probe = Probe::default();
    let r = system.spawn(Tracked::new(&probe));
    let (tx, rx) = mpsc::channel();
    let gate = Arc::new(Notify::new());
    r.tell(Wait {
        entered: tx,
        gate: gate.clone(),
    })
    .unwrap();
    r.tell(Ping).unwrap();
    rx.recv_timeout(Duration::from_secs(10))
        .expect("the async handler never started");
    drop(r);
    gate.notify_one();
    system.run_until_quiescent();
    assert_eq!(
        probe.handled(),
        2,
        "the suspended handler and the queued ping both ran"
    );
    assert_eq!(probe.drops(), 1);
    assert_eq!(probe.reasons(), vec![StopReason::Unreferenced]);
}
