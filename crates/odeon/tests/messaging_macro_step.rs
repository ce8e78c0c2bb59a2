//! Guarantee 1 (macro-step): an actor handles one message at a time, to completion, with
//! exclusive access to its state, and an async handler keeps the actor to itself until
//! it completes, across every `.await`.
//!
//! Each handler enters a critical section by swapping an `AtomicBool` to `true`; seeing
//! `true` already means another handler of the same actor is inside, which is counted as
//! an overlap. Async handlers also write an event log whose order shows whether any
//! other message was handled while they were suspended.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use odeon::{Actor, ActorRef, AsyncHandler, Context, Handler, Message, SpawnOptions, System};
use tokio::sync::Notify;

const GUARD: Duration = Duration::from_secs(10);

/// Detects two handlers of one actor running at once.
#[derive(Clone, Default)]
struct Exclusive {
    inside: Arc<AtomicBool>,
    overlaps: Arc<AtomicUsize>,
}

impl Exclusive {
    fn enter(&self) {
        if self.inside.swap(true, Ordering::SeqCst) {
            self.overlaps.fetch_add(1, Ordering::SeqCst);
        }
    }
    fn exit(&self) {
        self.inside.store(false, Ordering::SeqCst);
    }
    fn overlaps(&self) -> usize {
        self.overlaps.load(Ordering::SeqCst)
    }
}

// ---------------------------------------------------------------------------------------
// Synchronous handlers under many concurrent senders.

struct Guarded {
    ex: Exclusive,
    handled: u64,
    scratch: u64,
}
impl Actor for Guarded {}

struct Work(u64);
impl Message for Work {
    type Reply = ();
}
impl Handler<Work> for Guarded {
    fn handle(&mut self, msg: Work, _cx: &mut Context<Self>) {
        self.ex.enter();
        let before = self.handled;
        for i in 0..200u64 {
            self.scratch = self.scratch.wrapping_mul(31).wrapping_add(i ^ msg.0);
            if i % 64 == 0 {
                // Give another thread every chance to run a second handler now.
                std::thread::yield_now();
            }
        }
        assert_eq!(
            self.handled, before,
            "state changed under a running handler"
        );
        self.handled += 1;
        self.ex.exit();
    }
}

struct Handled;
impl Message for Handled {
    type Reply = u64;
}
impl Handler<Handled> for Guarded {
    fn handle(&mut self, _: Handled, _cx: &mut Context<Self>) -> u64 {
        self.ex.enter();
        let n = self.handled;
        self.ex.exit();
        n
    }
}

/// An actor that sends `Work` to a target in chunks, one chunk per turn.
struct Pump {
    target: ActorRef<Guarded>,
}
impl Actor for Pump {}

struct Go(u64);
impl Message for Go {
    type Reply = ();
}
impl Handler<Go> for Pump {
    fn handle(&mut self, Go(left): Go, cx: &mut Context<Self>) {
        let chunk = left.min(50);
        for i in 0..chunk {
            self.target.tell(Work(left - i)).unwrap();
        }
        if left > chunk {
            cx.notify(Go(left - chunk))
                .expect("the mailbox is unbounded");
        }
    }
}

fn many_senders_never_overlap(budget: usize, opts: SpawnOptions) {
    const THREADS: u64 = 3;
    const ACTORS: u64 = 3;
    const EACH: u64 = 2_000;
    let system = System::builder().workers(2).budget(budget).build();
    let ex = Exclusive::default();
    let target = system.spawn_with(
        Guarded {
            ex: ex.clone(),
            handled: 0,
            scratch: 0,
        },
        opts,
    );
    let pumps: Vec<_> = (0..ACTORS)
        .map(|_| {
            system.spawn(Pump {
                target: target.clone(),
            })
        })
        .collect();
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            let target = target.clone();
            s.spawn(move || {
                for i in 0..EACH {
                    target.tell(Work(i)).unwrap();
                }
            });
        }
        for p in &pumps {
            p.tell(Go(EACH)).unwrap();
        }
    });
    system.run_until_quiescent();
    assert_eq!(
        system.block_on(target.ask(Handled)),
        Ok((THREADS + ACTORS) * EACH),
        "every message handled"
    );
    assert_eq!(ex.overlaps(), 0, "two handlers of one actor ran at once");
}

#[test]
fn an_actor_flooded_by_threads_and_actors_never_runs_two_handlers_at_once() {
    many_senders_never_overlap(64, SpawnOptions::new());
}

#[test]
fn an_actor_that_changes_worker_after_every_message_never_runs_two_handlers_at_once() {
    many_senders_never_overlap(1, SpawnOptions::new());
}

