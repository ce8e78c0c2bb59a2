//! Several nodes in one process: tell, ask, refs inside messages, the registry, remote
//! spawn, watch, and what happens when a node is lost.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]

mod common;

use std::time::Duration;

use common::*;
use odeon::{AskError, StopReason, TellError};
use odeon_remote::{RegistryError, SpawnError};

const LONG: Duration = Duration::from_secs(10);

fn counter(m: &Member) -> odeon::ActorRef<Counter> {
    m.system.spawn(Counter {
        total: 0,
        seen: Vec::new(),
    })
}

#[test]
fn tell_and_ask_across_nodes_through_a_registry_lookup() {
    let a = Member::start("a", &[]);
    let b = Member::start("b", &[a.addr()]);
    let c = counter(&a);
    a.node().register("counter", &c).unwrap();

    let remote = b
        .system
        .block_on(b.node().lookup::<Counter>("counter"))
        .unwrap();
    assert!(!remote.is_local());
    assert_eq!(remote.id(), c.id());
    remote.tell(Add(2)).unwrap();
    assert_eq!(b.system.block_on(remote.ask(Add(3))), Ok(5));
    // The local actor saw both, in order.
    assert_eq!(a.system.block_on(c.ask(History)), Ok(vec![2, 3]));
}

#[test]
fn gossip_forms_the_cluster_so_nodes_find_names_and_spawn_on_nodes_they_were_not_given() {
    let a = Member::start("a", &[]);
    let b = Member::start("b", &[a.addr()]);
    let c = Member::start("c", &[a.addr()]);
    // c was only given a; gossip tells it about b, and it links to b.
    let all = eventually(LONG, || {
        let peers = c.node().peers();
        (peers.len() == 2).then_some(peers)
    })
    .expect("c learns of b through gossip");
    assert_eq!(all, vec![a.node().id().clone(), b.node().id().clone()]);
    let on_b = counter(&b);
    b.node().register("on-b", &on_b).unwrap();
    let found = eventually(LONG, || {
        c.system.block_on(c.node().lookup::<Counter>("on-b")).ok()
    })
    .expect("the registration reaches c");
    assert_eq!(c.system.block_on(found.ask(Add(4))), Ok(4));
    let spawned = c
        .system
        .block_on(c.node().spawn_on::<Counter>("b", 1))
        .unwrap();
    assert_eq!(c.system.block_on(spawned.ask(Add(1))), Ok(2));
    // Unregistering withdraws the name cluster-wide.
    assert!(b.node().unregister("on-b"));
    let gone = eventually(LONG, || {
        matches!(
            c.system.block_on(c.node().lookup::<Counter>("on-b")),
            Err(RegistryError::NotFound(_))
        )
        .then_some(())
    });
    assert!(gone.is_some(), "the name is withdrawn everywhere");
}

#[test]
fn typed_lookup_of_the_wrong_type_is_an_error() {
    let a = Member::start("a", &[]);
    let b = Member::start("b", &[a.addr()]);
    let echo = a.system.spawn(Echo);
    a.node().register("echo", &echo).unwrap();
    let wrong = b.system.block_on(b.node().lookup::<Counter>("echo"));
    assert!(
        matches!(&wrong, Err(RegistryError::WrongType { expected: "test.Counter", found, .. }) if found == "test.Echo"),
        "{wrong:?}"
    );
    let right = b.system.block_on(b.node().lookup::<Echo>("echo")).unwrap();
    assert_eq!(
        b.system.block_on(right.ask(Say("hi".into()))),
        Ok("hi".to_string())
    );
    assert_eq!(
        b.system
            .block_on(b.node().lookup::<Echo>("nobody"))
            .unwrap_err(),
        RegistryError::NotFound("nobody".into())
    );
    // A name is taken once per node, and can be given back.
    assert_eq!(
        a.node().register("echo", &echo),
        Err(RegistryError::Taken("echo".into()))
    );
    assert!(a.node().unregister("echo"));
    // Withdrawn everywhere once gossip has carried the removal (b may have seen the
    // registration in gossip already).
    let gone = eventually(LONG, || {
        matches!(
            b.system.block_on(b.node().lookup::<Echo>("echo")),
            Err(RegistryError::NotFound(_))
        )
        .then_some(())
    });
    assert!(gone.is_some(), "the name is withdrawn");
}

