//! The throttle (`scheduler/throttle.rs`) benches workers while fewer of them handle
//! more messages per second. Benching must keep every guarantee: no message lost, FIFO
//! per pair, and fairness (a stuck worker brings the benched ones back). These tests
//! force the benched state with `System::bench_workers_for_test` and check what actors
//! observe; timeouts only turn a hang into a failure.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use odeon::{Actor, ActorRef, Context, Handler, Message, System};

const HANG_GUARD: Duration = Duration::from_secs(60);

fn thread_name() -> String {
    std::thread::current()
        .name()
        .unwrap_or("unnamed")
        .to_owned()
}

// --- Big-like traffic: random ping/pong between many actors ---------------------------

struct Peer {
    id: usize,
    peers: Vec<ActorRef<Peer>>,
    rng: u64,
    /// Pings this actor still has to send (one outstanding at a time, as in Savina's Big).
    left: u32,
    /// Next sequence number expected from each pinger (FIFO per pair).
    expected: Vec<u64>,
    /// Next sequence number to send to each peer.
    next: Vec<u64>,
    pings_answered: u64,
    threads: Arc<Mutex<HashSet<String>>>,
    done: mpsc::Sender<Result<u64, String>>,
}
impl Actor for Peer {}

struct Wire(Vec<ActorRef<Peer>>);
impl Message for Wire {
    type Reply = ();
}
struct Ping {
    from: usize,
    seq: u64,
}
impl Message for Ping {
    type Reply = ();
}
/// The answer to a ping; the kick-off is a pong from nobody.
struct Pong;
impl Message for Pong {
    type Reply = ();
}
struct Report;
impl Message for Report {
    type Reply = ();
}

impl Peer {
    fn note_thread(&self) {
        self.threads
            .lock()
            .expect("no test thread panicked")
            .insert(thread_name());
    }
}

impl Handler<Wire> for Peer {
    fn handle(&mut self, Wire(peers): Wire, _: &mut Context<Self>) {
        self.expected = vec![0; peers.len()];
        self.next = vec![0; peers.len()];
        self.peers = peers;
    }
}

impl Handler<Ping> for Peer {
    fn handle(&mut self, ping: Ping, _: &mut Context<Self>) {
        self.note_thread();
        if ping.seq != self.expected[ping.from] {
            let _ = self.done.send(Err(format!(
                "actor {} got ping {} from {}, expected {}",
                self.id, ping.seq, ping.from, self.expected[ping.from]
            )));
        }
        self.expected[ping.from] = ping.seq + 1;
        self.pings_answered += 1;
        let _ = self.peers[ping.from].tell(Pong);
    }
}

impl Handler<Pong> for Peer {
    fn handle(&mut self, _: Pong, _: &mut Context<Self>) {
        self.note_thread();
        if self.left == 0 {
            // Every ping of ours was answered, so it was handled before this pong.
            let _ = self.done.send(Ok(0));
            return;
        }
        self.left -= 1;
        // xorshift: a random peer each time (maybe itself), like Savina's Big.
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        let to = (self.rng % self.peers.len() as u64) as usize;
        let seq = self.next[to];
        self.next[to] += 1;
        let _ = self.peers[to].tell(Ping { from: self.id, seq });
    }
}

impl Handler<Report> for Peer {
    fn handle(&mut self, _: Report, _: &mut Context<Self>) {
        let _ = self.done.send(Ok(self.pings_answered));
    }
}

