//! Sleeping Barber (Savina #13, `shared/savina.md` §3.13): a factory creates one actor
//! per customer; a waiting room queues them for one barber, turns them away when full,
//! and wakes the barber when he sleeps.

use std::collections::VecDeque;
use std::sync::mpsc;

use odeon::{Actor, ActorRef, Context, Handler, Message};
use savina::rng::{JavaRandom, PseudoRandom};
use savina::{Outcome, Params};

use super::{Exit, Latch, busy_seed, busy_wait, outcome, timed};

struct Room {
    capacity: usize,
    waiting: VecDeque<ActorRef<Customer>>,
    barber: ActorRef<Barber>,
    barber_asleep: bool,
    /// Customers turned away, reported on exit (the factory must count as many).
    turned_away: u64,
    report: mpsc::Sender<Report>,
    _exit: Exit,
}

struct Barber {
    random: PseudoRandom,
    busy: JavaRandom,
    haircut_rate: i32,
    _exit: Exit,
}

struct Factory {
    customers: u32,
    production_rate: i32,
    room: ActorRef<Room>,
    random: PseudoRandom,
    busy: JavaRandom,
    attempts: u64,
    haircuts: u32,
    report: mpsc::Sender<Report>,
    exit: Exit,
}

struct Customer {
    factory: ActorRef<Factory>,
    /// The customer's own reference, so that it lives until its haircut is done
    /// (see `timed`); dropped with the state when it exits.
    myself: Option<ActorRef<Customer>>,
    _exit: Exit,
}

enum Report {
    Room { turned_away: u64 },
    Factory { haircuts: u32, attempts: u64 },
}

impl Actor for Room {}
impl Actor for Barber {}
impl Actor for Factory {}
impl Actor for Customer {
    fn started(&mut self, cx: &mut Context<Self>) {
        self.myself = Some(cx.myself());
    }
}

/// A customer enters the room (from the factory) or the barber's chair (from the room).
struct Enter {
    customer: ActorRef<Customer>,
    room: ActorRef<Room>,
}
impl Message for Enter {
    type Reply = ();
}

macro_rules! signals {
    ($($name:ident),*) => {$(
        struct $name;
        impl Message for $name {
            type Reply = ();
        }
    )*};
}
// `Start` opens the factory and seats a customer; `Done` ends a haircut (to the
// customer) and reports it (to the factory).
signals!(Next, Wait, Full, Start, Done, ExitNow);

struct Returned(ActorRef<Customer>);
impl Message for Returned {
    type Reply = ();
}

impl Handler<Enter> for Room {
    fn handle(&mut self, msg: Enter, cx: &mut Context<Self>) {
        if self.waiting.len() == self.capacity {
            self.turned_away += 1;
            let _ = msg.customer.tell(Full);
        } else {
            if self.barber_asleep {
                self.barber_asleep = false;
                let _ = cx.notify(Next);
            } else {
                let _ = msg.customer.tell(Wait);
            }
            self.waiting.push_back(msg.customer);
        }
    }
}

impl Handler<Next> for Room {
    fn handle(&mut self, _: Next, cx: &mut Context<Self>) {
        match self.waiting.pop_front() {
            Some(customer) => {
                let room = cx.myself();
                let _ = self.barber.tell(Enter { customer, room });
            }
            None => {
                let _ = self.barber.tell(Wait);
                self.barber_asleep = true;
            }
        }
    }
}

impl Handler<ExitNow> for Room {
    fn handle(&mut self, _: ExitNow, cx: &mut Context<Self>) {
        let _ = self.barber.tell(ExitNow);
        let _ = self.report.send(Report::Room {
            turned_away: self.turned_away,
        });
        cx.stop();
    }
}

impl Handler<Enter> for Barber {
    fn handle(&mut self, msg: Enter, _: &mut Context<Self>) {
        let _ = msg.customer.tell(Start);
        busy_wait(
            &mut self.busy,
            self.random.next_int_bounded(self.haircut_rate) + 10,
        );
        let _ = msg.customer.tell(Done);
        let _ = msg.room.tell(Next);
    }
}

impl Handler<Wait> for Barber {
    fn handle(&mut self, _: Wait, _: &mut Context<Self>) {}
}

