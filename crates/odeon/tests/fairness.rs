//! Fairness (DESIGN §1.3): self-senders, flooded actors, and actors that spin or block
//! their thread must not starve other actors. Every assertion is about the order of
//! events, never about time; channel timeouts only turn a hang into a failure.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use odeon::{Actor, ActorRef, AsyncHandler, Context, Handler, Message, System};

/// Long enough that only a hang reaches it.
const HANG_GUARD: Duration = Duration::from_secs(60);

// --- ActorFoundry's FairActor scenario -------------------------------------------------

struct Calculator;
impl Actor for Calculator {}

struct Compute {
    n: u64,
    reply_to: ActorRef<Busy>,
}
impl Message for Compute {
    type Reply = ();
}
impl Handler<Compute> for Calculator {
    fn handle(&mut self, msg: Compute, _: &mut Context<Self>) {
        let sum = (1..=msg.n).sum();
        let _ = msg.reply_to.tell(Answer(sum));
    }
}

struct Busy {
    calc: ActorRef<Calculator>,
    answer: Option<u64>,
    waits: u64,
    done: mpsc::Sender<(u64, u64)>,
}

struct Wait;
impl Message for Wait {
    type Reply = ();
}
struct Answer(u64);
impl Message for Answer {
    type Reply = ();
}

impl Actor for Busy {
    fn started(&mut self, cx: &mut Context<Self>) {
        let _ = self.calc.tell(Compute {
            n: 1000,
            reply_to: cx.myself(),
        });
        cx.notify(Wait).expect("the mailbox is unbounded");
    }
}

impl Handler<Wait> for Busy {
    fn handle(&mut self, _: Wait, cx: &mut Context<Self>) {
        match self.answer {
            // Busy-wait: send ourselves another "wait" (never idle, never blocking).
            None => {
                self.waits += 1;
                cx.notify(Wait).expect("the mailbox is unbounded");
            }
            Some(a) => {
                let _ = self.done.send((a, self.waits));
                cx.stop();
            }
        }
    }
}

impl Handler<Answer> for Busy {
    fn handle(&mut self, msg: Answer, _: &mut Context<Self>) {
        self.answer = Some(msg.0);
    }
}

fn fair_actor_terminates(workers: usize) {
    let system = System::builder().workers(workers).build();
    let (tx, rx) = mpsc::channel();
    let calc = system.spawn(Calculator);
    let _busy = system.spawn(Busy {
        calc,
        answer: None,
        waits: 0,
        done: tx,
    });
    let (answer, waits) = rx
        .recv_timeout(HANG_GUARD)
        .expect("the self-sending actor starved the calculator");
    assert_eq!(answer, 500_500);
    assert!(waits > 0, "the busy actor did busy-wait");
}

#[test]
fn a_self_sending_busy_waiter_does_not_starve_the_calculator_on_one_worker() {
    fair_actor_terminates(1);
}

#[test]
fn a_self_sending_busy_waiter_does_not_starve_the_calculator_on_two_workers() {
    fair_actor_terminates(2);
}

// --- A flooded actor does not starve a light one ---------------------------------------
//
// The heavy actor's mailbox is filled while it is held in an async handler. While it
// handles the first message of the flood it pokes the light actor, so the light actor
// has mail while the rest of the flood is still queued: a worker that ran the heavy
// actor to the end of its mailbox would let the light actor see the whole flood
// drained. The order is fixed by the actors themselves, not by the test thread's timing.

struct Heavy {
    handled: Arc<AtomicU64>,
    light: ActorRef<Light>,
}
impl Actor for Heavy {}

struct Gate(Arc<tokio::sync::Notify>);
impl Message for Gate {
    type Reply = ();
}
impl AsyncHandler<Gate> for Heavy {
    async fn handle(&mut self, msg: Gate, _: &mut Context<Self>) {
        msg.0.notified().await;
    }
}

struct Work;
impl Message for Work {
    type Reply = ();
}
impl Handler<Work> for Heavy {
    fn handle(&mut self, _: Work, _: &mut Context<Self>) {
        if self.handled.fetch_add(1, Ordering::Relaxed) == 0 {
            self.light.tell(Peek).expect("the light actor is alive");
        }
    }
}

struct Light {
    heavy_handled: Arc<AtomicU64>,
    seen: mpsc::Sender<u64>,
}
impl Actor for Light {}

struct Peek;
impl Message for Peek {
    type Reply = ();
}
impl Handler<Peek> for Light {
    fn handle(&mut self, _: Peek, _: &mut Context<Self>) {
        let _ = self.seen.send(self.heavy_handled.load(Ordering::Relaxed));
    }
}