/// Runs `actors` peers that each make `pings` round trips to random peers. Checks
/// that every ping was answered once and in order per pair, and returns the names of
/// the threads that ran the handlers.
fn random_traffic(system: &System, actors: usize, pings: u32) -> HashSet<String> {
    let threads = Arc::new(Mutex::new(HashSet::new()));
    let (tx, rx) = mpsc::channel();
    let peers: Vec<ActorRef<Peer>> = (0..actors)
        .map(|id| {
            system.spawn(Peer {
                id,
                peers: Vec::new(),
                rng: id as u64 * 0x9E37_79B9 + 1,
                left: pings,
                expected: Vec::new(),
                next: Vec::new(),
                pings_answered: 0,
                threads: threads.clone(),
                done: tx.clone(),
            })
        })
        .collect();
    for p in &peers {
        p.tell(Wire(peers.clone())).expect("alive");
    }
    for p in &peers {
        p.tell(Pong).expect("alive");
    }
    let collect = |what: &str| -> u64 {
        let mut sum = 0;
        for _ in 0..actors {
            match rx.recv_timeout(HANG_GUARD) {
                Ok(Ok(n)) => sum += n,
                Ok(Err(order)) => panic!("FIFO per pair broken: {order}"),
                Err(e) => panic!("{what}: {e}"),
            }
        }
        sum
    };
    collect("every peer finishes its pings");
    for p in &peers {
        p.tell(Report).expect("alive");
    }
    let answered = collect("every peer reports");
    assert_eq!(
        answered,
        actors as u64 * u64::from(pings),
        "every ping answered once"
    );
    threads.lock().expect("no test thread panicked").clone()
}

#[test]
fn a_benched_worker_runs_nothing_and_no_message_is_lost_or_reordered() {
    // The monitor ticks once an hour here, so the forced state holds for the test.
    let system = System::builder()
        .workers(2)
        .monitor_interval(Duration::from_secs(3600))
        .build();
    system.bench_workers_for_test(1);
    let threads = random_traffic(&system, 64, 2_000);
    assert_eq!(
        threads,
        HashSet::from(["odeon-worker-0".to_owned()]),
        "only the active worker ran turns"
    );
    // Brought back, the second worker takes shared work again.
    system.bench_workers_for_test(2);
    let threads = random_traffic(&system, 64, 2_000);
    assert!(threads.contains("odeon-worker-0"));
    system.shutdown();
}

#[test]
fn the_adaptive_pool_loses_nothing_under_sustained_message_bound_load() {
    // Long enough for the monitor to probe and bench (it first looks after ~20 ms of
    // busy ticks); whatever it decides, every ping must be answered, in order.
    let system = System::builder().workers(2).adaptive_workers(true).build();
    for _ in 0..3 {
        random_traffic(&system, 120, 20_000);
    }
    system.shutdown();
}

// --- Fairness: a stuck worker brings the benched ones back -----------------------------

struct Spinner {
    release: Arc<AtomicBool>,
}
impl Actor for Spinner {}

struct Spin(mpsc::Sender<String>);
impl Message for Spin {
    type Reply = ();
}
impl Handler<Spin> for Spinner {
    fn handle(&mut self, Spin(started): Spin, _: &mut Context<Self>) {
        let _ = started.send(thread_name());
        // Holds its worker until the test lets go (never yields, never blocks).
        while !self.release.load(Ordering::Acquire) {
            std::hint::spin_loop();
        }
    }
}

struct Victim;
impl Actor for Victim {}

struct WhereAreYou;
impl Message for WhereAreYou {
    type Reply = String;
}
impl Handler<WhereAreYou> for Victim {
    fn handle(&mut self, _: WhereAreYou, _: &mut Context<Self>) -> String {
        thread_name()
    }
}

#[test]
fn a_worker_stuck_while_the_others_are_benched_starves_no_one() {
    // Not adaptive: only the test benches, and only a stuck worker undoes it.
    let system = System::builder()
        .workers(2)
        .adaptive_workers(false)
        .stall_threshold(Duration::from_millis(5))
        .monitor_interval(Duration::from_millis(1))
        .build();
    let release = Arc::new(AtomicBool::new(false));
    let spinner = system.spawn(Spinner {
        release: release.clone(),
    });
    let victim = system.spawn(Victim);
    assert!(system.wait_quiescent(Some(HANG_GUARD)));
    system.bench_workers_for_test(1);
    let (started_tx, started_rx) = mpsc::channel();
    spinner.tell(Spin(started_tx)).expect("alive");
    let spinning_on = started_rx
        .recv_timeout(HANG_GUARD)
        .expect("the spinner started");
    // The victim is asked while the spinner holds its worker; with the other one
    // benched, only the monitor's rescue can run it.
    let answer = system.block_on(victim.ask(WhereAreYou).timeout(HANG_GUARD));
    release.store(true, Ordering::Release);
    let ran_on = answer.expect("the victim was not starved");
    assert_ne!(ran_on, spinning_on, "the victim ran beside the spinner");
    system.shutdown();
}
