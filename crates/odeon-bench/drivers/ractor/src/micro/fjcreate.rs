//! Fork-Join Actor Creation (Savina #5, `shared/savina.md` §3.5): the driver creates N
//! actors one after another and sends each one message; each does the sin² work unit
//! and exits.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use ractor::{Actor, ActorProcessingErr, ActorRef};
use savina::protocol::expect_eq;
use savina::{Outcome, Params};

use crate::common::{self, Exit, busy_work, state_from_args, tell};

struct WorkerActor;

struct Worker {
    totals: Arc<Totals>,
    _exit: Exit,
}

#[derive(Default)]
struct Totals {
    handled: AtomicU64,
    work_failed: AtomicBool,
}

struct Go;

impl Actor for WorkerActor {
    type Msg = Go;
    type State = Worker;
    type Arguments = Worker;

    state_from_args!();

    async fn handle(
        &self,
        myself: ActorRef<Go>,
        _: Go,
        st: &mut Worker,
    ) -> Result<(), ActorProcessingErr> {
        if busy_work().is_err() {
            st.totals.work_failed.store(true, Ordering::Relaxed);
        }
        st.totals.handled.fetch_add(1, Ordering::Relaxed);
        myself.stop(None);
        Ok(())
    }
}

pub fn run(params: &Params) -> Outcome {
    let n: u64 = params.get("n");
    common::run(params, |latch| async move {
        let totals = Arc::new(Totals::default());
        for _ in 0..n {
            let state = Worker {
                totals: Arc::clone(&totals),
                _exit: latch.enter(),
            };
            let worker = common::spawn(WorkerActor, state).await;
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
