//! Atomic reservations (`ActorRef::reserve`): while one is held the actor handles only
//! what is sent through it (a flood from other senders waits, in order); reservations
//! are granted FIFO; a lease cuts off a holder that never releases; a reserved actor
//! that awaits a reply it cannot get while reserved fails with a timeout instead of
//! hanging; other actors keep running; and Encore's Sleeping Barber loses no customer.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use odeon::testkit::{Sim, eventually, seeds};
use odeon::{
    Actor, ActorRef, AskError, AsyncHandler, Context, Ended, Handler, Message, ReserveError, System,
};

type Log = Arc<Mutex<Vec<(u32, u32)>>>;

struct Recorder {
    log: Log,
}
impl Actor for Recorder {}
struct Rec(u32, u32);
impl Message for Rec {
    type Reply = ();
}
impl Handler<Rec> for Recorder {
    fn handle(&mut self, m: Rec, _: &mut Context<Self>) {
        self.log.lock().unwrap().push((m.0, m.1));
    }
}
struct Count;
impl Message for Count {
    type Reply = usize;
}
impl Handler<Count> for Recorder {
    fn handle(&mut self, _: Count, _: &mut Context<Self>) -> usize {
        self.log.lock().unwrap().len()
    }
}

const HOLDER: u32 = 7;
/// How far a flood may run ahead of the actor it floods. Unit: messages.
const BACKLOG: usize = 2_000;
const GUARD: Duration = Duration::from_secs(30);

fn recorder(system: &System) -> (ActorRef<Recorder>, Log) {
    let log: Log = Arc::default();
    (system.spawn(Recorder { log: log.clone() }), log)
}

#[test]
fn while_reserved_no_foreign_message_is_handled_and_the_flood_waits_in_order() {
    let system = System::builder().workers(2).budget(4).build();
    let (rec, log) = recorder(&system);
    let stop = Arc::new(AtomicBool::new(false));
    let pushed = Arc::new(AtomicUsize::new(0));
    let gated = Arc::new(AtomicBool::new(false));
    let flood = {
        let (rec, stop, pushed, log) = (rec.clone(), stop.clone(), pushed.clone(), log.clone());
        let gated = gated.clone();
        std::thread::spawn(move || {
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                // Keep the backlog bounded, so that later asks are not stuck behind it.
                if i as usize > log.lock().unwrap().len() + BACKLOG {
                    gated.store(true, Ordering::SeqCst);
                    std::thread::yield_now();
                    continue;
                }
                gated.store(false, Ordering::SeqCst);
                rec.tell(Rec(1, i)).unwrap();
                pushed.fetch_add(1, Ordering::SeqCst);
                i += 1;
            }
        })
    };
    eventually(GUARD, || system.block_on(rec.ask(Count)).unwrap() > 50);
    for round in 0..10u32 {
        system.block_on(async {
            let r = rec.reserve().await.unwrap();
            for i in 0..30 {
                r.tell(Rec(HOLDER, round * 100 + i)).unwrap();
                if i % 10 == 9 {
                    // Let the flood push while we hold the actor, and read back.
                    let at = pushed.load(Ordering::SeqCst);
                    // (Unless the flood has hit its backlog bound meanwhile.)
                    while pushed.load(Ordering::SeqCst) < at + 5 && !gated.load(Ordering::SeqCst) {
                        std::thread::yield_now();
                    }
                    let before = r.ask(Count).await.unwrap();
                    let after = r.ask(Count).await.unwrap();
                    assert_eq!(after, before, "a foreign message got in between two asks");
                }
            }
            r.release();
        });
    }
    stop.store(true, Ordering::Relaxed);
    flood.join().unwrap();
    system.block_on(rec.ask(Count)).unwrap();
    let log = log.lock().unwrap().clone();
    for round in 0..10u32 {
        let first = log
            .iter()
            .position(|e| e.0 == HOLDER && e.1 / 100 == round)
            .unwrap();
        let run = &log[first..first + 30];
        assert!(
            run.iter()
                .enumerate()
                .all(|(i, e)| *e == (HOLDER, round * 100 + i as u32)),
            "foreign message inside reservation {round}: {run:?}"
        );
    }
    let flood_order: Vec<u32> = log.iter().filter(|e| e.0 == 1).map(|e| e.1).collect();
    assert!(
        flood_order.windows(2).all(|w| w[0] < w[1]),
        "the flood lost its order"
    );
    system.shutdown();
}

