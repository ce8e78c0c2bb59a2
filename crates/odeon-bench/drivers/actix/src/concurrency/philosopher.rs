//! Dining Philosophers (Savina #12, `shared/savina.md` §3.12): N philosophers ask one
//! Arbitrator for both forks, retrying when denied, until each has eaten M meals.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use actix::{Actor, ActorContext, Addr, AsyncContext, Context, Handler, Message};
use savina::{Outcome, Params};

use crate::common::{Live, Rt, Slot, Variant, run_system};

#[derive(Message)]
#[rtype(result = "()")]
struct Start;

#[derive(Message)]
#[rtype(result = "()")]
struct Hungry {
    philosopher: Addr<Philosopher>,
    id: usize,
}

#[derive(Message)]
#[rtype(result = "()")]
struct Done(usize);

#[derive(Message)]
#[rtype(result = "()")]
struct Eat;

#[derive(Message)]
#[rtype(result = "()")]
struct Denied;

#[derive(Message)]
#[rtype(result = "()")]
struct Exit;

/// Shared by the philosophers: meals eaten, and Savina's (cumulative) retry total.
#[derive(Default)]
struct Totals {
    meals: AtomicU64,
    retries: AtomicU64,
}

/// What the Arbitrator reports: exits seen, fork-protocol violations, forks still held.
type ArbiterReport = (usize, u64, usize);

struct Arbitrator {
    /// The last philosopher drops its address right after sending its Exit; without
    /// this one the Arbitrator could auto-stop before counting it.
    _me: Addr<Arbitrator>,
    forks: Vec<bool>,
    exits: usize,
    violations: u64,
    report: Slot<ArbiterReport>,
    _live: Live,
}

impl Actor for Arbitrator {
    type Context = Context<Self>;
}

impl Arbitrator {
    fn forks_of(&self, id: usize) -> (usize, usize) {
        (id, (id + 1) % self.forks.len())
    }
}

impl Handler<Hungry> for Arbitrator {
    type Result = ();
    fn handle(&mut self, Hungry { philosopher, id }: Hungry, _: &mut Context<Self>) {
        let (left, right) = self.forks_of(id);
        if self.forks[left] || self.forks[right] {
            philosopher.do_send(Denied);
        } else {
            self.forks[left] = true;
            self.forks[right] = true;
            philosopher.do_send(Eat);
        }
    }
}

impl Handler<Done> for Arbitrator {
    type Result = ();
    fn handle(&mut self, Done(id): Done, _: &mut Context<Self>) {
        let (left, right) = self.forks_of(id);
        // A philosopher finishing a meal must hold both of its forks.
        if !(self.forks[left] && self.forks[right]) {
            self.violations += 1;
        }
        self.forks[left] = false;
        self.forks[right] = false;
    }
}

impl Handler<Exit> for Arbitrator {
    type Result = ();
    fn handle(&mut self, _: Exit, ctx: &mut Context<Self>) {
        self.exits += 1;
        if self.exits == self.forks.len() {
            let held = self.forks.iter().filter(|&&f| f).count();
            self.report.put((self.exits, self.violations, held));
            ctx.stop();
        }
    }
}

struct Philosopher {
    me: Addr<Philosopher>,
    id: usize,
    arbitrator: Addr<Arbitrator>,
    meals: u64,
    meals_wanted: u64,
    retries: u64,
    totals: Arc<Totals>,
    _live: Live,
}

impl Actor for Philosopher {
    type Context = Context<Self>;
}

impl Philosopher {
    fn ask(&self) {
        self.arbitrator.do_send(Hungry {
            philosopher: self.me.clone(),
            id: self.id,
        });
    }
}

impl Handler<Start> for Philosopher {
    type Result = ();
    fn handle(&mut self, _: Start, _: &mut Context<Self>) {
        self.ask();
    }
}

impl Handler<Denied> for Philosopher {
    type Result = ();
    fn handle(&mut self, _: Denied, _: &mut Context<Self>) {
        self.retries += 1;
        self.ask();
    }
}

impl Handler<Eat> for Philosopher {
    type Result = ();
    fn handle(&mut self, _: Eat, ctx: &mut Context<Self>) {
        self.meals += 1;
        self.totals.meals.fetch_add(1, Ordering::Relaxed);
        // Savina adds the cumulative local counter at every meal (a quirk kept as is).
        self.totals
            .retries
            .fetch_add(self.retries, Ordering::Relaxed);
        self.arbitrator.do_send(Done(self.id));
        if self.meals < self.meals_wanted {
            self.me.do_send(Start);
        } else {
            self.arbitrator.do_send(Exit);
            ctx.stop();
        }
    }
}

pub(crate) fn run(params: &Params, variant: Variant) -> Outcome {
    let n: usize = params.get("n");
    let m: u64 = params.get("m");
    if n == 0 || m == 0 {
        return Outcome::new(Default::default(), Err("-n and -m must be >= 1".into()));
    }
    let totals = Arc::new(Totals::default());
    let result = Slot::new();
    let elapsed = run_system(variant, |rt: &Rt| {
        let report = result.clone();
        let arbitrator = rt.spawn(move |ctx, live| Arbitrator {
            _me: ctx.address(),
            forks: vec![false; n],
            exits: 0,
            violations: 0,
            report,
            _live: live,
        });
        for id in 0..n {
            let (arbitrator, totals) = (arbitrator.clone(), Arc::clone(&totals));
            let philosopher = rt.spawn(move |ctx, live| Philosopher {
                me: ctx.address(),
                id,
                arbitrator,
                meals: 0,
                meals_wanted: m,
                retries: 0,
                totals,
                _live: live,
            });
            philosopher.do_send(Start);
        }
    });
    let meals = totals.meals.load(Ordering::Relaxed);
    let retries = totals.retries.load(Ordering::Relaxed);
    let expected = n as u64 * m;
    let check = result
        .take("the Arbitrator")
        .and_then(|(exits, violations, held)| {
            if meals == expected && exits == n && violations == 0 && held == 0 {
                Ok(format!("{meals} meals; retry total {retries}"))
            } else {
                Err(format!(
                    "{meals} meals, {exits} exits, {violations} fork violations, {held} forks held; expected {expected}, {n}, 0, 0"
                ))
            }
        });
    Outcome::new(elapsed, check)
}
