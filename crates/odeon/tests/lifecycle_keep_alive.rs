//! `SpawnOptions::keep_alive`: an actor exempt from local GC lives with no strong
//! reference left, is reachable through a weak ref upgraded later, and stops when asked
//! (by a stop, its parent or the system's shutdown). Without it, the same actor is
//! collected.

use std::sync::mpsc;
use std::time::Duration;

use odeon::{Actor, Context, Handler, Message, SpawnOptions, StopReason, System, WeakActorRef};

const GUARD: Duration = Duration::from_secs(10);

struct Service {
    stopped: mpsc::Sender<StopReason>,
    handled: u32,
}
impl Actor for Service {
    fn stopped(&mut self, reason: &StopReason) {
        let _ = self.stopped.send(reason.clone());
    }
}

struct Work;
impl Message for Work {
    type Reply = u32;
}
impl Handler<Work> for Service {
    fn handle(&mut self, _: Work, _: &mut Context<Self>) -> u32 {
        self.handled += 1;
        self.handled
    }
}

fn system() -> System {
    System::builder().workers(2).build()
}

/// Spawns a `Service` with `opts` and keeps only a weak ref to it.
fn weak_service(
    system: &System,
    opts: SpawnOptions,
) -> (WeakActorRef<Service>, mpsc::Receiver<StopReason>) {
    let (tx, rx) = mpsc::channel();
    let strong = system.spawn_with(
        Service {
            stopped: tx,
            handled: 0,
        },
        opts,
    );
    let weak = strong.downgrade();
    drop(strong);
    // The GC signal the drop queued has been handled once the system is quiescent.
    system.run_until_quiescent();
    (weak, rx)
}

#[test]
fn an_unreferenced_actor_is_collected_by_default() {
    let system = system();
    let (weak, rx) = weak_service(&system, SpawnOptions::new());
    assert_eq!(rx.recv_timeout(GUARD), Ok(StopReason::Unreferenced));
    assert!(weak.upgrade().is_none());
}

#[test]
fn a_kept_alive_actor_with_no_strong_ref_still_handles_messages_and_stops_when_asked() {
    let system = system();
    let (weak, rx) = weak_service(&system, SpawnOptions::new().keep_alive());
    assert!(rx.try_recv().is_err(), "a kept-alive actor was collected");

    let service = weak.upgrade().expect("a kept-alive actor is still running");
    assert_eq!(system.block_on(service.ask(Work)), Ok(1));
    // Dropped to zero a second time: still not collected.
    drop(service);
    system.run_until_quiescent();
    assert!(rx.try_recv().is_err(), "collected on the second drop");

    let service = weak.upgrade().expect("still running");
    assert_eq!(system.block_on(service.ask(Work)), Ok(2));
    service.stop();
    assert_eq!(rx.recv_timeout(GUARD), Ok(StopReason::Normal));
    system.run_until_quiescent();
    assert!(
        weak.upgrade().is_none(),
        "a stopped actor cannot be upgraded"
    );
}

#[test]
fn a_kept_alive_actor_is_stopped_by_the_systems_shutdown() {
    let system = system();
    let (_weak, rx) = weak_service(&system, SpawnOptions::new().keep_alive());
    assert_eq!(system.live_actors(), 1);
    assert!(system.shutdown());
    assert_eq!(rx.recv_timeout(GUARD), Ok(StopReason::Shutdown));
}

/// Spawns a kept-alive child and drops every strong ref to it.
struct Parent {
    child_stopped: Option<mpsc::Sender<StopReason>>,
    child: Option<WeakActorRef<Service>>,
}
impl Actor for Parent {
    fn started(&mut self, cx: &mut Context<Self>) {
        if let Some(tx) = self.child_stopped.take() {
            let child = cx.spawn_with(
                Service {
                    stopped: tx,
                    handled: 0,
                },
                SpawnOptions::new().keep_alive(),
            );
            self.child = Some(child.downgrade());
        }
    }
}

struct Child;
impl Message for Child {
    type Reply = Option<WeakActorRef<Service>>;
}
impl Handler<Child> for Parent {
    fn handle(&mut self, _: Child, _: &mut Context<Self>) -> Option<WeakActorRef<Service>> {
        self.child.clone()
    }
}

#[test]
fn a_kept_alive_child_lives_until_its_parent_stops() {
    let system = system();
    let (tx, rx) = mpsc::channel();
    let parent = system.spawn(Parent {
        child_stopped: Some(tx),
        child: None,
    });
    system.run_until_quiescent();
    let child = system.block_on(parent.ask(Child)).unwrap().unwrap();
    assert!(rx.try_recv().is_err(), "a kept-alive child was collected");
    let strong = child.upgrade().expect("kept alive");
    assert_eq!(system.block_on(strong.ask(Work)), Ok(1));
    drop(strong);
    parent.stop();
    assert_eq!(rx.recv_timeout(GUARD), Ok(StopReason::ParentStopped));
}
