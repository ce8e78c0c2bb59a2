//! Cigarette Smokers (Savina #14, `shared/savina.md` §3.14): an arbiter picks a smoker
//! and a smoking time each round; smokers confirm *before* they smoke, so their busy
//! work overlaps with the next rounds.

use std::sync::mpsc;

use odeon::{Actor, ActorRef, Context, Handler, Message};
use savina::rng::{JavaRandom, PseudoRandom};
use savina::{Outcome, Params};

use super::{Exit, Latch, busy_seed, busy_wait, outcome, timed};

struct Arbiter {
    rounds: u32,
    smokers: usize,
    random: PseudoRandom,
    refs: Vec<ActorRef<Smoker>>,
    done: u32,
    report: mpsc::Sender<(u64, u64)>,
    exit: Exit,
}

struct Smoker {
    arbiter: ActorRef<Arbiter>,
    busy: JavaRandom,
    /// Rounds smoked and their total period, reported on exit.
    smoked: u64,
    period_total: u64,
    report: mpsc::Sender<(u64, u64)>,
    _exit: Exit,
}

impl Actor for Arbiter {
    fn started(&mut self, cx: &mut Context<Self>) {
        let system = cx.system();
        self.refs = (0..self.smokers)
            .map(|_| {
                system.spawn(Smoker {
                    arbiter: cx.myself(),
                    busy: JavaRandom::new(busy_seed()),
                    smoked: 0,
                    period_total: 0,
                    report: self.report.clone(),
                    _exit: self.exit.enter(),
                })
            })
            .collect();
    }
}
impl Actor for Smoker {}

struct Start;
impl Message for Start {
    type Reply = ();
}

struct StartSmoking(i32);
impl Message for StartSmoking {
    type Reply = ();
}

struct StartedSmoking;
impl Message for StartedSmoking {
    type Reply = ();
}

struct ExitNow;
impl Message for ExitNow {
    type Reply = ();
}

/// The arbiter's choice for one round: (smoker, busy-wait period).
fn pick(random: &mut PseudoRandom, smokers: usize) -> (usize, i32) {
    let smoker = random.next_int().unsigned_abs() as usize % smokers;
    (smoker, random.next_int_bounded(1000) + 10)
}

impl Arbiter {
    fn notify(&mut self) {
        let (smoker, period) = pick(&mut self.random, self.smokers);
        let _ = self.refs[smoker].tell(StartSmoking(period));
    }
}

impl Handler<Start> for Arbiter {
    fn handle(&mut self, _: Start, _: &mut Context<Self>) {
        self.notify();
    }
}

impl Handler<StartedSmoking> for Arbiter {
    fn handle(&mut self, _: StartedSmoking, cx: &mut Context<Self>) {
        self.done += 1;
        if self.done >= self.rounds {
            for smoker in &self.refs {
                let _ = smoker.tell(ExitNow);
            }
            cx.stop();
        } else {
            self.notify();
        }
    }
}

impl Handler<StartSmoking> for Smoker {
    fn handle(&mut self, msg: StartSmoking, _: &mut Context<Self>) {
        let _ = self.arbiter.tell(StartedSmoking);
        self.smoked += 1;
        self.period_total += u64::from(msg.0.unsigned_abs());
        busy_wait(&mut self.busy, msg.0);
    }
}

impl Handler<ExitNow> for Smoker {
    fn handle(&mut self, _: ExitNow, cx: &mut Context<Self>) {
        let _ = self.report.send((self.smoked, self.period_total));
        cx.stop();
    }
}

pub(crate) fn run(params: &Params) -> Outcome {
    let rounds: u32 = params.get("r");
    let smokers: usize = params.get("s");
    if rounds == 0 || smokers == 0 {
        return Outcome::new(
            std::time::Duration::ZERO,
            Err("needs -r >= 1 and -s >= 1".into()),
        );
    }
    // The arbiter's choices replayed: the total period every smoker must have smoked.
    let seed = i64::from(rounds) * smokers as i64;
    let mut random = PseudoRandom::new(seed);
    let expected_period: u64 = (0..rounds)
        .map(|_| u64::from(pick(&mut random, smokers).1.unsigned_abs()))
        .sum();
    let (tx, rx) = mpsc::channel();
    let elapsed = timed(params, |system, latch: &Latch| {
        let arbiter = system.spawn(Arbiter {
            rounds,
            smokers,
            random: PseudoRandom::new(seed),
            refs: Vec::new(),
            done: 0,
            report: tx,
            exit: latch.enter(),
        });
        let _ = arbiter.tell(Start);
    });
    outcome(elapsed, || {
        let (mut reports, mut smoked, mut period) = (0, 0, 0);
        for (s, p) in rx.try_iter() {
            reports += 1;
            smoked += s;
            period += p;
        }
        if reports != smokers || smoked != u64::from(rounds) || period != expected_period {
            return Err(format!(
                "{reports} smokers smoked {smoked} rounds for {period}, \
                 expected {smokers}, {rounds}, {expected_period}"
            ));
        }
        Ok(format!("{rounds} rounds; total period {period}"))
    })
}
