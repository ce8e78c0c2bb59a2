//! Dining Philosophers (Savina #12, `shared/savina.md` §3.12): N philosophers ask one
//! arbitrator for their two forks, retrying on denial, until each has eaten M meals.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use ractor::{Actor, ActorProcessingErr, ActorRef};
use savina::protocol::expect_eq;
use savina::{Outcome, Params};
use tokio::sync::oneshot;

use crate::common::{self, Exit, state_from_args, tell};

struct PhilosopherActor;
struct ArbitratorActor;

struct Philosopher {
    id: usize,
    meals: u64,
    meals_wanted: u64,
    /// The local retry counter, cumulative over meals.
    retries: u64,
    /// Savina adds the cumulative retry counter to a shared total at every meal; this
    /// keeps that sum locally and adds it once on exit (same total, no contention).
    retry_total: u64,
    arbitrator: ActorRef<ArbMsg>,
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

enum PhilMsg {
    Start,
    Eat,
    Denied,
}

enum ArbMsg {
    Hungry(ActorRef<PhilMsg>, usize),
    Done(usize),
    Exit,
}

impl Actor for PhilosopherActor {
    type Msg = PhilMsg;
    type State = Philosopher;
    type Arguments = Philosopher;

    state_from_args!();

    async fn handle(
        &self,
        myself: ActorRef<PhilMsg>,
        msg: PhilMsg,
        st: &mut Philosopher,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            PhilMsg::Start => tell(&st.arbitrator, ArbMsg::Hungry(myself, st.id)),
            PhilMsg::Denied => {
                st.retries += 1;
                tell(&st.arbitrator, ArbMsg::Hungry(myself, st.id));
            }
            PhilMsg::Eat => {
                st.meals += 1;
                st.retry_total += st.retries;
                tell(&st.arbitrator, ArbMsg::Done(st.id));
                if st.meals < st.meals_wanted {
                    tell(&myself, PhilMsg::Start);
                } else {
                    st.totals.meals.fetch_add(st.meals, Ordering::Relaxed);
                    st.totals
                        .retries
                        .fetch_add(st.retry_total, Ordering::Relaxed);
                    tell(&st.arbitrator, ArbMsg::Exit);
                    myself.stop(None);
                }
            }
        }
        Ok(())
    }
}

impl Actor for ArbitratorActor {
    type Msg = ArbMsg;
    type State = Arbitrator;
    type Arguments = Arbitrator;

    state_from_args!();

    async fn handle(
        &self,
        myself: ActorRef<ArbMsg>,
        msg: ArbMsg,
        st: &mut Arbitrator,
    ) -> Result<(), ActorProcessingErr> {
        let n = st.forks.len();
        match msg {
            ArbMsg::Hungry(philosopher, id) => {
                let (left, right) = (id, (id + 1) % n);
                if st.forks[left] || st.forks[right] {
                    tell(&philosopher, PhilMsg::Denied);
                } else {
                    st.forks[left] = true;
                    st.forks[right] = true;
                    st.granted += 1;
                    tell(&philosopher, PhilMsg::Eat);
                }
            }
            ArbMsg::Done(id) => {
                let (left, right) = (id, (id + 1) % n);
                if !(st.forks[left] && st.forks[right]) {
                    st.violations += 1;
                }
                st.forks[left] = false;
                st.forks[right] = false;
            }
            ArbMsg::Exit => {
                st.exits += 1;
                if st.exits == n {
                    if let Some(done) = st.done.take() {
                        let _ = done.send((st.granted, st.violations));
                    }
                    myself.stop(None);
                }
            }
        }
        Ok(())
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
        let arbitrator = Arbitrator {
            forks: vec![false; n],
            granted: 0,
            violations: 0,
            exits: 0,
            done: Some(done),
            _exit: latch.enter(),
        };
        let arbitrator = common::spawn(ArbitratorActor, arbitrator).await;
        let mut philosophers = Vec::new();
        for id in 0..n {
            let philosopher = Philosopher {
                id,
                meals: 0,
                meals_wanted: m,
                retries: 0,
                retry_total: 0,
                arbitrator: arbitrator.clone(),
                totals: Arc::clone(&totals),
                _exit: latch.enter(),
            };
            philosophers.push(common::spawn(PhilosopherActor, philosopher).await);
        }
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
