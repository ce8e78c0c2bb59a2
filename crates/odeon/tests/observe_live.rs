//! The live table of an observing system (`odeon::observe::{system_tallies,
//! deepest_mailboxes, supervision_tree}`) against known workloads.

use std::sync::mpsc;
use std::time::Duration;

use odeon::observe::{self, ActorStatus};
use odeon::{Actor, Context, Handler, Message, SpawnOptions, Strategy, SupervisorSpec, System};

const HANG_GUARD: Duration = Duration::from_secs(10);

struct Blocker;
impl Actor for Blocker {}

/// Tells the test it started, then waits until released.
struct Hold(mpsc::Sender<()>, mpsc::Receiver<()>);
impl Message for Hold {
    type Reply = ();
}
impl Handler<Hold> for Blocker {
    fn handle(&mut self, h: Hold, _: &mut Context<Self>) {
        let _ = h.0.send(());
        let _ = h.1.recv_timeout(HANG_GUARD);
    }
}

struct Nop;
impl Message for Nop {
    type Reply = ();
}
impl Handler<Nop> for Blocker {
    fn handle(&mut self, _: Nop, _: &mut Context<Self>) {}
}

#[test]
fn an_actor_with_50_queued_messages_is_first_among_the_deepest() {
    let system = System::builder().observe(true).build();
    let quiet: Vec<_> = (0..5).map(|_| system.spawn(Blocker)).collect();
    for q in &quiet {
        q.tell(Nop).unwrap();
    }
    let busy = system.spawn_with(Blocker, SpawnOptions::new().name("backlog"));
    let (started, wait_started) = mpsc::channel();
    let (release, wait) = mpsc::channel();
    busy.tell(Hold(started, wait)).unwrap();
    wait_started.recv_timeout(HANG_GUARD).unwrap();
    for _ in 0..50 {
        busy.tell(Nop).unwrap();
    }
    let deepest = observe::deepest_mailboxes(&system.handle(), 3);
    assert!(!deepest.is_empty());
    assert_eq!(deepest[0].id, busy.id());
    assert_eq!(deepest[0].depth, 50);
    assert_eq!(deepest[0].name.as_deref(), Some("backlog"));
    assert!(deepest[0].actor.ends_with("Blocker"));
    // The others hold at most their one message; empty mailboxes are left out.
    assert!(deepest[1..].iter().all(|m| m.depth == 1), "{deepest:?}");

    release.send(()).unwrap();
    system.block_on(busy.ask(Nop)).unwrap();
    let after = observe::deepest_mailboxes(&system.handle(), 1);
    assert!(
        after.iter().all(|m| m.id != busy.id()),
        "drained: {after:?}"
    );
}

#[test]
fn messages_of_an_atomic_batch_count_in_the_depth() {
    let system = System::builder().observe(true).build();
    let busy = system.spawn(Blocker);
    let (started, wait_started) = mpsc::channel();
    let (release, wait) = mpsc::channel();
    busy.tell(Hold(started, wait)).unwrap();
    wait_started.recv_timeout(HANG_GUARD).unwrap();
    let mut batch = busy.batch();
    for _ in 0..10 {
        batch.tell(Nop);
    }
    batch.send().unwrap();
    busy.tell(Nop).unwrap();
    let deepest = observe::deepest_mailboxes(&system.handle(), 1);
    assert_eq!(deepest[0].id, busy.id());
    assert_eq!(deepest[0].depth, 11);
    release.send(()).unwrap();
    system.block_on(busy.ask(Nop)).unwrap();
    assert!(observe::deepest_mailboxes(&system.handle(), 1).is_empty());
}

#[derive(Default)]
struct Flaky;
impl Actor for Flaky {}
struct Crash;
impl Message for Crash {
    type Reply = ();
}
impl Handler<Crash> for Flaky {
    fn handle(&mut self, _: Crash, _: &mut Context<Self>) {
        panic!("crash on purpose (observe_live test)")
    }
}
struct Ping;
impl Message for Ping {
    type Reply = ();
}
impl Handler<Ping> for Flaky {
    fn handle(&mut self, _: Ping, _: &mut Context<Self>) {}
}