#[test]
fn a_blocking_actor_on_its_own_thread_never_runs_two_handlers_at_once() {
    many_senders_never_overlap(8, SpawnOptions::new().blocking());
}

// ---------------------------------------------------------------------------------------
// Async handlers keep the actor across `.await`.

#[derive(Clone, Debug, PartialEq, Eq)]
enum Ev {
    AsyncStart(u32),
    AsyncEnd(u32),
    Sync { from: u32, seq: u32 },
}

struct Logger {
    ex: Exclusive,
    log: Vec<Ev>,
    helper: ActorRef<Helper>,
    gate: Arc<Notify>,
    entered: mpsc::Sender<()>,
}
impl Actor for Logger {}

/// An async message: suspends in the middle of its handler.
struct Slow(u32);
impl Message for Slow {
    type Reply = ();
}
impl AsyncHandler<Slow> for Logger {
    async fn handle(&mut self, Slow(n): Slow, _cx: &mut Context<Self>) {
        self.ex.enter();
        self.log.push(Ev::AsyncStart(n));
        let len = self.log.len();
        if n % 2 == 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        } else {
            // Await another actor's reply.
            self.helper.ask(Double(n)).await.unwrap();
        }
        assert_eq!(
            self.log.len(),
            len,
            "the log changed while the handler was suspended"
        );
        self.log.push(Ev::AsyncEnd(n));
        self.ex.exit();
    }
}

/// Suspends until the test opens the gate.
struct Gated(u32);
impl Message for Gated {
    type Reply = ();
}
impl AsyncHandler<Gated> for Logger {
    async fn handle(&mut self, Gated(n): Gated, _cx: &mut Context<Self>) {
        self.ex.enter();
        self.log.push(Ev::AsyncStart(n));
        let _ = self.entered.send(());
        self.gate.notified().await;
        self.log.push(Ev::AsyncEnd(n));
        self.ex.exit();
    }
}

struct Quick {
    from: u32,
    seq: u32,
}
impl Message for Quick {
    type Reply = ();
}
impl Handler<Quick> for Logger {
    fn handle(&mut self, Quick { from, seq }: Quick, _cx: &mut Context<Self>) {
        self.ex.enter();
        self.log.push(Ev::Sync { from, seq });
        self.ex.exit();
    }
}

struct TakeLog;
impl Message for TakeLog {
    type Reply = Vec<Ev>;
}
impl Handler<TakeLog> for Logger {
    fn handle(&mut self, _: TakeLog, _cx: &mut Context<Self>) -> Vec<Ev> {
        std::mem::take(&mut self.log)
    }
}

struct Helper;
impl Actor for Helper {}
struct Double(u32);
impl Message for Double {
    type Reply = u32;
}
impl Handler<Double> for Helper {
    fn handle(&mut self, Double(n): Double, _cx: &mut Context<Self>) -> u32 {
        n * 2
    }
}

/// Sends `Quick` messages from inside the pool.
struct QuickPump {
    target: ActorRef<Logger>,
    from: u32,
}
impl Actor for QuickPump {}
struct Burst {
    next: u32,
    end: u32,
}
impl Message for Burst {
    type Reply = ();
}
impl Handler<Burst> for QuickPump {
    fn handle(&mut self, Burst { next, end }: Burst, cx: &mut Context<Self>) {
        let stop = (next + 25).min(end);
        for seq in next..stop {
            self.target
                .tell(Quick {
                    from: self.from,
                    seq,
                })
                .unwrap();
        }
        if stop < end {
            cx.notify(Burst { next: stop, end })
                .expect("the mailbox is unbounded");
        }
    }
}

struct LoggerFixture {
    system: System,
    ex: Exclusive,
    gate: Arc<Notify>,
    entered: mpsc::Receiver<()>,
    logger: ActorRef<Logger>,
}

fn logger_fixture(opts: SpawnOptions) -> LoggerFixture {
    let system = System::builder().workers(2).build();
    let ex = Exclusive::default();
    let gate = Arc::new(Notify::new());
    let (tx, rx) = mpsc::channel();
    let helper = system.spawn(Helper);
    let logger = system.spawn_with(
        Logger {
            ex: ex.clone(),
            log: Vec::new(),
            helper,
            gate: gate.clone(),
            entered: tx,
        },
        opts,
    );
    LoggerFixture {
        system,
        ex,
        gate,
        entered: rx,
        logger,
    }
}