fn flooded_actor_does_not_starve_a_light_one(linger_rounds: u32) {
    const FLOOD: u64 = 200_000;
    let system = System::builder()
        .workers(1)
        .linger_rounds(linger_rounds)
        .build();
    let handled = Arc::new(AtomicU64::new(0));
    let (seen_tx, seen_rx) = mpsc::channel();
    let light = system.spawn(Light {
        heavy_handled: handled.clone(),
        seen: seen_tx,
    });
    let heavy = system.spawn(Heavy {
        handled: handled.clone(),
        light,
    });
    // Hold the heavy actor in an async handler while its mailbox fills up.
    let gate = Arc::new(tokio::sync::Notify::new());
    heavy.tell(Gate(gate.clone())).unwrap();
    for _ in 0..FLOOD {
        heavy.tell(Work).unwrap();
    }
    gate.notify_one();
    let seen = seen_rx
        .recv_timeout(HANG_GUARD)
        .expect("the light actor was never run");
    assert!(
        seen < FLOOD,
        "the light actor only ran after the flood was drained ({seen} of {FLOOD})"
    );
    system.run_until_quiescent();
    assert_eq!(
        handled.load(Ordering::Relaxed),
        FLOOD,
        "no message was lost"
    );
}

/// One worker, so only the per-turn budget can let the light actor in: with two, the
/// other worker could run it meanwhile and hide a missing budget.
#[test]
fn a_flooded_actor_does_not_starve_a_light_one() {
    flooded_actor_does_not_starve_a_light_one(odeon::defaults::LINGER_ROUNDS);
}

/// Lingering on a dry mailbox must not stretch a turn past its budget either way:
/// neither with lingering off nor with a linger far longer than the default.
#[test]
fn a_flooded_actor_does_not_starve_a_light_one_with_any_linger() {
    flooded_actor_does_not_starve_a_light_one(0);
    flooded_actor_does_not_starve_a_light_one(100_000);
}

// --- Actors that spin or block their thread --------------------------------------------

#[derive(Clone)]
struct Events(Arc<Mutex<Vec<&'static str>>>);
impl Events {
    fn push(&self, e: &'static str) {
        self.0.lock().unwrap().push(e);
    }
    fn list(&self) -> Vec<&'static str> {
        self.0.lock().unwrap().clone()
    }
}

/// Spins (or blocks in `sleep`) until `release` is set.
struct Hog {
    release: Arc<AtomicBool>,
    inside: Arc<AtomicBool>,
    block_in_syscall: bool,
    events: Events,
}
impl Actor for Hog {}

struct Hold {
    /// Sent just before the hog starts spinning: it sits in the hog worker's slot.
    kick: Option<ActorRef<Player>>,
}
impl Message for Hold {
    type Reply = ();
}
impl Handler<Hold> for Hog {
    fn handle(&mut self, msg: Hold, _: &mut Context<Self>) {
        if let Some(p) = msg.kick {
            let _ = p.tell(Serve);
        }
        self.inside.store(true, Ordering::SeqCst);
        while !self.release.load(Ordering::SeqCst) {
            if self.block_in_syscall {
                std::thread::sleep(Duration::from_millis(1));
            } else {
                std::hint::spin_loop();
            }
        }
        self.events.push("hog released");
    }
}

/// One side of a ping-pong of `total` messages.
struct Player {
    peer: Option<ActorRef<Player>>,
    left: u64,
    done: Option<mpsc::Sender<()>>,
    events: Events,
}
impl Actor for Player {}

struct SetPeer(ActorRef<Player>);
impl Message for SetPeer {
    type Reply = ();
}
impl Handler<SetPeer> for Player {
    fn handle(&mut self, msg: SetPeer, _: &mut Context<Self>) {
        self.peer = Some(msg.0);
    }
}

struct Serve;
impl Message for Serve {
    type Reply = ();
}
impl Handler<Serve> for Player {
    fn handle(&mut self, _: Serve, _: &mut Context<Self>) {
        if self.left == 0 {
            if let Some(done) = self.done.take() {
                self.events.push("ping-pong done");
                let _ = done.send(());
            }
            return;
        }
        self.left -= 1;
        if let Some(peer) = &self.peer {
            let _ = peer.tell(Serve);
        }
    }
}

