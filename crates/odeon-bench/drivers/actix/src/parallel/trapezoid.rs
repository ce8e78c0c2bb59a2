//! Trapezoidal Approximation (Savina #28, `shared/savina.md` §3.28): a Master scatters
//! W sub-ranges to W workers and gathers their areas.

use actix::{Actor, ActorContext, Addr, AsyncContext, Context, Handler, Message};
use savina::kernels::trapezoid_area;
use savina::{Outcome, Params};

use crate::common::{Live, Rt, Slot, Variant, run_system};

/// `Work(l, r, h)`: from the driver to the Master (whole interval), and from the
/// Master to each worker (its sub-range).
#[derive(Message)]
#[rtype(result = "()")]
struct Work {
    left: f64,
    right: f64,
    h: f64,
}

#[derive(Message)]
#[rtype(result = "()")]
struct AreaResult {
    area: f64,
    #[allow(dead_code)] // part of Savina's message; the Master only sums
    worker: usize,
}

/// Worker i's sub-range of `[left, right]` split in `workers` parts.
fn sub_range(left: f64, right: f64, workers: usize, i: usize) -> (f64, f64) {
    let width = (right - left) / workers as f64;
    let wl = left + i as f64 * width;
    (wl, wl + width)
}

struct Master {
    me: Addr<Master>,
    rt: Rt,
    worker_count: usize,
    workers: Vec<Addr<Worker>>,
    received: usize,
    area: f64,
    report: Slot<f64>,
    _live: Live,
}

impl Actor for Master {
    type Context = Context<Self>;

    /// The Master creates its workers when it starts.
    fn started(&mut self, _: &mut Context<Self>) {
        self.workers = (0..self.worker_count)
            .map(|id| {
                let master = self.me.clone();
                self.rt.spawn(move |_, live| Worker {
                    id,
                    master,
                    _live: live,
                })
            })
            .collect();
    }
}

impl Handler<Work> for Master {
    type Result = ();
    fn handle(&mut self, Work { left, right, h }: Work, _: &mut Context<Self>) {
        for (i, worker) in self.workers.iter().enumerate() {
            let (wl, wr) = sub_range(left, right, self.worker_count, i);
            worker.do_send(Work {
                left: wl,
                right: wr,
                h,
            });
        }
    }
}

impl Handler<AreaResult> for Master {
    type Result = ();
    fn handle(&mut self, result: AreaResult, ctx: &mut Context<Self>) {
        self.area += result.area;
        self.received += 1;
        if self.received == self.worker_count {
            self.report.put(self.area);
            ctx.stop();
        }
    }
}

struct Worker {
    id: usize,
    master: Addr<Master>,
    _live: Live,
}

impl Actor for Worker {
    type Context = Context<Self>;
}

impl Handler<Work> for Worker {
    type Result = ();
    fn handle(&mut self, Work { left, right, h }: Work, ctx: &mut Context<Self>) {
        self.master.do_send(AreaResult {
            area: trapezoid_area(left, right, h),
            worker: self.id,
        });
        ctx.stop();
    }
}

/// The same split computed sequentially.
fn reference(n: u64, workers: usize, left: f64, right: f64) -> f64 {
    let h = (right - left) / n as f64;
    (0..workers)
        .map(|i| {
            let (wl, wr) = sub_range(left, right, workers, i);
            trapezoid_area(wl, wr, h)
        })
        .sum()
}

pub(crate) fn run(params: &Params, variant: Variant) -> Outcome {
    let n: u64 = params.get("n");
    let workers: usize = params.get("w");
    let left: f64 = params.get("l");
    let right: f64 = params.get("r");
    if n == 0 || workers == 0 {
        return Outcome::new(Default::default(), Err("-n and -w must be >= 1".into()));
    }
    let result = Slot::new();
    let elapsed = run_system(variant, |rt: &Rt| {
        let (master_rt, report) = (rt.clone(), result.clone());
        let master = rt.spawn(move |ctx, live| Master {
            me: ctx.address(),
            rt: master_rt,
            worker_count: workers,
            workers: Vec::new(),
            received: 0,
            area: 0.0,
            report,
            _live: live,
        });
        master.do_send(Work {
            left,
            right,
            h: (right - left) / n as f64,
        });
    });
    let expected = reference(n, workers, left, right);
    let check = result.take("the Master").and_then(|area| {
        // The Master adds results in arrival order: allow for the last bits.
        if (area - expected).abs() <= 1e-12 * expected.abs().max(1.0) {
            Ok(format!("area {area} (sequential {expected})"))
        } else {
            Err(format!("area {area}, expected {expected}"))
        }
    });
    Outcome::new(elapsed, check)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_spec() {
        let h = 4.0 / 1e7;
        for i in 0..100 {
            let (wl, wr) = sub_range(1.0, 5.0, 100, i);
            assert_eq!(((wr - wl) / h) as u64, 100_000, "worker {i}");
        }
    }
}
