//! Second contract pass over what issue 15 added to `ActorRef`, through a ref to an
//! actor on another node: `stop_gracefully` ("[`DrainError::NotLocal`] for an actor on
//! another node (nothing is sent)"), `send_after`/`send_interval`
//! ("[`TellError::NotRemote`] for an actor on another node" with the message back),
//! `ask_wait` ("for an actor on another node this is [`ActorRef::ask`]") and
//! `prefetch` (a hint: harmless on a remote ref).

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]

mod common;

use std::time::Duration;

use common::*;
use odeon::{ActorRef, Context, DrainError, Handler, Message, TellError};

const LONG: Duration = Duration::from_secs(20);

/// A local-only, cloneable message the counter handles (never sent here).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Ping(u32);
impl Message for Ping {
    type Reply = ();
}
impl Handler<Ping> for Counter {
    fn handle(&mut self, _: Ping, _: &mut Context<Self>) {}
}

/// `a` hosts a counter registered as `name`; `b` gets a remote ref to it.
fn remote_counter(a: &Member, b: &Member, name: &str) -> (ActorRef<Counter>, ActorRef<Counter>) {
    let local = a.system.spawn(Counter {
        total: 0,
        seen: Vec::new(),
    });
    a.node().register(name, &local).unwrap();
    let remote = eventually(LONG, || {
        b.system.block_on(b.node().lookup::<Counter>(name)).ok()
    })
    .expect("b finds the counter");
    assert!(!remote.is_local());
    assert_eq!(b.system.block_on(remote.ask(Add(1))), Ok(1));
    (local, remote)
}

#[test]
fn the_outside_calls_of_issue_15_on_a_remote_ref() {
    let a = Member::start("a", &[]);
    let b = Member::start("b", &[a.addr()]);
    let (local, remote) = remote_counter(&a, &b, "counter");

    // stop_gracefully: NotLocal, and nothing is sent.
    assert_eq!(remote.stop_gracefully(), Err(DrainError::NotLocal));
    assert_eq!(
        b.system.block_on(remote.ask(Add(1)).timeout(LONG)),
        Ok(2),
        "the remote actor was drained or stopped"
    );
    assert!(local.is_alive());

    // Timers are local: the message comes back.
    assert!(matches!(
        remote.send_after(Duration::from_millis(1), Ping(1)),
        Err(TellError::NotRemote(Ping(1)))
    ));
    assert!(matches!(
        remote.send_interval(Duration::from_millis(1), Ping(2)),
        Err(TellError::NotRemote(Ping(2)))
    ));
    assert!(matches!(
        remote.send_after(Duration::ZERO, Ping(3)),
        Err(TellError::NotRemote(Ping(3)))
    ));

    // ask_wait is ask: answered, in order with the asks before it.
    let asks: Vec<_> = (0..10).map(|_| remote.ask_wait(Add(1))).collect();
    for (n, ask) in (3..).zip(asks) {
        assert_eq!(b.system.block_on(ask.timeout(LONG)), Ok(n));
    }

    // prefetch: a hint, nothing happens.
    remote.prefetch();
    assert_eq!(
        b.system
            .block_on(remote.ask(History).timeout(LONG))
            .unwrap()
            .len(),
        12
    );

    // After the actor stops: still NotLocal / NotRemote (the ref is remote), and
    // ask_wait fails as ask does.
    local.stop();
    assert!(a.system.block_on(async {
        tokio::time::timeout(LONG, local.wait_stopped())
            .await
            .is_ok()
    }));
    assert!(b.system.block_on(async {
        tokio::time::timeout(LONG, remote.wait_stopped())
            .await
            .is_ok()
    }));
    assert_eq!(remote.stop_gracefully(), Err(DrainError::NotLocal));
    assert!(matches!(
        remote.send_after(Duration::from_millis(1), Ping(4)),
        Err(TellError::NotRemote(Ping(4)))
    ));
    let asked = b.system.block_on(remote.ask_wait(Add(1)).timeout(LONG));
    let plain = b.system.block_on(remote.ask(Add(1)).timeout(LONG));
    assert!(asked.is_err(), "{asked:?}");
    assert_eq!(asked, plain, "ask_wait on a remote ref is ask");
}
