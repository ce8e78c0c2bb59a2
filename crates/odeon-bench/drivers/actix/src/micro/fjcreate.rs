//! Fork-Join Actor Creation (Savina #5, `shared/savina.md` §3.5): the driver creates N
//! actors, sending each one message; each does a tiny work unit and exits.

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
    created: AtomicU64,
    handled: AtomicU64,
    failed_work: AtomicU64,
}

struct Worker {
    /// Without it, a worker started before the driver's message arrived could see no
    /// address left (the driver drops its copy right after sending) and auto-stop.
    _me: Addr<Worker>,
    totals: Arc<Totals>,
    _live: Live,
}

impl Actor for Worker {
    type Context = Context<Self>;
}

impl Handler<Work> for Worker {
    type Result = ();
    fn handle(&mut self, _: Work, ctx: &mut Context<Self>) {
        if !sin_squared_work() {
            self.totals.failed_work.fetch_add(1, Ordering::Relaxed);
        }
        self.totals.handled.fetch_add(1, Ordering::Relaxed);
        ctx.stop();
    }
}

pub(crate) fn run(params: &Params, variant: Variant) -> Outcome {
    let n: u64 = params.get("n");
    let totals = Arc::new(Totals::default());
    let elapsed = run_system(variant, |rt: &Rt| {
        for _ in 0..n {
            let shared = Arc::clone(&totals);
            let worker = rt.spawn(move |ctx, live| {
                shared.created.fetch_add(1, Ordering::Relaxed);
                Worker {
                    _me: ctx.address(),
                    totals: shared,
                    _live: live,
                }
            });
            worker.do_send(Work);
        }
    });
    let created = totals.created.load(Ordering::Relaxed);
    let handled = totals.handled.load(Ordering::Relaxed);
    let failed = totals.failed_work.load(Ordering::Relaxed);
    let check = if created == n && handled == n && failed == 0 {
        Ok(format!("{n} actors, one message each"))
    } else {
        Err(format!(
            "{created} actors created, {handled} messages handled ({failed} failed work units), expected {n}"
        ))
    };
    Outcome::new(elapsed, check)
}
