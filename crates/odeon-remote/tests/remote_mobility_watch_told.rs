//! A watch of a mobile actor is always told something (issue 14): its `Watch` item is
//! a request that can fail back, so a watch made after the actor stopped, or one
//! whose item finds no actor, ends instead of waiting forever. A host whose actor
//! stopped tells a late watcher the reason it recorded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]

mod common;

use std::time::Duration;

use common::*;
use odeon::{Actor, ActorRef, Context, Handler, Message, StopReason, Terminated};
use odeon_remote::MigrateExt;
use serde::{Deserialize, Serialize};

#[derive(Default, Serialize, Deserialize)]
struct Spot;
impl Actor for Spot {}

#[derive(Serialize, Deserialize)]
struct Ping;
impl Message for Ping {
    type Reply = u32;
}
impl Handler<Ping> for Spot {
    fn handle(&mut self, _: Ping, _: &mut Context<Self>) -> u32 {
        7
    }
}

#[derive(Serialize, Deserialize)]
struct Crash;
impl Message for Crash {
    type Reply = ();
}
impl Handler<Crash> for Spot {
    fn handle(&mut self, _: Crash, _: &mut Context<Self>) {
        panic!("crash on request");
    }
}

odeon_remote::mobile_actor!(Spot = "told.Spot" { Ping = "told.Ping", Crash = "told.Crash" });

/// Records the notices it gets; watches a `Spot` on request.
#[derive(Default)]
struct Observer(Vec<Terminated>);
impl Actor for Observer {}
impl Handler<Terminated> for Observer {
    fn handle(&mut self, t: Terminated, _: &mut Context<Self>) {
        self.0.push(t);
    }
}
struct WatchIt(ActorRef<Spot>);
impl Message for WatchIt {
    type Reply = ();
}
impl Handler<WatchIt> for Observer {
    fn handle(&mut self, m: WatchIt, cx: &mut Context<Self>) {
        cx.watch(&m.0);
    }
}
struct Notices;
impl Message for Notices {
    type Reply = Vec<Terminated>;
}
impl Handler<Notices> for Observer {
    fn handle(&mut self, _: Notices, _: &mut Context<Self>) -> Vec<Terminated> {
        self.0.clone()
    }
}

const WAIT: Duration = Duration::from_secs(20);

/// Nodes a, b, c; a `Spot` born on a and moved to b, with a ref to it on every node.
fn moved_spot(prefix: &str) -> (Vec<Member>, Vec<ActorRef<Spot>>) {
    let names: Vec<String> = ["a", "b", "c"]
        .iter()
        .map(|n| format!("{prefix}-{n}"))
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let nodes = mesh(&names, |_, b| b.mobile::<Spot>());
    let spot = nodes[0].system.spawn(Spot);
    nodes[0].node().register("spot", &spot).unwrap();
    let refs: Vec<ActorRef<Spot>> = nodes
        .iter()
        .map(|m| {
            eventually(WAIT, || {
                m.system.block_on(m.node().lookup::<Spot>("spot")).ok()
            })
            .expect("the name is found")
        })
        .collect();
    let moved = nodes[0]
        .system
        .block_on(spot.migrate_to(nodes[1].node().id()));
    assert!(moved.is_ok(), "{moved:?}");
    (nodes, refs)
}

fn stopped(m: &Member, r: &ActorRef<Spot>) {
    eventually(WAIT, || {
        m.system
            .block_on(r.ask(Ping).timeout(Duration::from_secs(2)))
            .is_err()
            .then_some(())
    })
    .expect("the actor stopped");
}

/// The notices `o` got once one arrived (`None`: none within [`WAIT`]), after a grace
/// period for duplicates.
fn told(m: &Member, o: &ActorRef<Observer>) -> Option<Vec<Terminated>> {
    let notices = || m.system.block_on(o.ask(Notices)).expect("observer answers");
    eventually(WAIT, || (!notices().is_empty()).then_some(()))?;
    std::thread::sleep(Duration::from_millis(300));
    Some(notices())
}

#[test]
fn a_watch_made_after_the_moved_actor_stopped_is_told_its_end() {
    let (nodes, refs) = moved_spot("late1");
    let c = &nodes[2];
    refs[2].stop();
    stopped(c, &refs[2]);
    let watcher = c.system.spawn(Observer::default());
    c.system
        .block_on(watcher.ask(WatchIt(refs[2].clone())))
        .unwrap();
    let got = told(c, &watcher).expect("the late watcher is told the actor's end");
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].id, refs[2].id());
    // Nobody watched the actor when it stopped, so its host kept no reason: the
    // watcher is told `Normal`, as for a stopped actor that never moved.
    assert_eq!(got[0].reason, StopReason::Normal);
}

#[test]
fn a_late_watcher_is_told_the_reason_the_actor_stopped_with() {
    let (nodes, refs) = moved_spot("late2");
    let (a, c) = (&nodes[0], &nodes[2]);
    // An early watcher on a: the host watches its cell and records the end.
    let early = a.system.spawn(Observer::default());
    a.system
        .block_on(early.ask(WatchIt(refs[0].clone())))
        .unwrap();
    assert_eq!(c.system.block_on(refs[2].ask(Ping)), Ok(7));
    refs[2].tell(Crash).unwrap();
    let first = told(a, &early).expect("the early watcher is told");
    assert_eq!(first.len(), 1, "{first:?}");
    assert!(first[0].reason.is_failure(), "{:?}", first[0].reason);
    // A watch made afterwards, from another node, is told the same reason.
    let late = c.system.spawn(Observer::default());
    c.system
        .block_on(late.ask(WatchIt(refs[2].clone())))
        .unwrap();
    let got = told(c, &late).expect("the late watcher is told the actor's end");
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].reason, first[0].reason);
}

#[test]
fn a_watch_from_a_node_the_actor_left_after_it_stopped_is_told_its_end() {
    // Through the stale local ref on the birth node (its stub), not a remote ref.
    let (nodes, refs) = moved_spot("late3");
    let a = &nodes[0];
    refs[1].stop();
    stopped(a, &refs[0]);
    let watcher = a.system.spawn(Observer::default());
    a.system
        .block_on(watcher.ask(WatchIt(refs[0].clone())))
        .unwrap();
    let got = told(a, &watcher).expect("the watcher is told the actor's end");
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].reason, StopReason::Normal);
}
