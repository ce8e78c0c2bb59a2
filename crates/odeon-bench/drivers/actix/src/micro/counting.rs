//! Counting Actor (Savina #3, `shared/savina.md` §3.3): one producer floods a counter
//! with N increments from a single handler, then asks for the count.

use actix::{Actor, ActorContext, Addr, AsyncContext, Context, Handler, Message};
use savina::{Outcome, Params, protocol::expect_eq};

use crate::common::{Live, Rt, Slot, Variant, run_system};

/// To the Producer: start; to the Counter: count one.
#[derive(Message)]
#[rtype(result = "()")]
struct Increment;

#[derive(Message)]
#[rtype(result = "()")]
struct Retrieve(Addr<Producer>);

#[derive(Message)]
#[rtype(result = "()")]
struct CountResult(u64);

struct Producer {
    me: Addr<Producer>,
    counter: Addr<Counter>,
    n: u64,
    report: Slot<u64>,
    _live: Live,
}

impl Actor for Producer {
    type Context = Context<Self>;
}

impl Handler<Increment> for Producer {
    type Result = ();
    fn handle(&mut self, _: Increment, _: &mut Context<Self>) {
        for _ in 0..self.n {
            self.counter.do_send(Increment);
        }
        self.counter.do_send(Retrieve(self.me.clone()));
    }
}

impl Handler<CountResult> for Producer {
    type Result = ();
    fn handle(&mut self, CountResult(count): CountResult, ctx: &mut Context<Self>) {
        self.report.put(count);
        ctx.stop();
    }
}

struct Counter {
    count: u64,
    _live: Live,
}

impl Actor for Counter {
    type Context = Context<Self>;
}

impl Handler<Increment> for Counter {
    type Result = ();
    fn handle(&mut self, _: Increment, _: &mut Context<Self>) {
        self.count += 1;
    }
}

impl Handler<Retrieve> for Counter {
    type Result = ();
    fn handle(&mut self, Retrieve(sender): Retrieve, ctx: &mut Context<Self>) {
        sender.do_send(CountResult(self.count));
        ctx.stop();
    }
}

pub(crate) fn run(params: &Params, variant: Variant) -> Outcome {
    let n: u64 = params.get("n");
    let result = Slot::new();
    let elapsed = run_system(variant, |rt: &Rt| {
        // The Producer holds the Counter's only address until it has sent Retrieve,
        // and the Counter stops on Retrieve: no auto-stop can cut it short.
        let counter = rt.spawn(|_, live| Counter {
            count: 0,
            _live: live,
        });
        let report = result.clone();
        let producer = rt.spawn(move |ctx, live| Producer {
            me: ctx.address(),
            counter,
            n,
            report,
            _live: live,
        });
        producer.do_send(Increment);
    });
    let check = result
        .take("the Producer")
        .and_then(|count| expect_eq("count", count, n));
    Outcome::new(elapsed, check)
}
