//! `SpawnOptions` at its edges: the bound's extremes, and options combined.

use std::time::Duration;

use odeon::{
    Actor, ActorRef, AskError, Context, Handler, Message, SpawnOptions, StopReason, System,
    TellError,
};

const HANG_GUARD: Duration = Duration::from_secs(20);

fn small_system() -> System {
    System::builder().workers(2).build()
}

fn wait_stopped<A: Actor>(system: &System, actor: &ActorRef<A>) -> StopReason {
    let done = actor.wait_stopped();
    system.block_on(async {
        tokio::time::timeout(HANG_GUARD, done)
            .await
            .expect("the actor stopped in time")
    })
}

struct Sink(u32);
impl Actor for Sink {}
#[derive(Debug, PartialEq)]
struct Item;
impl Message for Item {
    type Reply = u32;
}
impl Handler<Item> for Sink {
    fn handle(&mut self, _: Item, _: &mut Context<Self>) -> u32 {
        self.0 += 1;
        self.0
    }
}

/// `bounded(capacity)` takes any `usize`: a bound too large to ever be reached is no
/// bound in practice, and spawning with it must not panic (tokio's semaphore, which
/// keeps the bound, refuses more than `usize::MAX >> 3` permits).
#[test]
fn a_bound_of_usize_max_spawns_and_accepts_messages() {
    let system = small_system();
    let a = system.spawn_with(Sink(0), SpawnOptions::new().bounded(usize::MAX));
    a.tell(Item).expect("room");
    assert_eq!(system.block_on(a.ask(Item)), Ok(2));
    assert_eq!(
        system.block_on(async { a.send(Item).await }),
        Ok(()),
        "send does not wait"
    );
    system.shutdown();
}

/// `bounded(0)`: "`tell` to a full mailbox fails with `TellError::Full`" — a mailbox
/// of no room is always full, and the actor can still be stopped (stops are not
/// messages a bound refuses).
#[test]
fn a_bound_of_zero_refuses_every_message_but_not_a_stop() {
    let system = small_system();
    let a = system.spawn_with(Sink(0), SpawnOptions::new().bounded(0));
    assert!(matches!(a.tell(Item), Err(TellError::Full(Item))));
    assert_eq!(system.block_on(a.ask(Item)), Err(AskError::Full));
    a.stop();
    assert_eq!(wait_stopped(&system, &a), StopReason::Normal);
    system.shutdown();
}

/// Every option together: a named, bounded, kept-alive actor on its own thread.
#[test]
fn all_options_combine() {
    let system = small_system();
    let weak = system
        .spawn_with(
            Sink(0),
            SpawnOptions::new()
                .name("all")
                .bounded(4)
                .blocking()
                .keep_alive(),
        )
        .downgrade();
    system.run_until_quiescent();
    let a = weak.upgrade().expect("kept alive with no strong ref");
    assert_eq!(a.name(), Some("all"));
    assert_eq!(system.block_on(a.ask(Item)), Ok(1));
    a.stop();
    assert_eq!(wait_stopped(&system, &a), StopReason::Normal);
    system.shutdown();
}
