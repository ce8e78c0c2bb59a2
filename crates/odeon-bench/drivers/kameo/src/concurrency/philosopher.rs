//! Dining Philosophers (Savina #12, `shared/savina.md` §3.12): N philosophers ask one
//! arbitrator for their two forks, retrying on denial, until each has eaten M meals.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use kameo::actor::ActorRef;
use kameo::message::{Context, Message};
use savina::protocol::expect_eq;
use savina::{Outcome, Params};
use tokio::sync::oneshot;

use crate::common::{self, Exit, plain_actor, tell};

struct Philosopher {
    id: usize,
    meals: u64,
    meals_wanted: u64,
    /// The local retry counter, cumulative over meals.
    retries: u64,
    /// Savina adds the cumulative retry counter to a shared total at every meal; this
    /// keeps that sum locally and adds it once on exit (same total, no contention).
    retry_total: u64,
    arbitrator: ActorRef<Arbitrator>,
    totals: Arc<Totals>,
    _exit: Exit,
}

#[derive(Default)]
struct Totals {
    meals: AtomicU64,
    retries: AtomicU64,
}

/// What the arbitrator saw: meals granted and fork-flag inconsistencies (a `Done` for a
/// fork that was not taken would mean two neighbours held one fork).
type Tally = (u64, u64);

struct Arbitrator {
    forks: Vec<bool>,
    granted: u64,
    violations: u64,
    exits: usize,
    done: Option<oneshot::Sender<Tally>>,
    _exit: Exit,
}

plain_actor!(Philosopher, Arbitrator);

enum PhilMsg {
    Start,
    Eat,
    Denied,
}

enum ArbMsg {
    Hungry(ActorRef<Philosopher>, usize),
    Done(usize),
    Exit,
}

impl Philosopher {
    fn hungry(&self, me: &ActorRef<Philosopher>) {
        tell(&self.arbitrator, ArbMsg::Hungry(me.clone(), self.id));
    }
}

impl Message<PhilMsg> for Philosopher {
    type Reply = ();

    async fn handle(&mut self, msg: PhilMsg, ctx: &mut Context<Self, ()>) {
        match msg {
            PhilMsg::Start => self.hungry(ctx.actor_ref()),
            PhilMsg::Denied => {
                self.retries += 1;
                self.hungry(ctx.actor_ref());
            }
            PhilMsg::Eat => {
                self.meals += 1;
                self.retry_total += self.retries;
                tell(&self.arbitrator, ArbMsg::Done(self.id));
                if self.meals < self.meals_wanted {
                    tell(ctx.actor_ref(), PhilMsg::Start);
                } else {
                    self.totals.meals.fetch_add(self.meals, Ordering::Relaxed);
                    self.totals
                        .retries
                        .fetch_add(self.retry_total, Ordering::Relaxed);
                    tell(&self.arbitrator, ArbMsg::Exit);
                    ctx.stop();
                }
            }
        }
    }
}

impl Message<ArbMsg> for Arbitrator {
    type Reply = ();

    async fn handle(&mut self, msg: ArbMsg, ctx: &mut Context<Self, ()>) {
        let n = self.forks.len();
        match msg {
            ArbMsg::Hungry(philosopher, id) => {
                let (left, right) = (id, (id + 1) % n);
                if self.forks[left] || self.forks[right] {
                    tell(&philosopher, PhilMsg::Denied);
                } else {
                    self.forks[left] = true;
                    self.forks[right] = true;
                    self.granted += 1;
                    tell(&philosopher, PhilMsg::Eat);
                }
            }
            ArbMsg::Done(id) => {
                let (left, right) = (id, (id + 1) % n);
                if !(self.forks[left] && self.forks[right]) {
                    self.violations += 1;
                }
                self.forks[left] = false;
                self.forks[right] = false;
            }
            ArbMsg::Exit => {
                self.exits += 1;
                if self.exits == n {
                    if let Some(done) = self.done.take() {
                        let _ = done.send((self.granted, self.violations));
                    }
                    ctx.stop();
                }
            }
        }
    }
}

pub fn run(params: &Params) -> Outcome {
    let n: usize = params.get("n");
    let m: u64 = params.get("m");
    common::run(params, |latch| async move {
        if n < 2 || m == 0 {
            return Err("-n must be at least 2 and -m at least 1".to_owned());
        }
        let (done, result) = oneshot::channel();
        let totals = Arc::new(Totals::default());
        let arbitrator = common::spawn(Arbitrator {
            forks: vec![false; n],
            granted: 0,
            violations: 0,
            exits: 0,
            done: Some(done),
            _exit: latch.enter(),
        });
        let philosophers: Vec<_> = (0..n)
            .map(|id| {
                common::spawn(Philosopher {
                    id,
                    meals: 0,
                    meals_wanted: m,
                    retries: 0,
                    retry_total: 0,
                    arbitrator: arbitrator.clone(),
                    totals: Arc::clone(&totals),
                    _exit: latch.enter(),
                })
            })
            .collect();
        for philosopher in &philosophers {
            tell(philosopher, PhilMsg::Start);
        }
        drop((arbitrator, philosophers));
        let (granted, violations) = common::report(result).await?;
        latch.wait().await;
        let meals = totals.meals.load(Ordering::Relaxed);
        let check = expect_eq(
            "meals eaten, meals granted, fork violations",
            (meals, granted, violations),
            (n as u64 * m, n as u64 * m, 0),
        )?;
        Ok(format!(
            "{check}; retry total {}",
            totals.retries.load(Ordering::Relaxed)
        ))
    })
}