/// Checks the macro-step shape of a log: every `AsyncStart(n)` is immediately followed
/// by `AsyncEnd(n)`, and no `AsyncEnd` appears anywhere else.
fn assert_async_handlers_were_atomic(log: &[Ev]) {
    let mut i = 0;
    while i < log.len() {
        match &log[i] {
            Ev::AsyncStart(n) => {
                assert_eq!(
                    log.get(i + 1),
                    Some(&Ev::AsyncEnd(*n)),
                    "something ran inside async handler {n} (at index {i}): {:?}",
                    &log[i..(i + 4).min(log.len())]
                );
                i += 2;
            }
            Ev::AsyncEnd(n) => panic!("AsyncEnd({n}) without its start at index {i}"),
            Ev::Sync { .. } => i += 1,
        }
    }
}

fn queued_sync_messages_wait_for_a_suspended_async_handler(opts: SpawnOptions) {
    let fx = logger_fixture(opts);
    fx.logger.tell(Gated(7)).unwrap();
    fx.entered
        .recv_timeout(GUARD)
        .expect("the async handler never started");
    // The handler is suspended now, with its worker free. Everything sent meanwhile
    // must wait until it completes.
    for seq in 0..100 {
        fx.logger.tell(Quick { from: 0, seq }).unwrap();
    }
    fx.gate.notify_one();
    fx.system.run_until_quiescent();
    let log = fx.system.block_on(fx.logger.ask(TakeLog)).unwrap();
    let mut expected = vec![Ev::AsyncStart(7), Ev::AsyncEnd(7)];
    expected.extend((0..100).map(|seq| Ev::Sync { from: 0, seq }));
    assert_eq!(log, expected);
    assert_eq!(fx.ex.overlaps(), 0);
}

#[test]
fn sync_messages_queued_while_an_async_handler_is_suspended_wait_until_it_completes() {
    queued_sync_messages_wait_for_a_suspended_async_handler(SpawnOptions::new());
}

#[test]
fn a_blocking_actor_also_waits_for_its_suspended_async_handler_before_other_mail() {
    queued_sync_messages_wait_for_a_suspended_async_handler(SpawnOptions::new().blocking());
}

fn async_handlers_are_never_interleaved(opts: SpawnOptions) {
    const SLOW: u32 = 40;
    const THREADS: u32 = 3;
    const ACTORS: u32 = 2;
    const EACH: u32 = 1_000;
    let fx = logger_fixture(opts);
    let pumps: Vec<_> = (0..ACTORS)
        .map(|a| {
            fx.system.spawn(QuickPump {
                target: fx.logger.clone(),
                from: THREADS + a,
            })
        })
        .collect();
    std::thread::scope(|s| {
        let logger = fx.logger.clone();
        s.spawn(move || {
            for n in 0..SLOW {
                logger.tell(Slow(n)).unwrap();
                std::thread::yield_now();
            }
        });
        for from in 0..THREADS {
            let logger = fx.logger.clone();
            s.spawn(move || {
                for seq in 0..EACH {
                    logger.tell(Quick { from, seq }).unwrap();
                }
            });
        }
        for p in &pumps {
            p.tell(Burst { next: 0, end: EACH }).unwrap();
        }
    });
    fx.system.run_until_quiescent();
    let log = fx.system.block_on(fx.logger.ask(TakeLog)).unwrap();

    assert_eq!(fx.ex.overlaps(), 0, "two handlers of one actor ran at once");
    assert_async_handlers_were_atomic(&log);

    let starts: Vec<u32> = log
        .iter()
        .filter_map(|e| match e {
            Ev::AsyncStart(n) => Some(*n),
            _ => None,
        })
        .collect();
    assert_eq!(
        starts,
        (0..SLOW).collect::<Vec<_>>(),
        "async messages in order"
    );

    let mut per_sender: HashMap<u32, Vec<u32>> = HashMap::new();
    for e in &log {
        if let Ev::Sync { from, seq } = e {
            per_sender.entry(*from).or_default().push(*seq);
        }
    }
    assert_eq!(per_sender.len(), (THREADS + ACTORS) as usize);
    for (from, seqs) in per_sender {
        assert_eq!(seqs, (0..EACH).collect::<Vec<_>>(), "sender {from}");
    }
}

#[test]
fn async_handlers_that_await_timers_and_asks_are_never_interleaved_with_sync_messages() {
    async_handlers_are_never_interleaved(SpawnOptions::new());
}

#[test]
fn a_blocking_actors_async_handlers_are_never_interleaved_with_sync_messages() {
    async_handlers_are_never_interleaved(SpawnOptions::new().blocking());
}
