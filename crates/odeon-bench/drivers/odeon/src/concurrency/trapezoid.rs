//! Trapezoidal Approximation (Savina #28, `shared/savina.md` §3.28): a master splits
//! an integral among W workers, each integrates its range and reports once.

use std::sync::mpsc;

use odeon::{Actor, ActorRef, Context, Handler, Message};
use savina::kernels::trapezoid_area;
use savina::{Outcome, Params};

use super::{Exit, Latch, outcome, timed};

/// Worker `i`'s range, as the master computes it.
fn range(i: u32, workers: u32, l: f64, r: f64) -> (f64, f64) {
    let width = (r - l) / f64::from(workers);
    let wl = width * f64::from(i) + l;
    (wl, wl + width)
}

struct Master {
    workers: Vec<ActorRef<Worker>>,
    count: u32,
    received: u32,
    area: f64,
    report: mpsc::Sender<f64>,
    exit: Exit,
}

struct Worker {
    master: ActorRef<Master>,
    id: u32,
    _exit: Exit,
}

impl Actor for Master {
    fn started(&mut self, cx: &mut Context<Self>) {
        let system = cx.system();
        self.workers = (0..self.count)
            .map(|id| {
                system.spawn(Worker {
                    master: cx.myself(),
                    id,
                    _exit: self.exit.enter(),
                })
            })
            .collect();
    }
}
impl Actor for Worker {}

/// Integrate `[l, r]` with pieces of width `h`.
struct Work {
    l: f64,
    r: f64,
    h: f64,
}
impl Message for Work {
    type Reply = ();
}

struct Area {
    area: f64,
    #[allow(dead_code)] // carried as in the reference; the sum does not need it
    worker: u32,
}
impl Message for Area {
    type Reply = ();
}

impl Handler<Work> for Master {
    fn handle(&mut self, msg: Work, _: &mut Context<Self>) {
        for (i, worker) in (0..).zip(&self.workers) {
            let (l, r) = range(i, self.count, msg.l, msg.r);
            let _ = worker.tell(Work { l, r, h: msg.h });
        }
    }
}

impl Handler<Area> for Master {
    fn handle(&mut self, msg: Area, cx: &mut Context<Self>) {
        self.received += 1;
        self.area += msg.area;
        if self.received == self.count {
            let _ = self.report.send(self.area);
            cx.stop();
        }
    }
}

impl Handler<Work> for Worker {
    fn handle(&mut self, msg: Work, cx: &mut Context<Self>) {
        let area = trapezoid_area(msg.l, msg.r, msg.h);
        let _ = self.master.tell(Area {
            area,
            worker: self.id,
        });
        cx.stop();
    }
}

pub(crate) fn run(params: &Params) -> Outcome {
    let pieces: u32 = params.get("n");
    let workers: u32 = params.get("w");
    let (l, r): (f64, f64) = (params.get("l"), params.get("r"));
    if pieces == 0 || workers == 0 {
        return Outcome::new(
            std::time::Duration::ZERO,
            Err("needs -n >= 1 and -w >= 1".into()),
        );
    }
    let h = (r - l) / f64::from(pieces);
    let (tx, rx) = mpsc::channel();
    let elapsed = timed(params, |system, latch: &Latch| {
        let master = system.spawn(Master {
            workers: Vec::new(),
            count: workers,
            received: 0,
            area: 0.0,
            report: tx,
            exit: latch.enter(),
        });
        let _ = master.tell(Work { l, r, h });
    });
    outcome(elapsed, || {
        let area = rx.try_recv().map_err(|_| "the master sent no area")?;
        // Results are added in arrival order, so only the last bits may differ.
        let expected = if super::is_default(params) {
            0.271_080_751_952_957_55
        } else {
            (0..workers)
                .map(|i| {
                    let (wl, wr) = range(i, workers, l, r);
                    trapezoid_area(wl, wr, h)
                })
                .sum()
        };
        if (area - expected).abs() > 1e-12 * expected.abs().max(1.0) {
            return Err(format!("area {area}, expected {expected}"));
        }
        Ok(format!("area {area}"))
    })
}
