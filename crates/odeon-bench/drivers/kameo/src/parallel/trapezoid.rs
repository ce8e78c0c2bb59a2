//! Trapezoidal Approximation (Savina #28, `shared/savina.md` §3.28): W workers each
//! integrate a slice of [L, R] and report to a master.

use kameo::actor::ActorRef;
use kameo::error::Infallible;
use kameo::message::{Context, Message};
use savina::kernels::trapezoid_area;
use savina::{Outcome, Params};
use tokio::sync::oneshot;

use crate::common::{self, Exit, plain_actor, tell};

/// Savina's area at the defaults.
const EXPECTED_DEFAULT: f64 = 0.27108075195295755;

/// Worker i's slice of [l, r] split W ways.
fn slice(l: f64, r: f64, workers: u64, i: u64) -> (f64, f64) {
    let width = (r - l) / workers as f64;
    let left = l + i as f64 * width;
    (left, left + width)
}

struct Master {
    workers: Vec<ActorRef<Worker>>,
    count: u64,
    received: u64,
    area: f64,
    done: Option<oneshot::Sender<f64>>,
    exit: Exit,
}

struct Worker {
    master: ActorRef<Master>,
    _exit: Exit,
}

plain_actor!(Worker);

enum MasterMsg {
    Work(f64, f64, f64),
    Result(f64),
}

struct Work(f64, f64, f64);

impl kameo::Actor for Master {
    type Args = Self;
    type Error = Infallible;

    /// The master creates its workers when it starts, as in Savina.
    async fn on_start(mut master: Self, me: ActorRef<Self>) -> Result<Self, Infallible> {
        master.workers = (0..master.count)
            .map(|_| {
                common::spawn(Worker {
                    master: me.clone(),
                    _exit: master.exit.enter(),
                })
            })
            .collect();
        Ok(master)
    }
}

impl Message<MasterMsg> for Master {
    type Reply = ();

    async fn handle(&mut self, msg: MasterMsg, ctx: &mut Context<Self, ()>) {
        match msg {
            MasterMsg::Work(l, r, h) => {
                for (i, worker) in self.workers.drain(..).enumerate() {
                    let (wl, wr) = slice(l, r, self.count, i as u64);
                    tell(&worker, Work(wl, wr, h));
                }
            }
            MasterMsg::Result(area) => {
                self.area += area;
                self.received += 1;
                if self.received == self.count {
                    if let Some(done) = self.done.take() {
                        let _ = done.send(self.area);
                    }
                    ctx.stop();
                }
            }
        }
    }
}

impl Message<Work> for Worker {
    type Reply = ();

    async fn handle(&mut self, Work(l, r, h): Work, ctx: &mut Context<Self, ()>) {
        tell(&self.master, MasterMsg::Result(trapezoid_area(l, r, h)));
        ctx.stop();
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
        let master = common::spawn(Master {
            workers: Vec::new(),
            count: w,
            received: 0,
            area: 0.0,
            done: Some(done),
            exit: latch.enter(),
        });
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
