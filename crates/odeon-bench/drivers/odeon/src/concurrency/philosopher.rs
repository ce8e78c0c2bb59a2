//! Dining Philosophers (Savina #12, `shared/savina.md` §3.12): N philosophers ask one
//! arbitrator for their two forks, retrying until granted, M meals each.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;

use odeon::{Actor, ActorRef, Context, Handler, Message};
use savina::{Outcome, Params};

use super::{Exit, Latch, outcome, timed};

struct Arbitrator {
    /// Fork `i` is philosopher `i`'s left fork and philosopher `i - 1`'s right one.
    taken: Vec<bool>,
    meals: Vec<u64>,
    /// `Done`s for forks that were not taken by that philosopher: must stay 0.
    violations: u64,
    exited: usize,
    report: mpsc::Sender<(Vec<u64>, u64)>,
    _exit: Exit,
}

struct Philosopher {
    id: usize,
    arbitrator: ActorRef<Arbitrator>,
    meals: u32,
    rounds: u32,
    retries: u64,
    /// Savina's shared retry total (an `AtomicLong` in the reference).
    retry_total: Arc<AtomicU64>,
    _exit: Exit,
}

impl Actor for Arbitrator {}
impl Actor for Philosopher {}

struct Start;
impl Message for Start {
    type Reply = ();
}

struct Hungry {
    philosopher: ActorRef<Philosopher>,
    id: usize,
}
impl Message for Hungry {
    type Reply = ();
}

struct Done(usize);
impl Message for Done {
    type Reply = ();
}

struct Eat;
impl Message for Eat {
    type Reply = ();
}

struct Denied;
impl Message for Denied {
    type Reply = ();
}

struct ExitNow;
impl Message for ExitNow {
    type Reply = ();
}

impl Arbitrator {
    fn forks(&self, id: usize) -> (usize, usize) {
        (id, (id + 1) % self.taken.len())
    }
}

impl Handler<Hungry> for Arbitrator {
    fn handle(&mut self, msg: Hungry, _: &mut Context<Self>) {
        let (left, right) = self.forks(msg.id);
        if self.taken[left] || self.taken[right] {
            let _ = msg.philosopher.tell(Denied);
        } else {
            self.taken[left] = true;
            self.taken[right] = true;
            let _ = msg.philosopher.tell(Eat);
        }
    }
}

impl Handler<Done> for Arbitrator {
    fn handle(&mut self, msg: Done, _: &mut Context<Self>) {
        let (left, right) = self.forks(msg.0);
        if !(self.taken[left] && self.taken[right]) {
            self.violations += 1;
        }
        self.taken[left] = false;
        self.taken[right] = false;
        self.meals[msg.0] += 1;
    }
}

impl Handler<ExitNow> for Arbitrator {
    fn handle(&mut self, _: ExitNow, cx: &mut Context<Self>) {
        self.exited += 1;
        if self.exited == self.taken.len() {
            let _ = self
                .report
                .send((std::mem::take(&mut self.meals), self.violations));
            cx.stop();
        }
    }
}

impl Handler<Start> for Philosopher {
    fn handle(&mut self, _: Start, cx: &mut Context<Self>) {
        let _ = self.arbitrator.tell(Hungry {
            philosopher: cx.myself(),
            id: self.id,
        });
    }
}

impl Handler<Denied> for Philosopher {
    fn handle(&mut self, _: Denied, cx: &mut Context<Self>) {
        self.retries += 1;
        let _ = self.arbitrator.tell(Hungry {
            philosopher: cx.myself(),
            id: self.id,
        });
    }
}

impl Handler<Eat> for Philosopher {
    fn handle(&mut self, _: Eat, cx: &mut Context<Self>) {
        self.meals += 1;
        // The cumulative count, added at every meal: a quirk of the reference, kept.
        self.retry_total.fetch_add(self.retries, Ordering::Relaxed);
        let _ = self.arbitrator.tell(Done(self.id));
        if self.meals < self.rounds {
            let _ = cx.notify(Start);
        } else {
            let _ = self.arbitrator.tell(ExitNow);
            cx.stop();
        }
    }
}

pub(crate) fn run(params: &Params) -> Outcome {
    let n: usize = params.get("n");
    let rounds: u32 = params.get("m");
    if n < 2 || rounds == 0 {
        // One philosopher would need its own fork twice; no meals never ends the run.
        return Outcome::new(
            std::time::Duration::ZERO,
            Err("needs -n >= 2 and -m >= 1".into()),
        );
    }
    let retry_total = Arc::new(AtomicU64::new(0));
    let (tx, rx) = mpsc::channel();
    let elapsed = timed(params, |system, latch: &Latch| {
        let arbitrator = system.spawn(Arbitrator {
            taken: vec![false; n],
            meals: vec![0; n],
            violations: 0,
            exited: 0,
            report: tx,
            _exit: latch.enter(),
        });
        let mut philosophers = Vec::with_capacity(n);
        for id in 0..n {
            let philosopher = system.spawn(Philosopher {
                id,
                arbitrator: arbitrator.clone(),
                meals: 0,
                rounds,
                retries: 0,
                retry_total: retry_total.clone(),
                _exit: latch.enter(),
            });
            let _ = philosopher.tell(Start);
            philosophers.push(philosopher);
        }
        // Held until every actor has exited, as Savina's driver holds its array: see
        // `timed` on why odeon's local GC must not see a philosopher unreferenced.
        philosophers
    });
    outcome(elapsed, || {
        let (meals, violations) = rx.try_recv().map_err(|_| "the arbitrator sent no report")?;
        if violations > 0 {
            return Err(format!("{violations} meals without both forks"));
        }
        if let Some(id) = meals.iter().position(|&m| m != u64::from(rounds)) {
            return Err(format!(
                "philosopher {id} ate {} times, expected {rounds}",
                meals[id]
            ));
        }
        Ok(format!(
            "{} meals; retry total {}",
            meals.iter().sum::<u64>(),
            retry_total.load(Ordering::Relaxed)
        ))
    })
}
