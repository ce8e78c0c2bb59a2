//! `NodeBuilder::inline_turns` (issue 19): remote asks and tells are answered, in
//! order, whether a link's reader may run the delivered turn itself (the default) or
//! hands every delivery to the pool.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]

mod common;

use std::time::Duration;

use common::*;
use odeon::System;
use odeon_remote::Node;

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
