//! Three odeon nodes in one process, linked over loopback: a registry lookup, tells and
//! asks to a remote actor, a remote spawn, and a remote watch that sees a node leave.
//! Node c binds every interface (`0.0.0.0`) and advertises its loopback address, as a
//! node on a real network advertises the address the others reach it at.
//!
//! Run: `cargo run --release -p odeon-examples --example cluster`
//! (For one node per process, see the `odeon-node` binary in the README.)

#[path = "cluster/tally.rs"]
mod tally;

use std::time::Duration;

use odeon::System;
use odeon_remote::{Node, Secret};
use tally::{Add, Notices, Tally, Total, WatchIt, Watcher};

fn start(name: &str, seeds: &[std::net::SocketAddr], every_interface: bool) -> (System, Node) {
    let system = System::new();
    let secret = Secret::new("demo secret: change me in production").expect("16+ bytes");
    let mut b = Node::builder(name).secret(secret).spawnable::<Tally>();
    if every_interface {
        // Bound to every interface, the node must say where others reach it (port 0:
        // whatever port the OS bound).
        b = b
            .listen("0.0.0.0:0".parse().expect("an address"))
            .advertise("127.0.0.1:0".parse().expect("an address"));
    }
    for s in seeds {
        b = b.seed(*s);
    }
    let node = system
        .block_on(b.start(&system.handle()))
        .expect("the node starts on loopback");
    println!(
        "node {} bound to {}, reached at {}",
        node.id(),
        node.bound_addr(),
        node.listen_addr()
    );
    (system, node)
}

fn main() {
    let (sys_a, a) = start("a", &[], false);
    let (sys_b, b) = start("b", &[a.listen_addr()], false);
    let (sys_c, c) = start("c", &[a.listen_addr(), b.listen_addr()], true);

    // Node a hosts a tally and registers it by name.
    let tally = sys_a.spawn(Tally::default());
    a.register("tally", &tally).expect("name is free");

    // Node b finds it and talks to it like to any local actor.
    let remote = sys_b
        .block_on(b.lookup::<Tally>("tally"))
        .expect("registered on a");
    for n in 1..=10 {
        remote.tell(Add(n)).expect("a is up");
    }
    let total = sys_b.block_on(remote.ask(Total)).expect("a replies");
    println!("b: tally on a says {total}");

    // Node c starts a tally on b and uses it.
    let on_b = sys_c
        .block_on(c.spawn_on::<Tally>("b", 1000))
        .expect("b allows spawning tallies");
    on_b.tell(Add(1)).expect("b is up");
    println!(
        "c: tally spawned on b says {}",
        sys_c.block_on(on_b.ask(Total)).expect("b replies")
    );

    // Node c watches a's tally; then a leaves the cluster.
    let watcher = sys_c.spawn(Watcher::default());
    let remote_from_c = sys_c.block_on(c.lookup::<Tally>("tally")).expect("on a");
    sys_c
        .block_on(watcher.ask(WatchIt(remote_from_c.clone())))
        .expect("watcher up");
    sys_a.block_on(a.leave());
    let mut notices = Vec::new();
    for _ in 0..100 {
        notices = sys_c.block_on(watcher.ask(Notices)).expect("watcher up");
        if !notices.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    match notices.first() {
        Some(t) => println!("c: watched tally stopped: {}", t.reason),
        None => println!("c: no notice yet"),
    }
    println!(
        "c: asking it now fails: {:?}",
        sys_c.block_on(remote_from_c.ask(Total))
    );

    drop((b, c));
    for s in [sys_a, sys_b, sys_c] {
        s.shutdown();
    }
}
