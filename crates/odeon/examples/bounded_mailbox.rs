//! Backpressure: a slow consumer with a mailbox bounded to 8 messages. The producer's
//! `tell` fails with `TellError::Full` once the mailbox is full (the message comes back);
//! `send(..).await` instead waits for room, so the producer runs at the consumer's pace.
//!
//! Run: `cargo run --release -p odeon --example bounded_mailbox`

use std::time::{Duration, Instant};

use odeon::{Actor, ActorRef, AsyncHandler, Context, Message, SpawnOptions, System, TellError};
use tokio::sync::oneshot;

/// Mailbox capacity of the consumer.
const CAPACITY: usize = 8;
/// Items the producer sends in total.
const ITEMS: u32 = 100;
/// Time the consumer sleeps on each item (tokio timers round it up to about 2 ms).
const ITEM_COST: Duration = Duration::from_millis(1);

/// Handles items slowly, and checks that they arrive in order.
struct Consumer {
    next: u32,
    out_of_order: u32,
    first: Option<Instant>,
    done: Option<oneshot::Sender<Stats>>,
}

/// What the consumer saw, sent when it has handled every item.
struct Stats {
    handled: u32,
    out_of_order: u32,
    per_item: Duration,
}
impl Actor for Consumer {}

struct Item(u32);
impl Message for Item {
    type Reply = ();
}

impl AsyncHandler<Item> for Consumer {
    async fn handle(&mut self, msg: Item, _cx: &mut Context<Self>) {
        let first = *self.first.get_or_insert_with(Instant::now);
        tokio::time::sleep(ITEM_COST).await; // slow work that does not hold a worker
        if msg.0 != self.next {
            self.out_of_order += 1;
        }
        self.next = msg.0 + 1;
        if self.next == ITEMS {
            if let Some(done) = self.done.take() {
                let _ = done.send(Stats {
                    handled: self.next,
                    out_of_order: self.out_of_order,
                    per_item: first.elapsed() / ITEMS,
                });
            }
        }
    }
}

/// Sends `ITEMS` items to the consumer: `tell` until full, then `send(..).await`.
struct Producer {
    consumer: ActorRef<Consumer>,
}
impl Actor for Producer {}

/// Runs the producer; replies with what happened.
struct Run;
impl Message for Run {
    type Reply = Report;
}

#[derive(Debug)]
struct Report {
    told: u32,
    rejected: Option<u32>,
    sent: u32,
    send_time: Duration,
}

impl AsyncHandler<Run> for Producer {
    async fn handle(&mut self, _: Run, _cx: &mut Context<Self>) -> Report {
        let mut next = 0;
        let mut rejected = None;
        // 1. `tell` never waits: once the mailbox is full it gives the item back.
        while next < ITEMS {
            match self.consumer.tell(Item(next)) {
                Ok(()) => next += 1,
                Err(TellError::Full(item)) => {
                    rejected = Some(item.0);
                    break;
                }
                // Stopped (or, for a remote consumer, unreachable): nothing more to do.
                Err(_) => return Report::stopped(next),
            }
        }
        let told = next;
        // 2. `send(..).await` waits for room; this actor's worker is free meanwhile.
        let start = Instant::now();
        while next < ITEMS {
            if self.consumer.send(Item(next)).await.is_err() {
                return Report::stopped(told);
            }
            next += 1;
        }
        Report {
            told,
            rejected,
            sent: next - told,
            send_time: start.elapsed(),
        }
    }
}

impl Report {
    fn stopped(told: u32) -> Self {
        Report {
            told,
            rejected: None,
            sent: 0,
            send_time: Duration::ZERO,
        }
    }
}

fn main() {
    let system = System::new();
    let (done_tx, done_rx) = oneshot::channel();
    let consumer = system.spawn_with(
        Consumer {
            next: 0,
            out_of_order: 0,
            first: None,
            done: Some(done_tx),
        },
        SpawnOptions::new().bounded(CAPACITY),
    );
    println!(
        "consumer: mailbox bounded to {CAPACITY}, sleeps {} ms per item; producer: {ITEMS} items",
        ITEM_COST.as_millis()
    );
    let producer = system.spawn(Producer { consumer });

    let report = system
        .block_on(producer.ask(Run).timeout(Duration::from_secs(10)))
        .expect("the producer finishes");
    let stats = system
        .block_on(done_rx)
        .expect("the consumer reports when it has every item");
    match report.rejected {
        Some(item) => println!(
            "tell:     {} items accepted, then Full: item {item} came back to the producer",
            report.told
        ),
        None => println!("tell:     {} items accepted, never full", report.told),
    }
    println!(
        "send:     {} more items, each waiting for room: {:.2} ms per item",
        report.sent,
        (report.send_time / report.sent.max(1)).as_secs_f64() * 1e3
    );
    println!(
        "consumer: handled {} of {ITEMS} items, {} out of order, {:.2} ms per item",
        stats.handled,
        stats.out_of_order,
        stats.per_item.as_secs_f64() * 1e3
    );
    println!(
        "the producer ran at the consumer's pace: at most {CAPACITY} items ever waited in the mailbox"
    );
    system.shutdown();
}