#[test]
fn reservations_are_granted_in_request_order_and_a_second_one_waits() {
    let sim = Sim::new(3);
    let log: Log = Arc::default();
    let rec = sim.spawn(Recorder { log: log.clone() });
    let first = sim.block_on(rec.reserve()).unwrap();
    let mut second = Box::pin(rec.reserve());
    let mut third = Box::pin(rec.reserve());
    assert!(sim.poll(&mut second).is_pending());
    assert!(sim.poll(&mut third).is_pending());
    sim.run_until_idle();
    assert!(
        sim.poll(&mut second).is_pending(),
        "granted while the first is held"
    );
    first.tell(Rec(HOLDER, 0)).unwrap();
    drop(first);
    sim.run_until_idle();
    let Poll::Ready(Ok(second)) = sim.poll(&mut second) else {
        panic!("the second reservation was not granted after the first ended");
    };
    assert!(
        sim.poll(&mut third).is_pending(),
        "the third overtook the second"
    );
    second.tell(Rec(HOLDER, 1)).unwrap();
    second.release();
    let third = sim.block_on(third).unwrap();
    third.tell(Rec(HOLDER, 2)).unwrap();
    drop(third);
    sim.run_until_idle();
    assert_eq!(
        *log.lock().unwrap(),
        [(HOLDER, 0), (HOLDER, 1), (HOLDER, 2)]
    );
}

#[test]
fn a_lease_cuts_off_a_holder_that_never_releases() {
    let system = System::new();
    for _ in 0..20 {
        let (rec, log) = recorder(&system);
        let r = system
            .block_on(rec.reserve().lease(Duration::from_millis(100)))
            .unwrap();
        // The lease runs on the wall clock from the grant. On a loaded machine it may
        // run out before the holder's message is handled, which is then dropped (as
        // documented); such a try shows nothing of the cut-off and is made again.
        let _ = r.tell(Rec(HOLDER, 0));
        if system.block_on(r.ask(Count).timeout(GUARD)) != Ok(1) {
            eventually(GUARD, || r.ended() == Some(Ended::LeaseExpired));
            continue;
        }
        // Another sender waits behind the reservation, then gets through once it expires.
        rec.tell(Rec(1, 0)).unwrap();
        let count = system.block_on(rec.ask(Count).timeout(GUARD));
        assert_eq!(count, Ok(2));
        assert_eq!(r.ended(), Some(Ended::LeaseExpired));
        assert!(!r.is_active());
        assert!(r.tell(Rec(HOLDER, 1)).is_err());
        assert_eq!(system.block_on(r.ask(Count)), Err(AskError::Stopped));
        assert_eq!(*log.lock().unwrap(), [(HOLDER, 0), (1, 0)]);
        system.shutdown();
        return;
    }
    panic!("the lease ran out before the holder's first message in 20 tries");
}

#[test]
fn dropping_a_reservation_handles_what_it_sent_then_the_mailbox() {
    let system = System::new();
    let (rec, log) = recorder(&system);
    let r = system.block_on(rec.reserve()).unwrap();
    rec.tell(Rec(1, 0)).unwrap();
    for i in 0..100 {
        r.tell(Rec(HOLDER, i)).unwrap();
    }
    drop(r);
    assert_eq!(system.block_on(rec.ask(Count)), Ok(101));
    let log = log.lock().unwrap().clone();
    assert_eq!(
        log[100],
        (1, 0),
        "the other sender's message came before the holder's"
    );
    system.shutdown();
}

#[test]
fn a_stopped_actor_cannot_be_reserved_and_a_stop_ends_a_reservation() {
    let system = System::new();
    let (rec, _) = recorder(&system);
    // A lease far past the guard: only the stop can end this reservation in time.
    let r = system
        .block_on(rec.reserve().lease(Duration::from_secs(3600)))
        .unwrap();
    rec.stop();
    eventually(GUARD, || !rec.is_alive());
    assert_eq!(r.ended(), Some(Ended::ActorStopped));
    assert!(r.tell(Rec(HOLDER, 0)).is_err());
    assert_eq!(
        system.block_on(rec.reserve()).unwrap_err(),
        ReserveError::Stopped
    );
    system.shutdown();
}

