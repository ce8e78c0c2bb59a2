//! Fork-Join Throughput (Savina #4, `shared/savina.md` §3.4): the driver sends N
//! messages to each of A actors in turn; each does a tiny work unit per message.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use actix::{Actor, ActorContext, Addr, AsyncContext, Context, Handler, Message};
use savina::{Outcome, Params};

use crate::common::{Live, Rt, Variant, run_system, sin_squared_work};

#[derive(Message)]
#[rtype(result = "()")]
struct Work;

#[derive(Default)]
struct Totals {
    handled: AtomicU64,
    failed_work: AtomicU64,
}

struct Worker {
    /// Keeps the actor alive until it has counted to N, whatever the driver drops.
    _me: Addr<Worker>,
    count: u64,
    n: u64,
    failed_work: u64,
    totals: Arc<Totals>,
    _live: Live,
}

impl Actor for Worker {
    type Context = Context<Self>;

    fn stopped(&mut self, _: &mut Context<Self>) {
        self.totals.handled.fetch_add(self.count, Ordering::Relaxed);
        self.totals
            .failed_work
            .fetch_add(self.failed_work, Ordering::Relaxed);
    }
}

impl Handler<Work> for Worker {
    type Result = ();
    fn handle(&mut self, _: Work, ctx: &mut Context<Self>) {
        self.count += 1;
        if !sin_squared_work() {
            self.failed_work += 1;
        }
        if self.count == self.n {
            ctx.stop();
        }
    }
}

pub(crate) fn run(params: &Params, variant: Variant) -> Outcome {
    let n: u64 = params.get("n");
    let a: u64 = params.get("a");
    if n == 0 {
        return Outcome::new(Default::default(), Err("-n must be >= 1".into()));
    }
    let totals = Arc::new(Totals::default());
    let elapsed = run_system(variant, |rt: &Rt| {
        let workers: Vec<Addr<Worker>> = (0..a)
            .map(|_| {
                let totals = Arc::clone(&totals);
                rt.spawn(move |ctx, live| Worker {
                    _me: ctx.address(),
                    count: 0,
                    n,
                    failed_work: 0,
                    totals,
                    _live: live,
                })
            })
            .collect();
        for _ in 0..n {
            for worker in &workers {
                worker.do_send(Work);
            }
        }
    });
    let handled = totals.handled.load(Ordering::Relaxed);
    let failed = totals.failed_work.load(Ordering::Relaxed);
    let check = if handled == a * n && failed == 0 {
        Ok(format!("{handled} handled messages"))
    } else {
        Err(format!(
            "{handled} handled messages ({failed} failed work units), expected {}",
            a * n
        ))
    };
    Outcome::new(elapsed, check)
}
