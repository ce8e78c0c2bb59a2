//! Counting Actor (Savina #3, `shared/savina.md` §3.3): one producer sends N increments
//! back to back to a counter, then asks for the count.

use kameo::actor::ActorRef;
use kameo::message::{Context, Message};
use savina::protocol::expect_eq;
use savina::{Outcome, Params};
use tokio::sync::oneshot;

use crate::common::{self, Exit, plain_actor, tell};

struct Producer {
    n: u64,
    counter: ActorRef<Counter>,
    done: Option<oneshot::Sender<u64>>,
    _exit: Exit,
}

struct Counter {
    count: u64,
    _exit: Exit,
}

plain_actor!(Producer, Counter);

enum ProducerMsg {
    Increment,
    Result(u64),
}

enum CounterMsg {
    Increment,
    Retrieve(ActorRef<Producer>),
}

impl Message<ProducerMsg> for Producer {
    type Reply = ();

    async fn handle(&mut self, msg: ProducerMsg, ctx: &mut Context<Self, ()>) {
        match msg {
            ProducerMsg::Increment => {
                for _ in 0..self.n {
                    tell(&self.counter, CounterMsg::Increment);
                }
                tell(&self.counter, CounterMsg::Retrieve(ctx.actor_ref().clone()));
            }
            ProducerMsg::Result(count) => {
                if let Some(done) = self.done.take() {
                    let _ = done.send(count);
                }
                ctx.stop();
            }
        }
    }
}

impl Message<CounterMsg> for Counter {
    type Reply = ();

    async fn handle(&mut self, msg: CounterMsg, ctx: &mut Context<Self, ()>) {
        match msg {
            CounterMsg::Increment => self.count += 1,
            CounterMsg::Retrieve(sender) => {
                tell(&sender, ProducerMsg::Result(self.count));
                ctx.stop();
            }
        }
    }
}

pub fn run(params: &Params) -> Outcome {
    let n: u64 = params.get("n");
    common::run(params, |latch| async move {
        let (done, result) = oneshot::channel();
        let counter = common::spawn(Counter {
            count: 0,
            _exit: latch.enter(),
        });
        let producer = common::spawn(Producer {
            n,
            counter,
            done: Some(done),
            _exit: latch.enter(),
        });
        tell(&producer, ProducerMsg::Increment);
        let count = common::report(result).await?;
        expect_eq("count", count, n)
    })
}