struct Boom;
impl Message for Boom {
    type Reply = ();
}
impl Handler<Boom> for Recorder {
    fn handle(&mut self, _: Boom, _: &mut Context<Self>) {
        panic!("boom");
    }
}

#[test]
fn a_panic_or_a_kill_ends_the_reservation_at_once() {
    let system = System::new();
    let (rec, _) = recorder(&system);
    let r = system
        .block_on(rec.reserve().lease(Duration::from_secs(3600)))
        .unwrap();
    assert_eq!(system.block_on(r.ask(Boom)), Err(AskError::Panicked));
    eventually(GUARD, || r.ended() == Some(Ended::ActorStopped));
    assert!(r.tell(Rec(HOLDER, 0)).is_err());

    let (rec, _) = recorder(&system);
    let r = system
        .block_on(rec.reserve().lease(Duration::from_secs(3600)))
        .unwrap();
    rec.kill();
    eventually(GUARD, || {
        r.ended() == Some(Ended::ActorStopped) && !rec.is_alive()
    });
    system.shutdown();
}

#[test]
fn a_second_reserve_by_the_holder_waits_until_the_first_lease_expires() {
    let system = System::new();
    let (rec, _) = recorder(&system);
    let first = system
        .block_on(rec.reserve().lease(Duration::from_millis(100)))
        .unwrap();
    // Nested on the same actor: waits for the first to end, here by its lease.
    let second = system.block_on(async { tokio_free_timeout(rec.reserve()).await });
    let second = second.expect("the nested reservation hung").unwrap();
    assert_eq!(first.ended(), Some(Ended::LeaseExpired));
    assert!(second.is_active());
    system.shutdown();
}

/// A guard without a tokio timer: an ask of the system's own timeout machinery would
/// need a handler; this polls `fut` against a deadline thread.
async fn tokio_free_timeout<F: std::future::Future>(fut: F) -> Option<F::Output> {
    let deadline = std::time::Instant::now() + GUARD;
    let mut fut = Box::pin(fut);
    std::future::poll_fn(|cx| match fut.as_mut().poll(cx) {
        Poll::Ready(v) => Poll::Ready(Some(v)),
        Poll::Pending if std::time::Instant::now() > deadline => Poll::Ready(None),
        Poll::Pending => {
            let waker = cx.waker().clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                waker.wake();
            });
            Poll::Pending
        }
    })
    .await
}

// ---- asks that cannot be answered while reserved -------------------------------

struct SelfAsker;
impl Actor for SelfAsker {}
struct Inner;
impl Message for Inner {
    type Reply = u32;
}
impl Handler<Inner> for SelfAsker {
    fn handle(&mut self, _: Inner, _: &mut Context<Self>) -> u32 {
        5
    }
}
/// Asks itself: the request waits in its own mailbox, behind the reservation.
struct AskMyself;
impl Message for AskMyself {
    type Reply = Result<u32, AskError>;
}
impl AsyncHandler<AskMyself> for SelfAsker {
    async fn handle(&mut self, _: AskMyself, cx: &mut Context<Self>) -> Result<u32, AskError> {
        cx.myself()
            .ask(Inner)
            .timeout(Duration::from_millis(100))
            .await
    }
}

#[test]
fn a_reserved_actor_that_awaits_its_own_mailbox_times_out_instead_of_hanging() {
    let system = System::new();
    let actor = system.spawn(SelfAsker);
    let reply = system.block_on(async {
        let r = actor.reserve().await.unwrap();
        r.ask(AskMyself).timeout(GUARD).await
    });
    assert_eq!(
        reply,
        Ok(Err(AskError::Timeout(Duration::from_millis(100))))
    );
    // After the reservation the actor works normally.
    assert_eq!(system.block_on(actor.ask(Inner)), Ok(5));
    system.shutdown();
}

