//! Savina #3, Counting Actor (`savina.md` §3.3): a producer sends N increments back to
//! back to a counter, then asks for the count. The producer runs ahead, so this prices
//! enqueueing into a growing mailbox and draining it (one producer, one consumer).

use std::sync::mpsc;

use odeon::{ActorRef, Context, Handler};
use savina::protocol::expect_eq;
use savina::{Outcome, Params};

use super::{recv_n, settle, tell_only};
use crate::common;

/// Sends the increments and checks the count it gets back.
struct Producer {
    counter: ActorRef<Counter>,
    n: u64,
    done: mpsc::Sender<u64>,
}

/// Counts increments.
struct Counter {
    count: u64,
}

impl odeon::Actor for Producer {}
impl odeon::Actor for Counter {}

/// From the driver to Producer: start (Savina's `Increment` to the producer).
struct Start;
/// Producer to Counter: one more.
struct Increment;
/// Producer to Counter: reply with the count, then exit.
struct Retrieve(ActorRef<Producer>);
/// Counter's answer.
struct Result(u64);
tell_only!(Start, Increment, Retrieve, Result);

impl Handler<Start> for Producer {
    fn handle(&mut self, _: Start, cx: &mut Context<Self>) {
        // All of them inside this one handler, as in Savina.
        for _ in 0..self.n {
            let _ = self.counter.tell(Increment);
        }
        let _ = self.counter.tell(Retrieve(cx.myself()));
    }
}

impl Handler<Result> for Producer {
    fn handle(&mut self, Result(count): Result, cx: &mut Context<Self>) {
        let _ = self.done.send(count);
        cx.stop();
    }
}

impl Handler<Increment> for Counter {
    fn handle(&mut self, _: Increment, _: &mut Context<Self>) {
        self.count += 1;
    }
}

impl Handler<Retrieve> for Counter {
    fn handle(&mut self, Retrieve(sender): Retrieve, cx: &mut Context<Self>) {
        let _ = sender.tell(Result(self.count));
        cx.stop();
    }
}

/// One timed iteration.
pub(crate) fn run(params: &Params) -> Outcome {
    let n: u64 = params.get("n");
    Outcome::timed(|| {
        let system = common::system(params);
        let (tx, rx) = mpsc::channel();
        let counter = system.spawn(Counter { count: 0 });
        let producer = system.spawn(Producer {
            counter: counter.clone(),
            n,
            done: tx,
        });
        producer.tell(Start).map_err(|_| "Producer refused Start")?;
        let count = recv_n(&rx, 1)?;
        settle(system)?;
        drop((producer, counter));
        expect_eq("count", count.first().copied(), Some(n))
    })
}
