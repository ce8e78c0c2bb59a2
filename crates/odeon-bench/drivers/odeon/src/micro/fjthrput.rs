//! Savina #4, Fork-Join Throughput (`savina.md` §3.4): the driver sends N rounds of
//! one message to each of A actors; each does a tiny work unit per message and exits
//! after its N-th. This prices raw throughput with many runnable actors at once, and
//! the scheduler's fan-out.

use std::sync::mpsc;

use odeon::{ActorRef, Context, Handler};
use savina::protocol::expect_eq;
use savina::{Outcome, Params};

use super::{all, recv_n, settle, sin_squared_work, tell_only};
use crate::common;

/// Handles N messages, then exits.
struct ThroughputActor {
    handled: u64,
    n: u64,
    bad_work: u64,
    done: mpsc::Sender<(u64, u64)>,
}

impl odeon::Actor for ThroughputActor {}

/// The shared, empty message.
struct Go;
tell_only!(Go);

impl Handler<Go> for ThroughputActor {
    fn handle(&mut self, _: Go, cx: &mut Context<Self>) {
        self.handled += 1;
        if !sin_squared_work() {
            self.bad_work += 1;
        }
        if self.handled == self.n {
            let _ = self.done.send((self.handled, self.bad_work));
            cx.stop();
        }
    }
}

/// One timed iteration with Savina's `-n` (messages per actor) and `-a` (actors).
pub(crate) fn run(params: &Params) -> Outcome {
    let n: u64 = params.get("n");
    let a: usize = params.get("a");
    Outcome::timed(|| {
        if n == 0 {
            return Err("Fork-Join Throughput needs -n ≥ 1".to_owned());
        }
        let system = common::system(params);
        let (tx, rx) = mpsc::channel();
        let actors: Vec<ActorRef<ThroughputActor>> = (0..a)
            .map(|_| {
                system.spawn(ThroughputActor {
                    handled: 0,
                    n,
                    bad_work: 0,
                    done: tx.clone(),
                })
            })
            .collect();
        drop(tx);
        for _ in 0..n {
            for actor in &actors {
                actor.tell(Go).map_err(|_| "an actor refused a message")?;
            }
        }
        let reports = recv_n(&rx, a)?;
        settle(system)?;
        drop(actors);
        all(vec![
            expect_eq(
                "messages handled",
                reports.iter().map(|r| r.0).sum::<u64>(),
                n * a as u64,
            ),
            expect_eq(
                "work units not positive",
                reports.iter().map(|r| r.1).sum::<u64>(),
                0,
            ),
        ])
    })
}