impl Handler<ExitNow> for Barber {
    fn handle(&mut self, _: ExitNow, cx: &mut Context<Self>) {
        cx.stop();
    }
}

impl Handler<Start> for Factory {
    /// Every customer is sent in this one handler, so returns and haircuts are only
    /// handled afterwards, as in the reference.
    fn handle(&mut self, _: Start, cx: &mut Context<Self>) {
        let system = cx.system();
        for _ in 0..self.customers {
            let customer = system.spawn(Customer {
                factory: cx.myself(),
                myself: None,
                _exit: self.exit.enter(),
            });
            self.attempts += 1;
            let room = self.room.clone();
            let _ = self.room.tell(Enter { customer, room });
            let pause = self.random.next_int_bounded(self.production_rate) + 10;
            busy_wait(&mut self.busy, pause);
        }
    }
}

impl Handler<Returned> for Factory {
    fn handle(&mut self, msg: Returned, _: &mut Context<Self>) {
        self.attempts += 1;
        let room = self.room.clone();
        let _ = self.room.tell(Enter {
            customer: msg.0,
            room,
        });
    }
}

impl Handler<Done> for Factory {
    fn handle(&mut self, _: Done, cx: &mut Context<Self>) {
        self.haircuts += 1;
        if self.haircuts == self.customers {
            let _ = self.room.tell(ExitNow);
            let _ = self.report.send(Report::Factory {
                haircuts: self.haircuts,
                attempts: self.attempts,
            });
            cx.stop();
        }
    }
}

impl Handler<Full> for Customer {
    fn handle(&mut self, _: Full, cx: &mut Context<Self>) {
        let _ = self.factory.tell(Returned(cx.myself()));
    }
}

impl Handler<Wait> for Customer {
    fn handle(&mut self, _: Wait, _: &mut Context<Self>) {}
}

impl Handler<Start> for Customer {
    fn handle(&mut self, _: Start, _: &mut Context<Self>) {}
}

impl Handler<Done> for Customer {
    fn handle(&mut self, _: Done, cx: &mut Context<Self>) {
        let _ = self.factory.tell(Done);
        cx.stop();
    }
}

pub(crate) fn run(params: &Params) -> Outcome {
    let customers: u32 = params.get("n");
    let capacity: usize = params.get("w");
    let production_rate: i32 = params.get("pr");
    let haircut_rate: i32 = params.get("hr");
    if customers == 0 || capacity == 0 || production_rate <= 0 || haircut_rate <= 0 {
        return Outcome::new(
            std::time::Duration::ZERO,
            Err("needs -n, -w, -pr and -hr >= 1".into()),
        );
    }
    let (tx, rx) = mpsc::channel();
    let elapsed = timed(params, |system, latch: &Latch| {
        let barber = system.spawn(Barber {
            random: PseudoRandom::default(),
            busy: JavaRandom::new(busy_seed()),
            haircut_rate,
            _exit: latch.enter(),
        });
        let room = system.spawn(Room {
            capacity,
            waiting: VecDeque::new(),
            barber,
            barber_asleep: true,
            turned_away: 0,
            report: tx.clone(),
            _exit: latch.enter(),
        });
        let factory = system.spawn(Factory {
            customers,
            production_rate,
            room,
            random: PseudoRandom::default(),
            busy: JavaRandom::new(busy_seed()),
            attempts: 0,
            haircuts: 0,
            report: tx,
            exit: latch.enter(),
        });
        let _ = factory.tell(Start);
    });
    outcome(elapsed, || {
        let (mut turned_away, mut factory) = (None, None);
        for report in rx.try_iter() {
            match report {
                Report::Room { turned_away: t } => turned_away = Some(t),
                Report::Factory { haircuts, attempts } => factory = Some((haircuts, attempts)),
            }
        }
        let (Some(turned_away), Some((haircuts, attempts))) = (turned_away, factory) else {
            return Err("the room or the factory sent no report".into());
        };
        if haircuts != customers || attempts != u64::from(customers) + turned_away {
            return Err(format!(
                "{haircuts} haircuts and {attempts} attempts with {turned_away} turned away, \
                 expected {customers} haircuts and {customers} + turned away attempts"
            ));
        }
        Ok(format!("{haircuts} haircuts; {attempts} attempts"))
    })
}
