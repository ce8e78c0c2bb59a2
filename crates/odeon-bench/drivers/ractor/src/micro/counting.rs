//! Counting Actor (Savina #3, `shared/savina.md` §3.3): one producer sends N increments
//! back to back to a counter, then asks for the count.

use ractor::{Actor, ActorProcessingErr, ActorRef};
use savina::protocol::expect_eq;
use savina::{Outcome, Params};
use tokio::sync::oneshot;

use crate::common::{self, Exit, state_from_args, tell};

struct ProducerActor;
struct CounterActor;

struct Producer {
    n: u64,
    counter: ActorRef<CounterMsg>,
    done: Option<oneshot::Sender<u64>>,
    _exit: Exit,
}

struct Counter {
    count: u64,
    _exit: Exit,
}

enum ProducerMsg {
    Increment,
    Result(u64),
}

enum CounterMsg {
    Increment,
    Retrieve(ActorRef<ProducerMsg>),
}

impl Actor for ProducerActor {
    type Msg = ProducerMsg;
    type State = Producer;
    type Arguments = Producer;

    state_from_args!();

    async fn handle(
        &self,
        myself: ActorRef<ProducerMsg>,
        msg: ProducerMsg,
        st: &mut Producer,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            ProducerMsg::Increment => {
                for _ in 0..st.n {
                    tell(&st.counter, CounterMsg::Increment);
                }
                tell(&st.counter, CounterMsg::Retrieve(myself));
            }
            ProducerMsg::Result(count) => {
                if let Some(done) = st.done.take() {
                    let _ = done.send(count);
                }
                myself.stop(None);
            }
        }
        Ok(())
    }
}

impl Actor for CounterActor {
    type Msg = CounterMsg;
    type State = Counter;
    type Arguments = Counter;

    state_from_args!();

    async fn handle(
        &self,
        myself: ActorRef<CounterMsg>,
        msg: CounterMsg,
        st: &mut Counter,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            CounterMsg::Increment => st.count += 1,
            CounterMsg::Retrieve(sender) => {
                tell(&sender, ProducerMsg::Result(st.count));
                myself.stop(None);
            }
        }
        Ok(())
    }
}

pub fn run(params: &Params) -> Outcome {
    let n: u64 = params.get("n");
    common::run(params, |latch| async move {
        let (done, result) = oneshot::channel();
        let counter = Counter {
            count: 0,
            _exit: latch.enter(),
        };
        let counter = common::spawn(CounterActor, counter).await;
        let producer = Producer {
            n,
            counter,
            done: Some(done),
            _exit: latch.enter(),
        };
        let producer = common::spawn(ProducerActor, producer).await;
        tell(&producer, ProducerMsg::Increment);
        let count = common::report(result).await?;
        expect_eq("count", count, n)
    })
}