fn ping_pong_completes_while_a_hog_holds_a_worker(
    workers: usize,
    block_in_syscall: bool,
    kick_from_hog: bool,
) {
    const EXCHANGES: u64 = 10_000;
    let system = System::builder()
        .workers(workers)
        .stall_threshold(Duration::from_millis(5))
        .build();
    let events = Events(Arc::default());
    let release = Arc::new(AtomicBool::new(false));
    let inside = Arc::new(AtomicBool::new(false));
    let (done_tx, done_rx) = mpsc::channel();
    let ping = system.spawn(Player {
        peer: None,
        left: EXCHANGES / 2,
        done: Some(done_tx),
        events: events.clone(),
    });
    let pong = system.spawn(Player {
        peer: Some(ping.clone()),
        left: EXCHANGES / 2,
        done: None,
        events: events.clone(),
    });
    system.block_on(ping.ask(SetPeer(pong.clone()))).unwrap();
    let hog = system.spawn(Hog {
        release: release.clone(),
        inside: inside.clone(),
        block_in_syscall,
        events: events.clone(),
    });
    hog.tell(Hold {
        kick: kick_from_hog.then(|| ping.clone()),
    })
    .unwrap();
    while !inside.load(Ordering::SeqCst) {
        std::thread::yield_now();
    }
    if !kick_from_hog {
        ping.tell(Serve).unwrap();
    }
    let finished = done_rx.recv_timeout(HANG_GUARD);
    release.store(true, Ordering::SeqCst);
    assert!(
        finished.is_ok(),
        "the ping-pong never finished while the hog held a worker"
    );
    system.run_until_quiescent();
    assert_eq!(events.list(), vec!["ping-pong done", "hog released"]);
}

#[test]
fn a_spinning_actor_on_two_workers_does_not_stop_a_ping_pong() {
    ping_pong_completes_while_a_hog_holds_a_worker(2, false, false);
}

#[test]
fn a_spinning_actor_on_the_only_worker_does_not_stop_a_ping_pong() {
    ping_pong_completes_while_a_hog_holds_a_worker(1, false, false);
}

#[test]
fn an_actor_blocked_in_a_syscall_on_the_only_worker_does_not_stop_a_ping_pong() {
    ping_pong_completes_while_a_hog_holds_a_worker(1, true, false);
}

#[test]
fn a_message_sent_just_before_an_actor_spins_is_still_handled() {
    // The player lands in the hog worker's "just messaged" slot; a spare must steal it.
    ping_pong_completes_while_a_hog_holds_a_worker(1, false, true);
}

// --- An actor fed one message at a time by a turn that never ends ----------------------

/// Counts what it is sent.
struct Fed {
    handled: Arc<AtomicU64>,
}
impl Actor for Fed {}

struct Feed;
impl Message for Feed {
    type Reply = ();
}
impl Handler<Feed> for Fed {
    fn handle(&mut self, _: Feed, _: &mut Context<Self>) {
        self.handled.fetch_add(1, Ordering::SeqCst);
    }
}

/// In one turn, sends `feeds` messages to `fed`, each only after the previous one was
/// handled, so each lands on an idle actor and makes it runnable from this worker.
struct Feeder {
    fed: ActorRef<Fed>,
    handled: Arc<AtomicU64>,
    feeds: u64,
    done: mpsc::Sender<u64>,
}
impl Actor for Feeder {}

struct FeedAll;
impl Message for FeedAll {
    type Reply = ();
}
impl Handler<FeedAll> for Feeder {
    fn handle(&mut self, _: FeedAll, _: &mut Context<Self>) {
        let start = std::time::Instant::now();
        let mut sent = 0;
        while sent < self.feeds && start.elapsed() < HANG_GUARD {
            if self.handled.load(Ordering::SeqCst) == sent {
                let _ = self.fed.tell(Feed);
                sent += 1;
            }
            std::hint::spin_loop();
        }
        while self.handled.load(Ordering::SeqCst) < sent && start.elapsed() < HANG_GUARD {
            std::hint::spin_loop();
        }
        let _ = self.done.send(self.handled.load(Ordering::SeqCst));
    }
}

#[test]
fn an_actor_made_runnable_by_a_stuck_turn_runs_without_waiting_for_the_monitor() {
    // The monitor looks once a second, so it calls the feeder's worker stuck after a
    // second or two. From then on each `Feed` makes `Fed` runnable on that stuck worker;
    // if it waited in the stuck worker's slot for the monitor to wake another worker,
    // 30 feeds would take 30 monitor looks (30 s), past the guard below. Placed where
    // another worker takes it, and that worker woken at once, they take milliseconds.
    const FEEDS: u64 = 30;
    let system = System::builder()
        .workers(2)
        .stall_threshold(Duration::from_millis(5))
        .monitor_interval(Duration::from_secs(1))
        .build();
    let handled = Arc::new(AtomicU64::new(0));
    let fed = system.spawn(Fed {
        handled: handled.clone(),
    });
    let (done_tx, done_rx) = mpsc::channel();
    let feeder = system.spawn(Feeder {
        fed,
        handled: handled.clone(),
        feeds: FEEDS,
        done: done_tx,
    });
    feeder.tell(FeedAll).unwrap();
    // Generous: detection takes two looks (2 s); the feeds after it take no look at all.
    let got = done_rx.recv_timeout(Duration::from_secs(20));
    assert_eq!(
        got.ok(),
        Some(FEEDS),
        "each feed waited for the monitor instead of running on another worker"
    );
}