#[test]
fn refs_travel_inside_messages_and_resolve_locally_at_home() {
    let a = Member::start("a", &[]);
    let b = Member::start("b", &[a.addr()]);
    let on_a = counter(&a);
    let on_b = counter(&b);
    a.node().register("a", &on_a).unwrap();
    let remote_a = b.system.block_on(b.node().lookup::<Counter>("a")).unwrap();

    // B hands A's counter a ref to B's counter; A's counter asks B's through it.
    let via = b.system.block_on(remote_a.ask(Forward {
        other: on_b.clone(),
        n: 7,
    }));
    assert_eq!(via, Ok(7));
    assert_eq!(b.system.block_on(on_b.ask(History)), Ok(vec![7]));

    // A ref to A's own actor, sent to A, arrives as the local pointer; the ref A
    // returns to B is a remote one on B, equal to the one B looked up.
    let (back, was_local) = b
        .system
        .block_on(remote_a.ask(WhoAreYou(Some(remote_a.clone()))))
        .unwrap();
    assert!(
        was_local,
        "a ref to an actor on its own node resolves to the local pointer"
    );
    assert!(!back.is_local());
    assert_eq!(back, remote_a);
    // A ref to B's actor comes back to B as the local ref.
    let (_, b_local_on_a) = b
        .system
        .block_on(remote_a.ask(WhoAreYou(Some(on_b.clone()))))
        .unwrap();
    assert!(!b_local_on_a);
}

#[test]
fn a_message_outside_the_remote_interface_is_refused_with_the_message() {
    let a = Member::start("a", &[]);
    let b = Member::start("b", &[a.addr()]);
    a.node().register("c", &counter(&a)).unwrap();
    let remote = b.system.block_on(b.node().lookup::<Counter>("c")).unwrap();
    assert!(matches!(
        remote.tell(LocalOnly),
        Err(TellError::NotRemote(LocalOnly))
    ));
    assert_eq!(
        b.system.block_on(remote.ask(LocalOnly)),
        Err(AskError::NotRemote)
    );
}

#[test]
fn a_panicking_remote_handler_fails_the_ask_and_watchers_see_it() {
    let a = Member::start("a", &[]);
    let b = Member::start("b", &[a.addr()]);
    a.node().register("c", &counter(&a)).unwrap();
    let remote = b.system.block_on(b.node().lookup::<Counter>("c")).unwrap();
    let watcher = b.system.spawn(Watcher::default());
    b.system
        .block_on(watcher.ask(WatchIt(remote.clone())))
        .unwrap();
    assert_eq!(
        b.system.block_on(remote.ask(Crash)),
        Err(AskError::Panicked)
    );
    let seen = eventually(LONG, || {
        let s = b.system.block_on(watcher.ask(Seen)).unwrap();
        (!s.is_empty()).then_some(s)
    })
    .expect("the watcher is told");
    assert_eq!(seen[0].id, remote.id());
    assert!(
        matches!(seen[0].reason, StopReason::Panicked(_)),
        "{:?}",
        seen[0].reason
    );
    // The actor is gone: the next ask fails instead of hanging.
    assert_eq!(
        b.system.block_on(remote.ask(Add(1))),
        Err(AskError::Stopped)
    );
}

#[test]
fn spawn_on_another_node_and_clear_errors_for_bad_spawns() {
    let a = Member::start("a", &[]);
    let b = Member::start("b", &[a.addr()]);
    let spawned = b
        .system
        .block_on(b.node().spawn_on::<Counter>("a", 40))
        .unwrap();
    assert!(!spawned.is_local());
    assert_eq!(b.system.block_on(spawned.ask(Add(2))), Ok(42));
    // The constructor's error comes back.
    let refused = b.system.block_on(b.node().spawn_on::<Counter>("a", 666));
    assert!(
        matches!(&refused, Err(SpawnError::Refused(why)) if why.contains("not that number")),
        "{refused:?}"
    );
    assert_eq!(
        b.system
            .block_on(b.node().spawn_on::<Counter>("nowhere", 1))
            .unwrap_err(),
        SpawnError::NoSuchNode("nowhere".into())
    );
}

#[test]
fn an_unregistered_actor_type_cannot_be_spawned_remotely() {
    // Node "plain" does not declare Counter spawnable.
    let system = odeon::System::new();
    let plain = system
        .block_on(
            odeon_remote::Node::builder("plain")
                .secret(secret())
                .start(&system.handle()),
        )
        .unwrap();
    let b = Member::start("b", &[plain.listen_addr()]);
    let res = b.system.block_on(b.node().spawn_on::<Counter>("plain", 1));
    assert!(
        matches!(&res, Err(SpawnError::Refused(why)) if why.contains("not spawnable")),
        "{res:?}"
    );
}

