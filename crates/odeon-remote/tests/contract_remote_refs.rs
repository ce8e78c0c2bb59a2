//! What `ActorRef`'s rustdoc promises for a ref to an actor on another node, checked
//! through a registry lookup: `wait_stopped` ("the wait ends when its node reports the
//! stop or is lost"), `kill` ("For an actor on another node this is
//! [`ActorRef::stop`]"), `is_alive` ("is not known to have stopped, and its node is not
//! known to be lost"), and `tell`/`ask` once the actor is gone. A remote watcher sees
//! the actor's own `StopReason`, as a local one would (guarantee 5: `watch` works on a
//! local and a remote actor alike).

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]

mod common;

use std::time::Duration;

use common::*;
use odeon::{ActorRef, AskError, StopReason, TellError};

const LONG: Duration = Duration::from_secs(20);

fn counter(m: &Member) -> ActorRef<Counter> {
    m.system.spawn(Counter {
        total: 0,
        seen: Vec::new(),
    })
}

/// `a` hosts a counter registered as `name`; `b` gets a remote ref to it.
fn remote_counter(a: &Member, b: &Member, name: &str) -> (ActorRef<Counter>, ActorRef<Counter>) {
    let local = counter(a);
    a.node().register(name, &local).unwrap();
    let remote = eventually(LONG, || {
        b.system.block_on(b.node().lookup::<Counter>(name)).ok()
    })
    .expect("b finds the counter");
    assert!(!remote.is_local());
    // The link is up and the actor answers.
    assert_eq!(b.system.block_on(remote.ask(Add(1))), Ok(1));
    (local, remote)
}

fn wait(m: &Member, actor: &ActorRef<Counter>) -> StopReason {
    let done = actor.wait_stopped();
    m.system.block_on(async {
        tokio::time::timeout(LONG, done)
            .await
            .expect("the wait ended in time")
    })
}

#[test]
fn wait_stopped_on_a_remote_ref_ends_with_the_actors_own_reason() {
    let a = Member::start("a", &[]);
    let b = Member::start("b", &[a.addr()]);
    let (_halting, remote_halting) = remote_counter(&a, &b, "halting");
    let (_crashing, remote_crashing) = remote_counter(&a, &b, "crashing");

    let halted = remote_halting.wait_stopped();
    remote_halting.tell(Halt).unwrap();
    let reason = b
        .system
        .block_on(async { tokio::time::timeout(LONG, halted).await.expect("in time") });
    assert_eq!(reason, StopReason::Normal);

    remote_crashing.tell(Crash).unwrap();
    assert_eq!(
        wait(&b, &remote_crashing),
        StopReason::Panicked("asked to crash".into())
    );

    // Known to have stopped: not alive, and sends fail at once with `Stopped`.
    assert!(!remote_halting.is_alive());
    assert!(!remote_crashing.is_alive());
    assert!(matches!(
        remote_halting.tell(Add(1)),
        Err(TellError::Stopped(Add(1)))
    ));
    assert_eq!(
        b.system.block_on(remote_halting.ask(Add(1)).timeout(LONG)),
        Err(AskError::Stopped)
    );
    // An already stopped remote actor: the wait ends at once, with the same reason.
    assert_eq!(wait(&b, &remote_halting), StopReason::Normal);
}

#[test]
fn kill_and_stop_on_a_remote_ref_both_stop_it_normally() {
    let a = Member::start("a", &[]);
    let b = Member::start("b", &[a.addr()]);
    let (local_killed, remote_killed) = remote_counter(&a, &b, "killed");
    let (local_stopped, remote_stopped) = remote_counter(&a, &b, "stopped");

    remote_killed.kill();
    remote_stopped.stop();
    // The wire carries only stop requests: both stop with `Normal`, seen on both sides.
    assert_eq!(wait(&b, &remote_killed), StopReason::Normal);
    assert_eq!(wait(&b, &remote_stopped), StopReason::Normal);
    assert_eq!(wait(&a, &local_killed), StopReason::Normal);
    assert_eq!(wait(&a, &local_stopped), StopReason::Normal);
}

#[test]
fn wait_stopped_on_a_remote_ref_ends_with_node_lost_when_its_node_vanishes() {
    let a = Member::start("a", &[]);
    let b = Member::start("b", &[a.addr()]);
    let (_local, remote) = remote_counter(&a, &b, "doomed");
    let waiting = remote.wait_stopped();

    let Member {
        system: a_system,
        node: a_node,
    } = a;
    drop(a_node);
    let reason = b.system.block_on(async {
        tokio::time::timeout(LONG, waiting)
            .await
            .expect("the loss ends the wait")
    });
    assert_eq!(reason, StopReason::NodeLost);
    assert!(!remote.is_alive());
    assert_eq!(
        b.system.block_on(remote.ask(Add(1)).timeout(LONG)),
        Err(AskError::Unreachable),
        "a ref to a lost node fails at once"
    );
    // A wait started after the loss ends at once too.
    assert_eq!(wait(&b, &remote), StopReason::NodeLost);
    drop(a_system);
}
