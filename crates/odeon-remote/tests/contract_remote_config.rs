//! `NodeBuilder` durations at their edge: `lost_after(Duration::MAX)` ("never declare
//! a silent peer lost") and `request_timeout(Duration::MAX)` are accepted, and a peer
//! that goes away afterwards panics no task of the node, which keeps serving.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]

mod common;

use std::sync::Mutex;
use std::time::Duration;

use common::*;
use odeon::ActorRef;

const LONG: Duration = Duration::from_secs(20);

/// Panics seen anywhere in this test process (tokio tasks included).
static PANICS: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn counter(m: &Member) -> ActorRef<Counter> {
    m.system.spawn(Counter {
        total: 0,
        seen: Vec::new(),
    })
}

fn find(m: &Member, name: &str) -> ActorRef<Counter> {
    eventually(LONG, || {
        m.system.block_on(m.node().lookup::<Counter>(name)).ok()
    })
    .expect("the name is found")
}

fn record_panics() {
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        PANICS.lock().unwrap().push(info.to_string());
        default_hook(info);
    }));
}

/// One test per process state: the panic hook is global.
#[test]
fn a_node_that_never_declares_peers_lost_survives_a_peer_going_away_and_a_cut_link() {
    record_panics();
    // On a thread of its own, so that a hang fails the test instead.
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        never_lost_survives_a_peer_going_away();
        never_lost_redials_after_a_cut_link();
        let _ = done.send(());
    });
    finished
        .recv_timeout(Duration::from_secs(120))
        .expect("the scenario finished (a link task that panicked never redials)");
    let panics = PANICS.lock().unwrap().clone();
    assert!(panics.is_empty(), "panics: {panics:#?}");
}

fn never_lost_survives_a_peer_going_away() {
    let a = start_tuned("a", &[], |b| {
        b.lost_after(Duration::MAX)
            .request_timeout(Duration::MAX)
            .spawnable::<Counter>()
    });
    let c = counter(&a);
    a.node().register("counter", &c).unwrap();

    let b = Member::start("b", &[a.addr()]);
    let on_b = find(&b, "counter");
    assert_eq!(b.system.block_on(on_b.ask(Add(1))), Ok(1));
    // b vanishes: a's link to it goes down.
    let Member {
        system: b_system,
        node: b_node,
    } = b;
    drop(b_node);
    drop(b_system);

    // A new node still reaches a, which kept its state.
    let d = Member::start("d", &[a.addr()]);
    let on_d = find(&d, "counter");
    assert_eq!(d.system.block_on(on_d.ask(Add(1))), Ok(2));
}

/// The link of a node that never declares its peer lost is cut (the connection
/// closes, no leave): it dials again, and the refs it holds work again once the link
/// is back, since the peer was never lost.
fn never_lost_redials_after_a_cut_link() {
    let (b, pb) = Member::start_behind_proxy("cb", &[], |b| b);
    let c = counter(&b);
    b.node().register("counter", &c).unwrap();
    // "ca" < "cb": a's dial is the link that wins.
    let a = start_tuned("ca", &[pb.addr()], |b| {
        b.lost_after(Duration::MAX).request_timeout(Duration::MAX)
    });
    let on_a = find(&a, "counter");
    assert_eq!(a.system.block_on(on_a.ask(Add(1)).timeout(LONG)), Ok(1));
    pb.cut();
    std::thread::sleep(Duration::from_millis(500));
    pb.restore();
    let total = eventually(LONG, || {
        a.system
            .block_on(on_a.ask(Add(1)).timeout(Duration::from_secs(2)))
            .ok()
    })
    .expect("the ref works again once the link is back");
    assert!(total >= 2, "{total}");
}
