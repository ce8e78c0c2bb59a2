//! Savina #5, Fork-Join Actor Creation (`savina.md` §3.5): the driver creates N actors,
//! sending each one message; each does one work unit and exits. This prices creating,
//! scheduling and tearing down short-lived actors.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;

use odeon::{Context, Handler};
use savina::protocol::expect_eq;
use savina::{Outcome, Params};

use super::{all, recv_n, settle, sin_squared_work, tell_only};
use crate::common;

/// What every actor reports to. Savina's harness counts exits with one global latch;
/// this is the same thing: one shared count, and the actor that completes it tells
/// the driver (N channel sends would measure the channel instead).
struct Tally {
    handled: AtomicU64,
    bad_work: AtomicU64,
    target: u64,
    done: mpsc::Sender<()>,
}

/// Does one work unit and exits.
struct ForkJoinActor {
    tally: Arc<Tally>,
}

impl odeon::Actor for ForkJoinActor {}

/// Its one message.
struct Go;
tell_only!(Go);

impl Handler<Go> for ForkJoinActor {
    fn handle(&mut self, _: Go, cx: &mut Context<Self>) {
        if !sin_squared_work() {
            self.tally.bad_work.fetch_add(1, Ordering::Relaxed);
        }
        // AcqRel: the actor that completes the count sees every other actor's
        // `bad_work` update (each made before its own increment).
        if self.tally.handled.fetch_add(1, Ordering::AcqRel) + 1 == self.tally.target {
            let _ = self.tally.done.send(());
        }
        cx.stop();
    }
}

/// One timed iteration with Savina's `-n` (actors).
pub(crate) fn run(params: &Params) -> Outcome {
    let n: u64 = params.get("n");
    Outcome::timed(|| {
        if n == 0 {
            return Err("Fork-Join Creation needs -n ≥ 1".to_owned());
        }
        let system = common::system(params);
        let (tx, rx) = mpsc::channel();
        let tally = Arc::new(Tally {
            handled: AtomicU64::new(0),
            bad_work: AtomicU64::new(0),
            target: n,
            done: tx,
        });
        for _ in 0..n {
            let actor = system.spawn(ForkJoinActor {
                tally: tally.clone(),
            });
            actor
                .tell(Go)
                .map_err(|_| "a new actor refused its message")?;
        }
        recv_n(&rx, 1)?;
        // The driver holds no references here, but an actor only goes away unreferenced
        // after its mailbox is empty, i.e. after its one message, whose handler exits.
        settle(system)?;
        all(vec![
            expect_eq(
                "actors that handled their message",
                tally.handled.load(Ordering::Acquire),
                n,
            ),
            expect_eq(
                "work units not positive",
                tally.bad_work.load(Ordering::Acquire),
                0,
            ),
        ])
    })
}
