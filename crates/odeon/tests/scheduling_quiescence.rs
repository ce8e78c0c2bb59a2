//! `wait_quiescent` must never report quiescence while a message is still queued.
//! Tokens hop between actors at random until they land on an actor with no hops left;
//! once the system is quiescent, every hop sent must have been received. A turn that
//! closed its quiescence unit before giving up its mailbox (see `cell/turn.rs`,
//! `on_empty`) failed this test in 7 of 15 runs, each time with all 120 tokens queued
//! at one actor; with the unit closed after the mailbox, 0 of 15.

use std::sync::mpsc;
use std::time::Duration;

use odeon::{Actor, ActorRef, Context, Handler, Message, System};

const HANG_GUARD: Duration = Duration::from_secs(60);

struct Hopper {
    peers: Vec<ActorRef<Hopper>>,
    rng: u64,
    left: u32,
    sent: u64,
    received: u64,
    report: mpsc::Sender<(u64, u64)>,
}
impl Actor for Hopper {}

struct Wire(Vec<ActorRef<Hopper>>);
impl Message for Wire {
    type Reply = ();
}
/// A token; `counted` is false for the kick-off from outside.
struct Token {
    counted: bool,
}
impl Message for Token {
    type Reply = ();
}
struct Report;
impl Message for Report {
    type Reply = ();
}

impl Handler<Wire> for Hopper {
    fn handle(&mut self, Wire(peers): Wire, _: &mut Context<Self>) {
        self.peers = peers;
    }
}

impl Handler<Token> for Hopper {
    fn handle(&mut self, token: Token, _: &mut Context<Self>) {
        if token.counted {
            self.received += 1;
        }
        if self.left == 0 {
            return; // the token dies here
        }
        self.left -= 1;
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        let to = (self.rng % self.peers.len() as u64) as usize;
        if self.peers[to].tell(Token { counted: true }).is_ok() {
            self.sent += 1;
        }
    }
}

impl Handler<Report> for Hopper {
    fn handle(&mut self, _: Report, _: &mut Context<Self>) {
        let _ = self.report.send((self.sent, self.received));
    }
}

#[test]
fn quiescence_is_never_reported_while_tokens_are_still_hopping() {
    let system = System::builder().workers(2).build();
    // Two threads that never sleep, beside the two workers: the OS now preempts the
    // workers at arbitrary points, which is what opens the window being tested.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let hogs: Vec<_> = (0..2)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        })
        .collect();
    let actors = 120;
    let hops = 2_000;
    for round in 0..30 {
        let (tx, rx) = mpsc::channel();
        let peers: Vec<ActorRef<Hopper>> = (0..actors)
            .map(|id| {
                system.spawn(Hopper {
                    peers: Vec::new(),
                    rng: (id + 1) * 0x9E37_79B9 + round,
                    left: hops,
                    sent: 0,
                    received: 0,
                    report: tx.clone(),
                })
            })
            .collect();
        for p in &peers {
            p.tell(Wire(peers.clone())).expect("alive");
        }
        for p in &peers {
            p.tell(Token { counted: false }).expect("alive");
        }
        assert!(system.wait_quiescent(Some(HANG_GUARD)), "never quiescent");
        for p in &peers {
            p.tell(Report).expect("alive");
        }
        let (mut sent, mut received) = (0, 0);
        for _ in 0..actors {
            let (s, r) = rx.recv_timeout(HANG_GUARD).expect("every actor reports");
            sent += s;
            received += r;
        }
        assert!(sent > 0, "round {round}: tokens hopped");
        assert_eq!(
            received,
            sent,
            "round {round}: quiescent while {} tokens were still queued",
            sent - received
        );
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for h in hogs {
        h.join().expect("the hog did not panic");
    }
    system.shutdown();
}
