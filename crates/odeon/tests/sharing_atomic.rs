//! Atomic batches (`ActorRef::atomic`, `ActorRef::batch`): the messages of a batch are
//! handled back to back, in order, with no other sender's message in between, across
//! turns (a small budget), async handlers and seeded interleavings; bounds and stopped
//! actors refuse a batch as a whole; other actors keep running during a long batch.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use odeon::testkit::{Sim, seeds};
use odeon::{
    Actor, ActorRef, AsyncHandler, BatchError, Context, Handler, Message, SpawnOptions, System,
};

type Log = Arc<Mutex<Vec<Entry>>>;

/// (source, batch number or u32::MAX for a plain message, index)
type Entry = (u32, u32, u32);

struct Recorder {
    log: Log,
}
impl Actor for Recorder {}

struct Rec(Entry);
impl Message for Rec {
    type Reply = ();
}
impl Handler<Rec> for Recorder {
    fn handle(&mut self, m: Rec, _: &mut Context<Self>) {
        self.log.lock().unwrap().push(m.0);
    }
}

/// An async message of a batch: records, awaits another actor, records again.
struct SlowRec(Entry, ActorRef<Echo>);
impl Message for SlowRec {
    type Reply = ();
}
impl AsyncHandler<SlowRec> for Recorder {
    async fn handle(&mut self, m: SlowRec, _: &mut Context<Self>) {
        self.log.lock().unwrap().push(m.0);
        let _ = m.1.ask(Ping).await;
        self.log.lock().unwrap().push(m.0);
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

struct Echo;
impl Actor for Echo {}
struct Ping;
impl Message for Ping {
    type Reply = ();
}
impl Handler<Ping> for Echo {
    fn handle(&mut self, _: Ping, _: &mut Context<Self>) {}
}

const PLAIN: u32 = u32::MAX;
/// How far a flood may run ahead of the actor it floods. Unit: messages.
const BACKLOG: usize = 2_000;

/// Each batch's entries form one contiguous run, in index order, of `len` entries
/// (`len_of(batch)`), whatever surrounds it.
fn assert_contiguous(log: &[Entry], batches: u32, len_of: impl Fn(u32) -> usize) {
    for b in 0..batches {
        let first = log
            .iter()
            .position(|e| e.1 == b)
            .unwrap_or_else(|| panic!("batch {b} missing"));
        let len = len_of(b);
        let run = &log[first..first + len];
        for (i, e) in run.iter().enumerate() {
            assert_eq!(
                e.1, b,
                "foreign entry {e:?} inside batch {b} at offset {i}: {run:?}"
            );
        }
        assert_eq!(
            log.iter().filter(|e| e.1 == b).count(),
            len,
            "batch {b} split"
        );
    }
}

#[test]
fn a_batch_is_never_interleaved_with_a_flood_from_other_senders() {
    // A tiny budget, so each batch spans many turns.
    let system = System::builder().workers(2).budget(3).build();
    let log: Log = Arc::default();
    let rec = system.spawn(Recorder { log: log.clone() });
    let stop = Arc::new(AtomicBool::new(false));
    let pushed = Arc::new(AtomicUsize::new(0));
    let flooders: Vec<_> = (0..2)
        .map(|t| {
            let rec = rec.clone();
            let stop = stop.clone();
            let pushed = pushed.clone();
            let log = log.clone();
            std::thread::spawn(move || {
                let mut i = 0;
                while !stop.load(Ordering::Relaxed) {
                    // Keep the backlog bounded, so that later asks are not stuck
                    // behind it.
                    if pushed.load(Ordering::SeqCst) > log.lock().unwrap().len() + BACKLOG {
                        std::thread::yield_now();
                        continue;
                    }
                    rec.tell(Rec((t, PLAIN, i))).unwrap();
                    pushed.fetch_add(1, Ordering::SeqCst);
                    i += 1;
                }
            })
        })
        .collect();
    // The flood is running before the first batch goes out.
    odeon::testkit::eventually(Duration::from_secs(30), || {
        system.block_on(rec.ask(Count)).unwrap() > 100
    });
    const BATCHES: u32 = 40;
    const LEN: u32 = 25;
    for b in 0..BATCHES {
        rec.atomic(|batch| {
            for i in 0..LEN {
                batch.tell(Rec((9, b, i)));
                // Let the flood push more between two messages of the batch: a batch
                // that sent its messages one by one would now be split.
                let at = pushed.load(Ordering::SeqCst);
                while pushed.load(Ordering::SeqCst) < at + 2 {
                    std::thread::yield_now();
                }
            }
        })
        .unwrap();
    }
    let seen = system.block_on(rec.ask(Count)).unwrap();
    stop.store(true, Ordering::Relaxed);
    for f in flooders {
        f.join().unwrap();
    }
    let log = log.lock().unwrap().clone();
    assert!(seen >= (BATCHES * LEN) as usize);
    assert!(
        log.iter().any(|e| e.1 == PLAIN),
        "the flood must actually run alongside"
    );
    assert_contiguous(&log, BATCHES, |_| LEN as usize);
    for b in 0..BATCHES {
        let idx: Vec<u32> = log.iter().filter(|e| e.1 == b).map(|e| e.2).collect();
        assert_eq!(idx, (0..LEN).collect::<Vec<_>>(), "batch {b} out of order");
    }
    system.shutdown();
}

#[test]
fn an_async_handler_inside_a_batch_lets_no_foreign_message_in() {
    let system = System::builder().workers(2).budget(2).build();
    let log: Log = Arc::default();
    let rec = system.spawn(Recorder { log: log.clone() });
    let echo = system.spawn(Echo);
    const BATCHES: u32 = 20;
    for b in 0..BATCHES {
        rec.tell(Rec((1, PLAIN, b))).unwrap();
        let mut batch = rec.batch();
        batch.tell(Rec((9, b, 0)));
        batch.tell(SlowRec((9, b, 1), echo.clone()));
        batch.tell(Rec((9, b, 2)));
        batch.send().unwrap();
        rec.tell(Rec((1, PLAIN, b))).unwrap();
    }
    system.block_on(rec.ask(Count)).unwrap();
    let log = log.lock().unwrap().clone();
    // Four entries per batch: the slow message records twice around its await.
    assert_contiguous(&log, BATCHES, |_| 4);
    system.shutdown();
}

#[test]
fn asks_in_a_batch_see_the_batch_before_them_and_nothing_else() {
    let system = System::new();
    let log: Log = Arc::default();
    let rec = system.spawn(Recorder { log: log.clone() });
    let (a, b) = rec
        .atomic(|batch| {
            batch.tell(Rec((0, 0, 0)));
            let a = batch.ask(Count);
            batch.tell(Rec((0, 0, 1)));
            (a, batch.ask(Count))
        })
        .unwrap();
    assert_eq!(system.block_on(a), Ok(1));
    assert_eq!(system.block_on(b), Ok(2));
    system.shutdown();
}

#[test]
fn a_batch_to_a_stopped_actor_is_refused_and_its_asks_fail() {
    let system = System::new();
    let rec = system.spawn(Recorder {
        log: Arc::default(),
    });
    rec.stop();
    odeon::testkit::eventually(Duration::from_secs(10), || !rec.is_alive());
    let mut batch = rec.batch();
    batch.tell(Rec((0, 0, 0)));
    let ask = batch.ask(Count);
    assert_eq!(batch.send(), Err(BatchError::Stopped));
    assert_eq!(system.block_on(ask), Err(odeon::AskError::Stopped));
    system.shutdown();
}

#[test]
fn a_bounded_mailbox_refuses_a_batch_larger_than_its_room_and_frees_slots_after() {
    let system = System::new();
    let log: Log = Arc::default();
    let rec = system.spawn_with(
        Recorder { log: log.clone() },
        SpawnOptions::new().bounded(4),
    );
    let too_big = rec.atomic(|b| {
        for i in 0..5 {
            b.tell(Rec((0, 0, i)));
        }
    });
    assert_eq!(too_big, Err(BatchError::Full));
    // Many batches of four in a row: each frees its slots once handled.
    for round in 0..50 {
        loop {
            let r = rec.atomic(|b| {
                for i in 0..4 {
                    b.tell(Rec((0, round, i)));
                }
            });
            match r {
                Ok(()) => break,
                Err(BatchError::Full) => std::thread::yield_now(),
                Err(e) => panic!("{e}"),
            }
        }
    }
    // The last batch may still hold its slots: retry the ask until it finds room.
    let count = loop {
        match system.block_on(rec.ask(Count)) {
            Err(odeon::AskError::Full) => std::thread::yield_now(),
            other => break other,
        }
    };
    assert_eq!(count, Ok(200));
    system.shutdown();
}

#[test]
fn dropping_an_unsent_batch_sends_nothing_and_fails_its_asks() {
    let system = System::new();
    let rec = system.spawn(Recorder {
        log: Arc::default(),
    });
    let ask = {
        let mut batch = rec.batch();
        batch.tell(Rec((0, 0, 0)));
        batch.ask(Count)
    };
    assert_eq!(system.block_on(ask), Err(odeon::AskError::Stopped));
    assert_eq!(system.block_on(rec.ask(Count)), Ok(0));
    system.shutdown();
}

// ---- seeded interleavings ------------------------------------------------------

struct Sender {
    to: ActorRef<Recorder>,
    id: u32,
}
impl Actor for Sender {}
struct Go(u32);
impl Message for Go {
    type Reply = ();
}
impl Handler<Go> for Sender {
    fn handle(&mut self, m: Go, _: &mut Context<Self>) {
        for i in 0..m.0 {
            self.to.tell(Rec((self.id, PLAIN, i))).unwrap();
        }
    }
}

struct Batcher {
    to: ActorRef<Recorder>,
}
impl Actor for Batcher {}
struct SendBatch(u32, u32);
impl Message for SendBatch {
    type Reply = ();
}
impl Handler<SendBatch> for Batcher {
    fn handle(&mut self, m: SendBatch, _: &mut Context<Self>) {
        let to = &self.to;
        to.atomic(|b| {
            for i in 0..m.1 {
                b.tell(Rec((99, m.0, i)));
                // Sent outside the batch while it is being built: lands before or
                // after it, never inside.
                to.tell(Rec((98, PLAIN, i))).unwrap();
            }
        })
        .unwrap();
    }
}

#[test]
fn under_every_seed_batches_stay_whole_among_other_senders() {
    for seed in seeds(100) {
        let sim = Sim::new(seed);
        let log: Log = Arc::default();
        let rec = sim.spawn(Recorder { log: log.clone() });
        let senders: Vec<_> = (0..3)
            .map(|id| {
                sim.spawn(Sender {
                    to: rec.clone(),
                    id,
                })
            })
            .collect();
        let batcher = sim.spawn(Batcher { to: rec.clone() });
        for b in 0..6 {
            batcher.tell(SendBatch(b, 2 + b)).unwrap();
            for s in &senders {
                s.tell(Go(3)).unwrap();
            }
        }
        sim.run_until_idle();
        let log = log.lock().unwrap().clone();
        assert_eq!(
            log.len(),
            2 * (0..6).map(|b| 2 + b as usize).sum::<usize>() + 6 * 3 * 3
        );
        assert_contiguous(&log, 6, |b| 2 + b as usize);
    }
}

// ---- fairness ------------------------------------------------------------------

struct Slowpoke {
    other_ran: Arc<AtomicBool>,
    /// How many batch messages were handled before the other actor first ran.
    before: Arc<AtomicUsize>,
    handled: usize,
}
impl Actor for Slowpoke {}
struct Step;
impl Message for Step {
    type Reply = ();
}
impl Handler<Step> for Slowpoke {
    fn handle(&mut self, _: Step, _: &mut Context<Self>) {
        if !self.other_ran.load(Ordering::SeqCst) {
            self.before.store(self.handled + 1, Ordering::SeqCst);
        }
        self.handled += 1;
    }
}

struct Flag(Arc<AtomicBool>);
impl Actor for Flag {}
impl Handler<Ping> for Flag {
    fn handle(&mut self, _: Ping, _: &mut Context<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[test]
fn a_long_batch_does_not_stop_other_actors_from_running() {
    for seed in seeds(20) {
        let sim = Sim::new(seed);
        let other_ran = Arc::new(AtomicBool::new(false));
        let before = Arc::new(AtomicUsize::new(0));
        let slow = sim.spawn(Slowpoke {
            other_ran: other_ran.clone(),
            before: before.clone(),
            handled: 0,
        });
        let flag = sim.spawn(Flag(other_ran.clone()));
        const LEN: usize = 2_000;
        slow.atomic(|b| {
            for _ in 0..LEN {
                b.tell(Step);
            }
        })
        .unwrap();
        flag.tell(Ping).unwrap();
        sim.run_until_idle();
        assert!(other_ran.load(Ordering::SeqCst));
        let before = before.load(Ordering::SeqCst);
        assert!(
            before < LEN,
            "seed {seed}: the other actor only ran after the whole batch ({before} messages)"
        );
    }
}

// ---- supervision -----------------------------------------------------------------

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
fn a_batch_sent_while_the_actor_awaits_a_restart_keeps_its_place_and_stays_whole() {
    for seed in seeds(50) {
        let sim = Sim::new(seed);
        let log: Log = Arc::default();
        let shared = log.clone();
        let spec = odeon::SupervisorSpec::new(odeon::Strategy::OneForOne)
            .max_restarts(10, Duration::from_secs(60));
        let (_sup, rec) = sim.supervise(spec, |c| {
            c.spawn(move || Recorder {
                log: shared.clone(),
            })
        });
        rec.tell(Rec((1, PLAIN, 0))).unwrap();
        rec.tell(Boom).unwrap();
        rec.tell(Rec((1, PLAIN, 1))).unwrap();
        rec.atomic(|b| {
            b.tell(Rec((1, 0, 0)));
            b.tell(Rec((1, 0, 1)));
        })
        .unwrap();
        rec.tell(Rec((1, PLAIN, 2))).unwrap();
        sim.run_until_idle();
        assert_eq!(
            *log.lock().unwrap(),
            [
                (1, PLAIN, 0),
                (1, PLAIN, 1),
                (1, 0, 0),
                (1, 0, 1),
                (1, PLAIN, 2)
            ],
            "seed {seed}: one sender's order across a restart"
        );
    }
}
