//! Trapezoidal Approximation (Savina #28, `shared/savina.md` §3.28): W workers each
//! integrate a slice of [L, R] and report to a master.

use ractor::{Actor, ActorProcessingErr, ActorRef};
use savina::kernels::trapezoid_area;
use savina::{Outcome, Params};
use tokio::sync::oneshot;

use crate::common::{self, Exit, state_from_args, tell};

/// Savina's area at the defaults.
const EXPECTED_DEFAULT: f64 = 0.27108075195295755;

/// Worker i's slice of [l, r] split W ways.
fn slice(l: f64, r: f64, workers: u64, i: u64) -> (f64, f64) {
    let width = (r - l) / workers as f64;
    let left = l + i as f64 * width;
    (left, left + width)
}

struct MasterActor;
struct WorkerActor;

struct Master {
    workers: Vec<ActorRef<Work>>,
    count: u64,
    received: u64,
    area: f64,
    done: Option<oneshot::Sender<f64>>,
    exit: Exit,
}

struct Worker {
    master: ActorRef<MasterMsg>,
    _exit: Exit,
}

enum MasterMsg {
    Work(f64, f64, f64),
    Result(f64),
}

struct Work(f64, f64, f64);

impl Actor for MasterActor {
    type Msg = MasterMsg;
    type State = Master;
    type Arguments = Master;

    /// The master creates its workers when it starts, as in Savina.
    async fn pre_start(
        &self,
        myself: ActorRef<MasterMsg>,
        mut master: Master,
    ) -> Result<Master, ActorProcessingErr> {
        for _ in 0..master.count {
            let worker = Worker {
                master: myself.clone(),
                _exit: master.exit.enter(),
            };
            master
                .workers
                .push(common::spawn(WorkerActor, worker).await);
        }
        Ok(master)
    }

    async fn handle(
        &self,
        myself: ActorRef<MasterMsg>,
        msg: MasterMsg,
        st: &mut Master,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            MasterMsg::Work(l, r, h) => {
                for (i, worker) in st.workers.drain(..).enumerate() {
                    let (wl, wr) = slice(l, r, st.count, i as u64);
                    tell(&worker, Work(wl, wr, h));
                }
            }
            MasterMsg::Result(area) => {
                st.area += area;
                st.received += 1;
                if st.received == st.count {
                    if let Some(done) = st.done.take() {
                        let _ = done.send(st.area);
                    }
                    myself.stop(None);
                }
            }
        }
        Ok(())
    }
}

impl Actor for WorkerActor {
    type Msg = Work;
    type State = Worker;
    type Arguments = Worker;

    state_from_args!();

    async fn handle(
        &self,
        myself: ActorRef<Work>,
        Work(l, r, h): Work,
        st: &mut Worker,
    ) -> Result<(), ActorProcessingErr> {
        tell(&st.master, MasterMsg::Result(trapezoid_area(l, r, h)));
        myself.stop(None);
        Ok(())
    }
}

pub fn run(params: &Params) -> Outcome {
    let n: u64 = params.get("n");
    let w: u64 = params.get("w");
    let l: f64 = params.get("l");
    let r: f64 = params.get("r");
    let h = (r - l) / n as f64;
    let outcome = common::run(params, |latch| async move {
        if w == 0 || n == 0 {
            return Err("-w and -n must be at least 1".to_owned());
        }
        let (done, result) = oneshot::channel();
        let master = Master {
            workers: Vec::new(),
            count: w,
            received: 0,
            area: 0.0,
            done: Some(done),
            exit: latch.enter(),
        };
        let master = common::spawn(MasterActor, master).await;
        tell(&master, MasterMsg::Work(l, r, h));
        drop(master);
        let area = common::report(result).await?;
        Ok(area.to_string())
    });
    // The sequential reference, computed after the timed region (as long as the run).
    let check = outcome.check.and_then(|area| {
        let area: f64 = area.parse().map_err(|_| "unparsable area".to_owned())?;
        let defaults = (n, w, l, r) == (10_000_000, 100, 1.0, 5.0);
        let want = if defaults {
            EXPECTED_DEFAULT
        } else {
            (0..w)
                .map(|i| {
                    let (wl, wr) = slice(l, r, w, i);
                    trapezoid_area(wl, wr, h)
                })
                .sum()
        };
        if (area - want).abs() <= 1e-12 * want.abs().max(1.0) {
            Ok(format!("area = {area} (expected {want})"))
        } else {
            Err(format!("area: got {area}, expected {want}"))
        }
    });
    Outcome::new(outcome.elapsed, check)
}