/// A holder actor that reserves the target and asks it something whose handler asks
/// the holder back: the holder is busy awaiting, so the call-back cannot be answered.
struct Holder {
    target: ActorRef<CallsBack>,
}
impl Actor for Holder {}
struct Run;
impl Message for Run {
    type Reply = Result<Result<u32, AskError>, AskError>;
}
impl AsyncHandler<Run> for Holder {
    async fn handle(&mut self, _: Run, cx: &mut Context<Self>) -> <Run as Message>::Reply {
        let r = self.target.reserve().await.map_err(|_| AskError::Stopped)?;
        r.ask(CallMe(cx.myself())).timeout(GUARD).await
    }
}
struct Answer;
impl Message for Answer {
    type Reply = u32;
}
impl Handler<Answer> for Holder {
    fn handle(&mut self, _: Answer, _: &mut Context<Self>) -> u32 {
        1
    }
}
struct CallsBack;
impl Actor for CallsBack {}
struct CallMe(ActorRef<Holder>);
impl Message for CallMe {
    type Reply = Result<u32, AskError>;
}
impl AsyncHandler<CallMe> for CallsBack {
    async fn handle(&mut self, m: CallMe, _: &mut Context<Self>) -> Result<u32, AskError> {
        m.0.ask(Answer).timeout(Duration::from_millis(100)).await
    }
}

#[test]
fn a_holder_that_gets_asked_back_by_the_reserved_actor_sees_a_timeout_not_a_hang() {
    let system = System::new();
    let target = system.spawn(CallsBack);
    let holder = system.spawn(Holder { target });
    let out = system.block_on(holder.ask(Run).timeout(GUARD));
    assert_eq!(
        out,
        Ok(Ok(Err(AskError::Timeout(Duration::from_millis(100)))))
    );
    // Both actors recover.
    assert_eq!(system.block_on(holder.ask(Answer)), Ok(1));
    system.shutdown();
}

// ---- fairness ------------------------------------------------------------------

