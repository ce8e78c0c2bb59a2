//! The smallest actor: spawn it, `tell` it, `ask` it, shut down.
//!
//! Run: `cargo run --release -p odeon --example hello`

use odeon::{Actor, Context, Handler, Message, StopReason, System};

/// An actor is a plain struct: its fields are private state that only its handlers touch.
struct Counter {
    total: u64,
}

impl Actor for Counter {
    fn stopped(&mut self, reason: &StopReason) {
        println!("counter stopped ({reason}) with total {}", self.total);
    }
}

/// A message names its reply type; `()` for fire-and-forget.
struct Add(u64);
impl Message for Add {
    type Reply = u64;
}

impl Handler<Add> for Counter {
    fn handle(&mut self, msg: Add, _cx: &mut Context<Self>) -> u64 {
        self.total += msg.0;
        self.total
    }
}

fn main() {
    let system = System::new(); // one worker per core
    let counter = system.spawn(Counter { total: 0 });

    // `tell` never blocks; it only fails if the actor has stopped (and gives the message back).
    counter.tell(Add(40)).expect("the counter is alive");
    println!("told: Add(40)");

    // `ask` returns a future of the reply; messages from one sender arrive in order.
    let total = system
        .block_on(counter.ask(Add(2)))
        .expect("the counter replies");
    println!("asked: Add(2) -> total = {total}");
    assert_eq!(total, 42);

    // Stops every actor and runs its hooks (here: `stopped`).
    let clean = system.shutdown();
    println!("shutdown complete (clean: {clean})");
}
