//! Fibonacci (Savina #6, `shared/savina.md` §3.6): a recursive fork-join tree of
//! short-lived actors; every request n > 2 creates two children.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use actix::{Actor, ActorContext, Addr, AsyncContext, Context, Handler, Message};
use savina::{Outcome, Params};

use crate::common::{Live, Rt, Slot, Variant, run_system};

#[derive(Message)]
#[rtype(result = "()")]
struct Request(u32);

#[derive(Message)]
#[rtype(result = "()")]
struct Response(u64);

struct FibActor {
    me: Addr<FibActor>,
    /// `None` for the root, which reports to the driver instead.
    parent: Option<Addr<FibActor>>,
    result: u64,
    responses: u8,
    rt: Rt,
    created: Arc<AtomicU64>,
    report: Slot<u64>,
    _live: Live,
}

impl Actor for FibActor {
    type Context = Context<Self>;
}

impl FibActor {
    fn spawn(
        rt: &Rt,
        parent: Option<Addr<FibActor>>,
        created: &Arc<AtomicU64>,
        report: &Slot<u64>,
    ) -> Addr<FibActor> {
        created.fetch_add(1, Ordering::Relaxed);
        let (child_rt, created, report) = (rt.clone(), Arc::clone(created), report.clone());
        rt.spawn(move |ctx, live| FibActor {
            me: ctx.address(),
            parent,
            result: 0,
            responses: 0,
            rt: child_rt,
            created,
            report,
            _live: live,
        })
    }

    fn respond(&mut self, ctx: &mut Context<Self>) {
        match &self.parent {
            Some(parent) => parent.do_send(Response(self.result)),
            None => self.report.put(self.result),
        }
        ctx.stop();
    }
}

impl Handler<Request> for FibActor {
    type Result = ();
    fn handle(&mut self, Request(n): Request, ctx: &mut Context<Self>) {
        if n <= 2 {
            self.result = 1;
            self.respond(ctx);
        } else {
            for k in [n - 1, n - 2] {
                let me = Some(self.me.clone());
                FibActor::spawn(&self.rt, me, &self.created, &self.report).do_send(Request(k));
            }
        }
    }
}

impl Handler<Response> for FibActor {
    type Result = ();
    fn handle(&mut self, Response(value): Response, ctx: &mut Context<Self>) {
        self.result += value;
        self.responses += 1;
        if self.responses == 2 {
            self.respond(ctx);
        }
    }
}

/// fib(n) with fib(1) = fib(2) = 1 (and 1 for n <= 2, as the protocol answers).
fn fib(n: u32) -> u64 {
    let (mut a, mut b) = (1u64, 1u64);
    for _ in 2..n {
        (a, b) = (b, a + b);
    }
    b
}

pub(crate) fn run(params: &Params, variant: Variant) -> Outcome {
    let n: u32 = params.get("n");
    if n > 80 {
        return Outcome::new(Default::default(), Err("-n above 80 overflows".into()));
    }
    let created = Arc::new(AtomicU64::new(0));
    let result = Slot::new();
    let elapsed = run_system(variant, |rt: &Rt| {
        FibActor::spawn(rt, None, &created, &result).do_send(Request(n));
    });
    let (expected, actors) = (fib(n), 2 * fib(n) - 1);
    let created = created.load(Ordering::Relaxed);
    let check = result.take("the root").and_then(|value| {
        if value == expected && created == actors {
            Ok(format!("fib({n}) = {value}; {created} actors"))
        } else {
            Err(format!(
                "fib({n}) = {value} with {created} actors, expected {expected} and {actors}"
            ))
        }
    });
    Outcome::new(elapsed, check)
}

#[cfg(test)]
mod tests {
    #[test]
    fn reference_fib() {
        assert_eq!(super::fib(25), 75025);
        assert_eq!(2 * super::fib(25) - 1, 150049);
        assert_eq!(super::fib(1), 1);
        assert_eq!(super::fib(3), 2);
    }
}
