//! `SystemBuilder::block_on_spin` and `NodeBuilder::read_spin` (issue 19): with a
//! blocking caller that spins before it parks and link readers that poll their socket
//! while a reply is likely next, remote asks and tells are still answered, in order,
//! and a reply slower than every spin still arrives (after the spins ran out).

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]

mod common;

use std::time::{Duration, Instant};

use common::sharing::{counter_on, lookup_from};
use common::*;
use odeon::{Actor, Context, Handler, Message, System};
use odeon_remote::Node;
use serde::{Deserialize, Serialize};

/// A generous guard: fail instead of hang.
const GUARD: Duration = Duration::from_secs(30);

fn member(name: &str, seeds: &[std::net::SocketAddr], spin: Duration) -> Member {
    let system = System::builder().block_on_spin(spin).build();
    let mut b = Node::builder(name)
        .secret(secret())
        .lost_after(Duration::from_secs(30))
        .read_spin(spin);
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

/// Replies after sleeping as long as it is told: longer than any spin here.
struct Slow;
impl Actor for Slow {}
#[derive(Serialize, Deserialize)]
struct After(u64, u64);
impl Message for After {
    type Reply = u64;
}
impl Handler<After> for Slow {
    fn handle(&mut self, m: After, _: &mut Context<Self>) -> u64 {
        std::thread::sleep(Duration::from_millis(m.0));
        m.1
    }
}
odeon_remote::remote_actor!(Slow = "test.spin.Slow" { After = "test.spin.After" });

fn answered_in_order(spin: Duration) {
    let a = member("a", &[], spin);
    let b = member("b", &[a.addr()], spin);
    let counter = counter_on(&a, "c");
    let slow = a.system.spawn(Slow);
    a.node().register("slow", &slow).unwrap();
    let remote = lookup_from::<Counter>(&b, "c");
    let remote_slow = lookup_from::<Slow>(&b, "slow");
    let start = Instant::now();
    let mut total = 0;
    for i in 1..=2_000u64 {
        total += i;
        if i % 2 == 0 {
            // Back-to-back asks: each reply is what the reader polls for.
            assert_eq!(b.system.block_on(remote.ask(Add(i))), Ok(total));
        } else {
            remote.tell(Add(i)).unwrap();
        }
        if i % 500 == 0 {
            // A reply that comes after every spin has run out: the caller has parked
            // and the reader waits for readiness; both still get it.
            let ask = remote_slow.ask(After(20, i)).timeout(GUARD);
            assert_eq!(b.system.block_on(ask), Ok(i));
        }
        assert!(start.elapsed() < GUARD, "asks stopped being answered");
    }
    let seen = a.system.block_on(counter.ask(History)).unwrap();
    assert_eq!(seen, (1..=2_000).collect::<Vec<_>>(), "in the order sent");
}

#[test]
fn with_spinning_callers_and_polling_readers() {
    answered_in_order(Duration::from_micros(50));
}

#[test]
fn with_long_spins() {
    // Spins longer than most round trips here: the replies land during them.
    answered_in_order(Duration::from_millis(2));
}

#[test]
fn with_the_knobs_off() {
    answered_in_order(Duration::ZERO);
}
