//! `NodeBuilder::inline_turns` (issue 19): remote asks and tells are answered, in
//! order, whether a link's reader may run the delivered turn itself or hands every
//! delivery to the pool (the default), and by default an actor that blocks its thread
//! does not hold up the node's other actors (guarantee 3).

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]

mod common;

use std::time::Duration;

use common::*;
use odeon::{Actor, Context, Handler, Message, System};
use odeon_remote::Node;
use serde::{Deserialize, Serialize};

fn member(name: &str, seeds: &[std::net::SocketAddr], inline: bool) -> Member {
    let system = System::new();
    let mut b = Node::builder(name)
        .secret(secret())
        .lost_after(Duration::from_millis(1_500))
        .gossip_interval(Duration::from_millis(100))
        .inline_turns(inline)
        .spawnable::<Counter>();
    for s in seeds {
        b = b.seed(*s);
    }
    let node = system
        .block_on(b.start(&system.handle()))
        .expect("node starts");
    Member {
        system,
        node: Some(node),
    }
}

fn asks_and_tells_keep_their_order(server_inline: bool) {
    let a = member("a", &[], server_inline);
    let b = member("b", &[a.addr()], !server_inline);
    let counter = a.system.spawn(Counter {
        total: 0,
        seen: Vec::new(),
    });
    a.node().register("c", &counter).unwrap();
    let remote = b
        .system
        .block_on(b.node().lookup::<Counter>("c"))
        .expect("found");
    let mut total = 0;
    for i in 1..=300u64 {
        total += i;
        if i % 3 == 0 {
            // Spaced asks: the server's pool parks between them, so that with inline
            // turns on the reader runs them.
            std::thread::sleep(Duration::from_micros(200));
            assert_eq!(b.system.block_on(remote.ask(Add(i))), Ok(total));
        } else {
            remote.tell(Add(i)).unwrap();
        }
    }
    let seen = a.system.block_on(counter.ask(History)).unwrap();
    assert_eq!(seen, (1..=300).collect::<Vec<_>>(), "in the order sent");
}

#[test]
fn with_inline_turns_on_the_server() {
    asks_and_tells_keep_their_order(true);
}

#[test]
fn with_inline_turns_off_on_the_server() {
    asks_and_tells_keep_their_order(false);
}

/// Blocks its thread for as long as it is told (what guarantee 3 says odeon survives).
struct Sleeper;
impl Actor for Sleeper {}
#[derive(Serialize, Deserialize)]
struct Nap(u64);
impl Message for Nap {
    type Reply = ();
}
impl Handler<Nap> for Sleeper {
    fn handle(&mut self, m: Nap, _: &mut Context<Self>) {
        std::thread::sleep(Duration::from_millis(m.0));
    }
}
odeon_remote::remote_actor!(Sleeper = "test.inline.Sleeper" { Nap = "test.inline.Nap" });

#[test]
fn by_default_a_remote_actor_that_blocks_does_not_hold_up_the_others() {
    // Both nodes with the builder's defaults (inline turns not asked for).
    let start = |name: &str, seeds: &[std::net::SocketAddr]| {
        let system = System::new();
        let mut b = Node::builder(name)
            .secret(secret())
            .lost_after(Duration::from_secs(30))
            .spawnable::<Counter>();
        for s in seeds {
            b = b.seed(*s);
        }
        let node = system
            .block_on(b.start(&system.handle()))
            .expect("node starts");
        Member {
            system,
            node: Some(node),
        }
    };
    let a = start("a", &[]);
    let b = start("b", &[a.addr()]);
    let sleeper = a.system.spawn(Sleeper);
    let counter = a.system.spawn(Counter {
        total: 0,
        seen: Vec::new(),
    });
    a.node().register("sleeper", &sleeper).unwrap();
    a.node().register("counter", &counter).unwrap();
    let sleeper = b
        .system
        .block_on(b.node().lookup::<Sleeper>("sleeper"))
        .expect("found");
    let counter = b
        .system
        .block_on(b.node().lookup::<Counter>("counter"))
        .expect("found");
    // Let a's pool park, then block one of its actors for 20 s.
    std::thread::sleep(Duration::from_millis(50));
    sleeper.tell(Nap(20_000)).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    // Had the reader thread run the nap, nothing else from b would be read for 20 s
    // and this ask would time out.
    for i in 1..=3u64 {
        let got = b
            .system
            .block_on(counter.ask(Add(1)).timeout(Duration::from_secs(10)));
        assert_eq!(got, Ok(i), "the counter answers while the sleeper blocks");
    }
}