#[test]
fn a_lost_node_fails_pending_asks_and_tells_watchers() {
    let a = Member::start("a", &[]);
    let b = Member::start("b", &[a.addr()]);
    let slow = a.system.spawn(Sleeper);
    a.node().register("slow", &slow).unwrap();
    a.node().register("c", &counter(&a)).unwrap();
    let remote_slow = b
        .system
        .block_on(b.node().lookup::<Sleeper>("slow"))
        .unwrap();
    let remote_c = b.system.block_on(b.node().lookup::<Counter>("c")).unwrap();
    let watcher = b.system.spawn(Watcher::default());
    b.system
        .block_on(watcher.ask(WatchIt(remote_c.clone())))
        .unwrap();
    assert_eq!(b.system.block_on(remote_c.ask(Add(1))), Ok(1));

    // An ask that will never be answered in time, then node A vanishes.
    let pending = remote_slow.ask(Nap).timeout(Duration::from_secs(30));
    let Member {
        system: a_system,
        node: a_node,
    } = a;
    drop(a_node);
    let res = b.system.block_on(pending);
    assert_eq!(
        res,
        Err(AskError::Unreachable),
        "the ask fails promptly, not at its timeout"
    );
    let seen = eventually(LONG, || {
        let s = b.system.block_on(watcher.ask(Seen)).unwrap();
        (!s.is_empty()).then_some(s)
    })
    .expect("the watcher is told");
    assert_eq!(seen[0].reason, StopReason::NodeLost);
    assert!(!remote_c.is_alive());
    assert!(matches!(
        remote_c.tell(Add(1)),
        Err(TellError::Unreachable(_))
    ));
    assert!(b.node().peers().is_empty());
    drop(a_system);
}

#[test]
fn a_node_that_leaves_is_seen_as_lost_at_once() {
    let a = Member::start("a", &[]);
    let b = Member::start("b", &[a.addr()]);
    a.node().register("c", &counter(&a)).unwrap();
    let remote_c = b.system.block_on(b.node().lookup::<Counter>("c")).unwrap();
    let watcher = b.system.spawn(Watcher::default());
    b.system
        .block_on(watcher.ask(WatchIt(remote_c.clone())))
        .unwrap();
    let Member {
        system: a_system,
        node: a_node,
    } = a;
    a_system.block_on(a_node.unwrap().leave());
    let seen = eventually(LONG, || {
        let s = b.system.block_on(watcher.ask(Seen)).unwrap();
        (!s.is_empty()).then_some(s)
    })
    .expect("the watcher is told");
    assert_eq!(seen[0].reason, StopReason::NodeLost);
}

/// A node-B linker linked with a node-A counter, and local watchers of both.
fn linked_pair(
    a: &Member,
    b: &Member,
) -> (
    odeon::ActorRef<Watcher>,
    odeon::ActorRef<Watcher>,
    odeon::ActorRef<Counter>,
    odeon::ActorRef<Linker>,
) {
    let c = counter(a);
    a.node().register("linked", &c).unwrap();
    let remote = b
        .system
        .block_on(b.node().lookup::<Counter>("linked"))
        .unwrap();
    let linker = b.system.spawn(Linker);
    b.system.block_on(linker.ask(LinkTo(remote))).unwrap();
    let watch_c = a.system.spawn(Watcher::default());
    a.system.block_on(watch_c.ask(WatchIt(c.clone()))).unwrap();
    let watch_l = b.system.spawn(Watcher::default());
    b.system
        .block_on(watch_l.ask(WatchLinker(linker.clone())))
        .unwrap();
    // The link request is on the wire ahead of this ask, so it has arrived once the
    // reply is back.
    let again = b
        .system
        .block_on(b.node().lookup::<Counter>("linked"))
        .unwrap();
    assert_eq!(b.system.block_on(again.ask(Add(0))), Ok(0));
    (watch_c, watch_l, c, linker)
}

#[test]
fn a_link_across_nodes_stops_the_remote_side_when_the_local_side_fails() {
    let a = Member::start("a", &[]);
    let b = Member::start("b", &[a.addr()]);
    let (watch_c, _, c, linker) = linked_pair(&a, &b);
    b.system.block_on(linker.ask(Boom)).unwrap_err();
    let t = first_notice(&a.system, &watch_c).expect("the counter on a stops");
    assert_eq!(t.id, c.id());
    assert_eq!(t.reason, StopReason::LinkFailed(linker.id()));
}

