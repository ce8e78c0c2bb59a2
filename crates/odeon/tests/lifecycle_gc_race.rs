//! Local GC must never collect an actor with mail in its mailbox: a sender that pushes
//! a message and then drops the last reference, right after the actor's turn found its
//! mailbox empty, must still see that message handled (guarantee 3: every message sent
//! to a live actor is eventually handled).
//!
//! The pattern is Savina's Chameneos: an actor's only reference travels inside a
//! message, and the actor that holds it answers and drops it. Before the fix the race
//! lost a message in about one run of a few hundred thousand hand-offs.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use odeon::{Actor, ActorRef, Context, Handler, Message, SpawnOptions, StopReason, System};

/// Sends itself away inside `Visit`, and counts the answers it gets back.
struct Traveller {
    host: ActorRef<Host>,
    visits_left: u32,
    answers: u32,
    done: mpsc::Sender<(u32, StopReason)>,
}

/// Answers each visitor with its only reference, then drops it.
struct Host {
    answered: Arc<AtomicU64>,
}

struct Go;
struct Answer;
struct Visit(ActorRef<Traveller>);
impl Message for Go {
    type Reply = ();
}
impl Message for Answer {
    type Reply = ();
}
impl Message for Visit {
    type Reply = ();
}

impl Actor for Traveller {
    fn stopped(&mut self, reason: &StopReason) {
        let _ = self.done.send((self.answers, reason.clone()));
    }
}
impl Actor for Host {}

impl Traveller {
    fn visit(&mut self, cx: &mut Context<Self>) {
        if self.visits_left > 0 {
            self.visits_left -= 1;
            // The traveller's only strong reference now lives in this message.
            let _ = self.host.tell(Visit(cx.myself()));
        }
    }
}

impl Handler<Go> for Traveller {
    fn handle(&mut self, _: Go, cx: &mut Context<Self>) {
        self.visit(cx);
    }
}

impl Handler<Answer> for Traveller {
    fn handle(&mut self, _: Answer, cx: &mut Context<Self>) {
        self.answers += 1;
        self.visit(cx);
    }
}

impl Handler<Visit> for Host {
    fn handle(&mut self, Visit(traveller): Visit, _: &mut Context<Self>) {
        // Push, then drop the last reference: the window the race needs.
        traveller
            .tell(Answer)
            .expect("the traveller is alive while referenced");
        self.answered.fetch_add(1, Ordering::Relaxed);
        drop(traveller);
    }
}

#[test]
fn an_actor_whose_last_ref_is_dropped_right_after_a_send_handles_that_message() {
    const TRAVELLERS: usize = 4;
    const VISITS: u32 = 50_000;
    let system = System::builder().workers(2).build();
    let answered = Arc::new(AtomicU64::new(0));
    let (tx, rx) = mpsc::channel();
    for _ in 0..TRAVELLERS {
        // Each host has a thread of its own, so that its push-then-drop runs truly in
        // parallel with the traveller's turn on a pool worker.
        let host = system.spawn_with(
            Host {
                answered: answered.clone(),
            },
            SpawnOptions::new().blocking(),
        );
        let traveller = system.spawn(Traveller {
            host,
            visits_left: VISITS,
            answers: 0,
            done: tx.clone(),
        });
        traveller.tell(Go).unwrap();
        // The test keeps no reference: only the messages do.
        drop(traveller);
    }
    drop(tx);
    for _ in 0..TRAVELLERS {
        let (answers, reason) = rx
            .recv_timeout(Duration::from_secs(120))
            .expect("every traveller stops once its visits are over");
        assert_eq!(reason, StopReason::Unreferenced);
        assert_eq!(
            answers, VISITS,
            "an answer was pushed but never handled (collected with mail queued)"
        );
    }
    assert_eq!(
        answered.load(Ordering::Relaxed),
        TRAVELLERS as u64 * VISITS as u64
    );
    system.shutdown();
}
