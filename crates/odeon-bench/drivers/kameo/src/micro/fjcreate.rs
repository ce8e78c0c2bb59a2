//! Fork-Join Actor Creation (Savina #5, `shared/savina.md` §3.5): the driver creates N
//! actors one after another and sends each one message; each does the sin² work unit
//! and exits.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use kameo::message::{Context, Message};
use savina::protocol::expect_eq;
use savina::{Outcome, Params};

use crate::common::{self, Exit, busy_work, plain_actor, tell};

struct Worker {
    totals: Arc<Totals>,
    _exit: Exit,
}

#[derive(Default)]
struct Totals {
    handled: AtomicU64,
    work_failed: AtomicBool,
}

plain_actor!(Worker);

struct Go;

impl Message<Go> for Worker {
    type Reply = ();

    async fn handle(&mut self, _: Go, ctx: &mut Context<Self, ()>) {
        if busy_work().is_err() {
            self.totals.work_failed.store(true, Ordering::Relaxed);
        }
        self.totals.handled.fetch_add(1, Ordering::Relaxed);
        ctx.stop();
    }
}

pub fn run(params: &Params) -> Outcome {
    let n: u64 = params.get("n");
    common::run(params, |latch| async move {
        let totals = Arc::new(Totals::default());
        for _ in 0..n {
            let worker = common::spawn(Worker {
                totals: Arc::clone(&totals),
                _exit: latch.enter(),
            });
            tell(&worker, Go);
        }
        latch.wait().await;
        if totals.work_failed.load(Ordering::Relaxed) {
            return Err("the sin² work unit was not positive".to_owned());
        }
        expect_eq(
            "actors that handled one message",
            totals.handled.load(Ordering::Relaxed),
            n,
        )
    })
}