#[test]
fn the_tree_shows_a_supervisor_its_children_and_restarts() {
    let system = System::builder().observe(true).build();
    let spec = SupervisorSpec::new(Strategy::OneForOne).max_restarts(10, Duration::from_secs(60));
    let (sup, kids) = system.supervise(spec, |c| {
        [
            c.spawn_with(Flaky::default, SpawnOptions::new().name("k0")),
            c.spawn_with(Flaky::default, SpawnOptions::new().name("k1")),
            c.spawn_with(Flaky::default, SpawnOptions::new().name("k2")),
        ]
    });
    let loner = system.spawn(Blocker);
    for _ in 0..2 {
        kids[1].tell(Crash).unwrap();
        // Held until the restart, then handled by the fresh instance.
        system.block_on(kids[1].ask(Ping)).unwrap();
    }
    let tree = observe::supervision_tree(&system.handle(), 100);
    assert_eq!(tree.actors, 5, "{tree:?}");
    assert_eq!(tree.collapsed, 0);
    assert_eq!(tree.roots.len(), 2);
    let root = &tree.roots[0];
    assert_eq!(root.id, sup.id(), "the supervisor comes first");
    assert!(root.actor.ends_with("Supervisor"));
    assert_eq!(root.status, ActorStatus::Running);
    let names: Vec<_> = root.children.iter().map(|c| c.name.as_deref()).collect();
    assert_eq!(names, [Some("k0"), Some("k1"), Some("k2")]);
    let restarts: Vec<_> = root.children.iter().map(|c| c.restarts).collect();
    assert_eq!(restarts, [0, 2, 0]);
    assert!(
        root.children
            .iter()
            .all(|c| c.status == ActorStatus::Running)
    );
    assert_eq!(tree.roots[1].id, loner.id());

    // Bounded: room for the supervisor only; its three children are counted.
    let small = observe::supervision_tree(&system.handle(), 1);
    assert_eq!(small.roots.len(), 1);
    assert!(small.roots[0].children.is_empty());
    assert_eq!(small.roots[0].collapsed, 3);
    assert_eq!(small.collapsed, 1);

    let flaky = observe::system_tallies(&system.handle())
        .into_iter()
        .find(|t| t.actor.ends_with("Flaky"))
        .unwrap();
    assert_eq!(flaky.restarts, 2);
    assert_eq!(flaky.alive, 3);
}

struct OnlyInOne;
impl Actor for OnlyInOne {}
impl Handler<Nop> for OnlyInOne {
    fn handle(&mut self, _: Nop, _: &mut Context<Self>) {}
}
struct OnlyInTwo;
impl Actor for OnlyInTwo {}
impl Handler<Nop> for OnlyInTwo {
    fn handle(&mut self, _: Nop, _: &mut Context<Self>) {}
}

#[test]
fn two_systems_in_one_process_count_their_own_actors() {
    let one = System::builder().observe(true).build();
    let two = System::builder().observe(true).build();
    let a = one.spawn_with(OnlyInOne, SpawnOptions::new().name("a"));
    let b = two.spawn(OnlyInTwo);
    for _ in 0..3 {
        one.block_on(a.ask(Nop)).unwrap();
    }
    two.block_on(b.ask(Nop)).unwrap();
    let types = |s: &System| -> Vec<&'static str> {
        observe::system_tallies(&s.handle())
            .iter()
            .map(|t| t.actor)
            .collect()
    };
    assert_eq!(types(&one), [std::any::type_name::<OnlyInOne>()]);
    assert_eq!(types(&two), [std::any::type_name::<OnlyInTwo>()]);
    let t = observe::system_tallies(&one.handle());
    assert_eq!(t[0].named_handled, [("a".to_owned(), 3)]);
    // The process-wide view has both.
    let all = observe::actor_tallies();
    assert!(all.iter().any(|t| t.actor.ends_with("OnlyInOne")));
    assert!(all.iter().any(|t| t.actor.ends_with("OnlyInTwo")));

    // A stopped actor's count stays; it is no longer alive.
    let stopped = a.wait_stopped();
    a.stop();
    one.block_on(stopped);
    let t = observe::system_tallies(&one.handle());
    assert_eq!(t[0].named_handled, [("a".to_owned(), 3)]);
    assert_eq!(t[0].alive, 0);
    assert!(
        observe::supervision_tree(&one.handle(), 10)
            .roots
            .is_empty()
    );
}

#[test]
fn a_system_that_does_not_observe_has_no_table() {
    let system = System::new();
    let _a = system.spawn(Blocker);
    assert!(!observe::observing(&system.handle()));
    assert!(observe::system_tallies(&system.handle()).is_empty());
    assert!(observe::deepest_mailboxes(&system.handle(), 5).is_empty());
    assert_eq!(observe::supervision_tree(&system.handle(), 5).actors, 0);
}