#[test]
fn a_link_across_nodes_stops_the_local_side_when_the_remote_side_fails() {
    let a = Member::start("a", &[]);
    let b = Member::start("b", &[a.addr()]);
    let (_, watch_l, c, _linker) = linked_pair(&a, &b);
    a.system.block_on(c.ask(Crash)).unwrap_err();
    let t = first_notice(&b.system, &watch_l).expect("the linker on b stops");
    assert_eq!(t.reason, StopReason::LinkFailed(c.id()));
}

#[test]
fn a_link_across_nodes_breaks_when_either_node_is_lost() {
    let a = Member::start("a", &[]);
    let b = Member::start("b", &[a.addr()]);
    let (watch_c, _, c, _) = linked_pair(&a, &b);
    // Node b vanishes: a's counter was linked with an actor there, so it stops.
    let Member {
        system: b_system,
        node: b_node,
    } = b;
    drop(b_node);
    let t = first_notice(&a.system, &watch_c).expect("the counter on a stops");
    assert_eq!(t.id, c.id());
    assert!(
        matches!(t.reason, StopReason::LinkFailed(_)),
        "{:?}",
        t.reason
    );
    drop(b_system);
}

#[test]
fn a_supervisor_restarts_a_child_that_failed_because_of_a_remote_failure() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let a = Member::start("a", &[]);
    let b = Member::start("b", &[a.addr()]);
    let c = counter(&a);
    a.node().register("linked", &c).unwrap();
    let remote = b
        .system
        .block_on(b.node().lookup::<Counter>("linked"))
        .unwrap();
    let starts = Arc::new(AtomicUsize::new(0));
    let spec = odeon::SupervisorSpec::new(odeon::Strategy::OneForOne)
        .max_restarts(3, Duration::from_secs(10));
    let (_sup, guard) = b.system.supervise(spec, |children| {
        let (target, starts) = (remote.clone(), starts.clone());
        children.spawn(move || Guard {
            target: target.clone(),
            starts: starts.clone(),
        })
    });
    eventually(LONG, || (starts.load(Ordering::SeqCst) == 1).then_some(()))
        .expect("the child starts");
    // Make sure the watch request reached node a before the crash.
    assert_eq!(b.system.block_on(remote.ask(Add(0))), Ok(0));
    // The counter on node a fails: the child on node b fails on the notice and is
    // restarted in place by its supervisor, behind the same ref. (The restarted child
    // watches a counter that is gone: a normal notice, no new failure.)
    a.system.block_on(c.ask(Crash)).unwrap_err();
    eventually(LONG, || (starts.load(Ordering::SeqCst) == 2).then_some(()))
        .expect("the supervisor restarts the child");
    assert!(guard.is_alive());
}

#[test]
fn both_nodes_dialing_each_other_end_with_one_working_link() {
    let a = Member::start("a", &[]);
    let b = Member::start("b", &[]);
    // Both dial at once.
    let (ra, rb) = std::thread::scope(|s| {
        let x = s.spawn(|| a.system.block_on(a.node().connect(b.addr())));
        let y = s.spawn(|| b.system.block_on(b.node().connect(a.addr())));
        (x.join().unwrap(), y.join().unwrap())
    });
    assert_eq!(ra.unwrap(), *b.node().id());
    assert_eq!(rb.unwrap(), *a.node().id());
    let ca = counter(&a);
    let cb = counter(&b);
    a.node().register("ca", &ca).unwrap();
    b.node().register("cb", &cb).unwrap();
    let to_b = a.system.block_on(a.node().lookup::<Counter>("cb")).unwrap();
    let to_a = b.system.block_on(b.node().lookup::<Counter>("ca")).unwrap();
    for i in 0..100 {
        to_b.tell(Add(i)).unwrap();
        to_a.tell(Add(i)).unwrap();
    }
    assert_eq!(
        a.system.block_on(to_b.ask(History)).unwrap(),
        (0..100).collect::<Vec<_>>()
    );
    assert_eq!(
        b.system.block_on(to_a.ask(History)).unwrap(),
        (0..100).collect::<Vec<_>>()
    );
}

/// Never answers `Nap` in time.
pub struct Sleeper;
impl odeon::Actor for Sleeper {}
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Nap;
impl odeon::Message for Nap {
    type Reply = ();
}
impl odeon::AsyncHandler<Nap> for Sleeper {
    async fn handle(&mut self, _: Nap, _: &mut odeon::Context<Self>) {
        tokio::time::sleep(Duration::from_secs(60)).await;
    }
}
odeon_remote::remote_actor!(Sleeper = "test.Sleeper" { Nap = "test.Nap" });