struct Flag(Arc<AtomicBool>);
impl Actor for Flag {}
struct Ping;
impl Message for Ping {
    type Reply = ();
}
impl Handler<Ping> for Flag {
    fn handle(&mut self, _: Ping, _: &mut Context<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
}
struct Busy {
    other_ran: Arc<AtomicBool>,
    before: Arc<AtomicUsize>,
    handled: usize,
}
impl Actor for Busy {}
struct Step;
impl Message for Step {
    type Reply = ();
}
impl Handler<Step> for Busy {
    fn handle(&mut self, _: Step, _: &mut Context<Self>) {
        self.handled += 1;
        if !self.other_ran.load(Ordering::SeqCst) {
            self.before.store(self.handled, Ordering::SeqCst);
        }
    }
}

#[test]
fn a_busy_reservation_does_not_stop_other_actors_from_running() {
    for seed in seeds(20) {
        let sim = Sim::new(seed);
        let other_ran = Arc::new(AtomicBool::new(false));
        let before = Arc::new(AtomicUsize::new(0));
        let busy = sim.spawn(Busy {
            other_ran: other_ran.clone(),
            before: before.clone(),
            handled: 0,
        });
        let flag = sim.spawn(Flag(other_ran.clone()));
        let r = sim.block_on(busy.reserve()).unwrap();
        const LEN: usize = 2_000;
        for _ in 0..LEN {
            r.tell(Step).unwrap();
        }
        flag.tell(Ping).unwrap();
        sim.run_until_idle();
        assert!(other_ran.load(Ordering::SeqCst));
        let before = before.load(Ordering::SeqCst);
        assert!(
            before < LEN,
            "seed {seed}: the other actor waited for the whole reservation"
        );
        drop(r);
        sim.run_until_idle();
    }
}

// ---- Encore's Sleeping Barber ----------------------------------------------------

const SEATS: usize = 3;

#[derive(Default)]
struct Barber {
    asleep: bool,
    cutting: Option<u32>,
    seats: VecDeque<u32>,
    served: Vec<u32>,
    /// A customer sat down while the barber slept: nobody will wake him (lost).
    lost: Vec<u32>,
}
impl Actor for Barber {}

struct IsAsleep;
impl Message for IsAsleep {
    type Reply = bool;
}
impl Handler<IsAsleep> for Barber {
    fn handle(&mut self, _: IsAsleep, _: &mut Context<Self>) -> bool {
        self.asleep
    }
}
struct WakeFor(u32);
impl Message for WakeFor {
    type Reply = ();
}
impl Handler<WakeFor> for Barber {
    fn handle(&mut self, m: WakeFor, cx: &mut Context<Self>) {
        assert!(self.asleep, "woken while awake");
        self.asleep = false;
        self.cutting = Some(m.0);
        cx.myself().tell(Finish).unwrap();
    }
}
struct TakeSeat(u32);
impl Message for TakeSeat {
    type Reply = bool;
}
impl Handler<TakeSeat> for Barber {
    fn handle(&mut self, m: TakeSeat, _: &mut Context<Self>) -> bool {
        if self.seats.len() == SEATS {
            return false;
        }
        if self.asleep {
            self.lost.push(m.0);
        }
        self.seats.push_back(m.0);
        true
    }
}
/// The barber's own message: a haircut is done; next customer or sleep.
struct Finish;
impl Message for Finish {
    type Reply = ();
}
impl Handler<Finish> for Barber {
    fn handle(&mut self, _: Finish, cx: &mut Context<Self>) {
        if let Some(c) = self.cutting.take() {
            self.served.push(c);
        }
        match self.seats.pop_front() {
            Some(next) => {
                self.cutting = Some(next);
                cx.myself().tell(Finish).unwrap();
            }
            None => self.asleep = true,
        }
    }
}
struct Report;
impl Message for Report {
    type Reply = (bool, Vec<u32>, usize, Vec<u32>);
}
impl Handler<Report> for Barber {
    fn handle(&mut self, _: Report, _: &mut Context<Self>) -> <Report as Message>::Reply {
        (
            self.asleep,
            self.served.clone(),
            self.seats.len(),
            self.lost.clone(),
        )
    }
}

struct Customer {
    barber: ActorRef<Barber>,
}
impl Actor for Customer {}
struct Visit(u32);
impl Message for Visit {
    type Reply = bool;
}
impl AsyncHandler<Visit> for Customer {
    /// Whether the customer gets a haircut (true) or finds every seat taken.
    async fn handle(&mut self, m: Visit, _: &mut Context<Self>) -> bool {
        let r = self.barber.reserve().await.unwrap();
        // The check and the action form one step: the barber cannot fall asleep in
        // between (his `Finish` waits behind the reservation).
        if r.ask(IsAsleep).await.unwrap() {
            r.tell(WakeFor(m.0)).unwrap();
            true
        } else {
            r.ask(TakeSeat(m.0)).await.unwrap()
        }
    }
}

#[test]
fn sleeping_barber_with_a_reservation_loses_no_customer() {
    let system = System::builder().workers(2).build();
    let barber = system.spawn(Barber {
        asleep: true,
        ..Barber::default()
    });
    const CUSTOMERS: u32 = 400;
    let customers: Vec<_> = (0..16)
        .map(|_| {
            system.spawn(Customer {
                barber: barber.clone(),
            })
        })
        .collect();
    let visits: Vec<_> = (0..CUSTOMERS)
        .map(|i| {
            customers[i as usize % customers.len()]
                .ask(Visit(i))
                .timeout(GUARD)
        })
        .collect();
    let mut got_cut = Vec::new();
    for (i, v) in visits.into_iter().enumerate() {
        if system.block_on(v).unwrap() {
            got_cut.push(i as u32);
        }
    }
    // Every customer who got in is eventually served, and the barber ends asleep
    // with empty seats: no one sat down unseen.
    eventually(GUARD, || {
        let (asleep, served, seated, _) = system.block_on(barber.ask(Report)).unwrap();
        asleep && seated == 0 && served.len() == got_cut.len()
    });
    let (_, mut served, _, lost) = system.block_on(barber.ask(Report)).unwrap();
    assert!(
        lost.is_empty(),
        "customers sat down while the barber slept: {lost:?}"
    );
    served.sort_unstable();
    assert_eq!(served, got_cut);
    assert!(!got_cut.is_empty());
    system.shutdown();
}
