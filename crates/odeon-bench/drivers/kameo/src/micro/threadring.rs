//! Thread Ring (Savina #2, `shared/savina.md` §3.2; also `threadring503`, the same
//! protocol with 503 actors): one token passed R times around a ring of N actors, then
//! an exit wave.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use kameo::actor::ActorRef;
use kameo::message::{Context, Message};
use savina::protocol::expect_eq;
use savina::{Outcome, Params};

use crate::common::{self, Exit, plain_actor, tell};

struct Ring {
    next: Option<ActorRef<Ring>>,
    /// Pings this actor received, added to `totals` when it exits (one atomic add per
    /// actor, not per message, so counting costs nothing measurable).
    pings: u64,
    totals: Arc<Totals>,
    _exit: Exit,
}

struct Totals {
    /// N: the exit wave starts at `Exit(N)`.
    ring_size: u64,
    pings: AtomicU64,
    exited: AtomicU64,
}

plain_actor!(Ring);

enum RingMsg {
    Data(ActorRef<Ring>),
    Ping(u64),
    Exit(u64),
}

impl Ring {
    fn forward(&self, msg: RingMsg) {
        if let Some(next) = &self.next {
            tell(next, msg);
        }
    }
}

impl Message<RingMsg> for Ring {
    type Reply = ();

    async fn handle(&mut self, msg: RingMsg, ctx: &mut Context<Self, ()>) {
        match msg {
            RingMsg::Data(next) => self.next = Some(next),
            RingMsg::Ping(left) => {
                self.pings += 1;
                if left > 0 {
                    self.forward(RingMsg::Ping(left - 1));
                } else {
                    self.forward(RingMsg::Exit(self.totals.ring_size));
                }
            }
            RingMsg::Exit(left) => {
                if left > 0 {
                    self.forward(RingMsg::Exit(left - 1));
                }
                self.totals.pings.fetch_add(self.pings, Ordering::Relaxed);
                self.totals.exited.fetch_add(1, Ordering::Relaxed);
                // The ring is a cycle of `ActorRef`s: let go of the link on exit.
                self.next = None;
                ctx.stop();
            }
        }
    }
}

pub fn run(params: &Params) -> Outcome {
    let n: u64 = params.get("n");
    let r: u64 = params.get("r");
    common::run(params, |latch| async move {
        if n == 0 {
            return Err("-n must be at least 1".to_owned());
        }
        let totals = Arc::new(Totals {
            ring_size: n,
            pings: AtomicU64::new(0),
            exited: AtomicU64::new(0),
        });
        let ring: Vec<ActorRef<Ring>> = (0..n)
            .map(|_| {
                common::spawn(Ring {
                    next: None,
                    pings: 0,
                    totals: Arc::clone(&totals),
                    _exit: latch.enter(),
                })
            })
            .collect();
        for (i, actor) in ring.iter().enumerate() {
            tell(actor, RingMsg::Data(ring[(i + 1) % ring.len()].clone()));
        }
        tell(&ring[0], RingMsg::Ping(r));
        drop(ring);
        latch.wait().await;
        expect_eq(
            "ping deliveries, actors exited",
            (
                totals.pings.load(Ordering::Relaxed),
                totals.exited.load(Ordering::Relaxed),
            ),
            (r + 1, n),
        )
    })
}
