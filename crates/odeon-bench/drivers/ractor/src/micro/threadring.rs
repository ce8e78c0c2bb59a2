//! Thread Ring (Savina #2, `shared/savina.md` §3.2; also `threadring503`, the same
//! protocol with 503 actors): one token passed R times around a ring of N actors, then
//! an exit wave.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use ractor::{Actor, ActorProcessingErr, ActorRef};
use savina::protocol::expect_eq;
use savina::{Outcome, Params};

use crate::common::{self, Exit, state_from_args, tell};

struct RingActor;

struct Ring {
    next: Option<ActorRef<RingMsg>>,
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

enum RingMsg {
    Data(ActorRef<RingMsg>),
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

impl Actor for RingActor {
    type Msg = RingMsg;
    type State = Ring;
    type Arguments = Ring;

    state_from_args!();

    async fn handle(
        &self,
        myself: ActorRef<RingMsg>,
        msg: RingMsg,
        st: &mut Ring,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            RingMsg::Data(next) => st.next = Some(next),
            RingMsg::Ping(left) => {
                st.pings += 1;
                if left > 0 {
                    st.forward(RingMsg::Ping(left - 1));
                } else {
                    st.forward(RingMsg::Exit(st.totals.ring_size));
                }
            }
            RingMsg::Exit(left) => {
                if left > 0 {
                    st.forward(RingMsg::Exit(left - 1));
                }
                st.totals.pings.fetch_add(st.pings, Ordering::Relaxed);
                st.totals.exited.fetch_add(1, Ordering::Relaxed);
                // The ring is a cycle of `ActorRef`s: let go of the link on exit.
                st.next = None;
                myself.stop(None);
            }
        }
        Ok(())
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
        let mut ring = Vec::new();
        for _ in 0..n {
            let state = Ring {
                next: None,
                pings: 0,
                totals: Arc::clone(&totals),
                _exit: latch.enter(),
            };
            ring.push(common::spawn(RingActor, state).await);
        }
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
