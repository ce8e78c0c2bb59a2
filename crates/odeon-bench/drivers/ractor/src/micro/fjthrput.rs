//! Fork-Join Throughput (Savina #4, `shared/savina.md` §3.4): the driver sends N rounds
//! of one message to each of A actors; each does the sin² work unit per message and
//! exits after N.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use ractor::{Actor, ActorProcessingErr, ActorRef};
use savina::protocol::expect_eq;
use savina::{Outcome, Params};

use crate::common::{self, Exit, busy_work, state_from_args, tell};

struct WorkerActor;

struct Worker {
    n: u64,
    handled: u64,
    totals: Arc<Totals>,
    _exit: Exit,
}

#[derive(Default)]
struct Totals {
    handled: AtomicU64,
    work_failed: AtomicBool,
}

/// The one empty message the driver sends.
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
        st.handled += 1;
        if busy_work().is_err() {
            st.totals.work_failed.store(true, Ordering::Relaxed);
        }
        if st.handled == st.n {
            st.totals.handled.fetch_add(st.handled, Ordering::Relaxed);
            myself.stop(None);
        }
        Ok(())
    }
}

pub fn run(params: &Params) -> Outcome {
    let n: u64 = params.get("n");
    let a: u64 = params.get("a");
    common::run(params, |latch| async move {
        if n == 0 {
            return Err("-n must be at least 1 (a worker exits on its n-th message)".to_owned());
        }
        let totals = Arc::new(Totals::default());
        let mut workers = Vec::new();
        for _ in 0..a {
            let state = Worker {
                n,
                handled: 0,
                totals: Arc::clone(&totals),
                _exit: latch.enter(),
            };
            workers.push(common::spawn(WorkerActor, state).await);
        }
        for _ in 0..n {
            for worker in &workers {
                tell(worker, Go);
            }
        }
        drop(workers);
        latch.wait().await;
        if totals.work_failed.load(Ordering::Relaxed) {
            return Err("the sin² work unit was not positive".to_owned());
        }
        expect_eq(
            "handled messages",
            totals.handled.load(Ordering::Relaxed),
            a * n,
        )
    })
}
