//! Second contract pass: a moved actor's own `StopReason` (a panic, `cx.fail`, a stop)
//! reaches waiters on every node, as for an actor that never moved ("remote watchers
//! get the actor's own StopReason"; guarantee 5: `watch` works on a local and a
//! remote actor alike; mobility: "watchers stay attached across moves").

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]

mod common;

use std::time::Duration;

use common::{Member, eventually, mesh, node_name};
use odeon::{Actor, ActorRef, Context, Handler, Message, StopReason};
use odeon_remote::MigrateFromHandler;
use odeon_remote::wire::NodeId;
use serde::{Deserialize, Serialize};

const WAIT: Duration = Duration::from_secs(30);

#[derive(Default, Serialize, Deserialize)]
pub struct Rover;
impl Actor for Rover {}

#[derive(Serialize, Deserialize)]
pub struct Go(pub NodeId);
impl Message for Go {
    type Reply = ();
}
impl Handler<Go> for Rover {
    fn handle(&mut self, m: Go, cx: &mut Context<Self>) {
        cx.migrate_to(&m.0);
    }
}

#[derive(Serialize, Deserialize)]
pub struct At;
impl Message for At {
    type Reply = String;
}
impl Handler<At> for Rover {
    fn handle(&mut self, _: At, cx: &mut Context<Self>) -> String {
        node_name(&cx.system())
    }
}

#[derive(Serialize, Deserialize)]
pub struct Boom;
impl Message for Boom {
    type Reply = ();
}
impl Handler<Boom> for Rover {
    fn handle(&mut self, _: Boom, _: &mut Context<Self>) {
        panic!("rover boom");
    }
}

#[derive(Serialize, Deserialize)]
pub struct Fail;
impl Message for Fail {
    type Reply = ();
}
impl Handler<Fail> for Rover {
    fn handle(&mut self, _: Fail, cx: &mut Context<Self>) {
        cx.fail("rover failed");
    }
}

odeon_remote::mobile_actor!(Rover = "c2.Rover" {
    Go = "c2.Go",
    At = "c2.At",
    Boom = "c2.Boom",
    Fail = "c2.Fail",
});

fn lookup(m: &Member, name: &str) -> ActorRef<Rover> {
    eventually(WAIT, || {
        m.system.block_on(m.node().lookup::<Rover>(name)).ok()
    })
    .expect("the name is found")
}

/// Spawns a rover on `h` as `name`, moves it to `to`, and returns the refs of
/// (h: the stale local ref, to: a lookup there, b: a lookup there).
fn moved_rover(h: &Member, to: &Member, b: &Member, name: &str) -> [(usize, ActorRef<Rover>); 3] {
    let rover = h.system.spawn(Rover);
    h.node().register(name, &rover).unwrap();
    rover.tell(Go(to.node().id().clone())).unwrap();
    let on_to = eventually(WAIT, || {
        let r = lookup(to, name);
        let at = to.system.block_on(r.ask(At).timeout(WAIT)).ok()?;
        (at == to.node().id().name && r.is_local()).then_some(r)
    })
    .expect("the rover arrives");
    let on_b = lookup(b, name);
    assert_eq!(
        b.system.block_on(on_b.ask(At).timeout(WAIT)).unwrap(),
        to.node().id().name
    );
    [(0, rover), (1, on_to), (2, on_b)]
}

fn reasons_after(
    nodes: &[Member],
    refs: [(usize, ActorRef<Rover>); 3],
    act: impl FnOnce(&ActorRef<Rover>),
) -> Vec<StopReason> {
    let waits: Vec<_> = refs.iter().map(|(m, r)| (*m, r.wait_stopped())).collect();
    act(&refs[2].1);
    waits
        .into_iter()
        .map(|(m, done)| {
            nodes[m]
                .system
                .block_on(async { tokio::time::timeout(WAIT, done).await })
                .unwrap_or_else(|_| panic!("the wait on node {m} did not end"))
        })
        .collect()
}

#[test]
fn a_moved_actor_that_panics_is_seen_panicked_from_every_node() {
    let nodes = mesh(&["h", "a", "b"], |_, b| b.mobile::<Rover>());
    let refs = moved_rover(&nodes[0], &nodes[1], &nodes[2], "panicky");
    let reasons = reasons_after(&nodes, refs, |r| r.tell(Boom).unwrap());
    assert_eq!(
        reasons,
        vec![StopReason::Panicked("rover boom".into()); 3],
        "(birth node's stale ref, host, third node)"
    );
}

#[test]
fn a_moved_actor_that_fails_is_seen_failed_from_every_node() {
    let nodes = mesh(&["h", "a", "b"], |_, b| b.mobile::<Rover>());
    let refs = moved_rover(&nodes[0], &nodes[1], &nodes[2], "failing");
    let reasons = reasons_after(&nodes, refs, |r| r.tell(Fail).unwrap());
    assert_eq!(
        reasons,
        vec![StopReason::Failed("rover failed".into()); 3],
        "(birth node's stale ref, host, third node)"
    );
}

#[test]
fn a_moved_actor_killed_from_a_third_node_stops_normally_everywhere() {
    let nodes = mesh(&["h", "a", "b"], |_, b| b.mobile::<Rover>());
    let refs = moved_rover(&nodes[0], &nodes[1], &nodes[2], "killed");
    let reasons = reasons_after(&nodes, refs, |r| r.kill());
    assert_eq!(reasons, vec![StopReason::Normal; 3]);
}
