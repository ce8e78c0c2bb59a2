//! Savina #2, Thread Ring (`savina.md` §3.2): one token travels R hops around a ring
//! of N actors, then an exit wave goes round once. A single token means no
//! parallelism: this prices pure message latency and switching between many actors.

use std::sync::mpsc;

use odeon::{ActorRef, Context, Handler};
use savina::protocol::expect_eq;
use savina::{Outcome, Params};

use super::{all, recv_n, settle, tell_only};
use crate::common;

/// Ring member; learns its successor from a `Data` message (the ring is cyclic, so it
/// cannot be given at spawn).
struct RingActor {
    next: Option<ActorRef<RingActor>>,
    ring_size: u64,
    pings: u64,
    done: mpsc::Sender<u64>,
}

impl odeon::Actor for RingActor {}

/// Wiring: the next actor of the ring.
struct Data(ActorRef<RingActor>);
/// The token, with the hops still to make.
struct Ping(u64);
/// The exit wave, with the hops still to make.
struct Exit(u64);
tell_only!(Data, Ping, Exit);

impl Handler<Data> for RingActor {
    fn handle(&mut self, Data(next): Data, _: &mut Context<Self>) {
        self.next = Some(next);
    }
}

impl Handler<Ping> for RingActor {
    fn handle(&mut self, Ping(left): Ping, _: &mut Context<Self>) {
        self.pings += 1;
        if let Some(next) = &self.next {
            if left > 0 {
                let _ = next.tell(Ping(left - 1));
            } else {
                let _ = next.tell(Exit(self.ring_size));
            }
        }
    }
}

impl Handler<Exit> for RingActor {
    fn handle(&mut self, Exit(left): Exit, cx: &mut Context<Self>) {
        if left > 0
            && let Some(next) = &self.next
        {
            // The last hop reaches an actor that has exited: dropped, as in Savina.
            let _ = next.tell(Exit(left - 1));
        }
        let _ = self.done.send(self.pings);
        cx.stop();
    }
}

/// One timed iteration with Savina's `-n` (ring size) and `-r` (hops).
pub(crate) fn run(params: &Params) -> Outcome {
    let n: usize = params.get("n");
    let r: u64 = params.get("r");
    Outcome::timed(|| {
        if n == 0 {
            return Err("Thread Ring needs -n ≥ 1".to_owned());
        }
        let system = common::system(params);
        let (tx, rx) = mpsc::channel();
        let ring: Vec<ActorRef<RingActor>> = (0..n)
            .map(|_| {
                system.spawn(RingActor {
                    next: None,
                    ring_size: n as u64,
                    pings: 0,
                    done: tx.clone(),
                })
            })
            .collect();
        drop(tx);
        for (i, actor) in ring.iter().enumerate() {
            let next = ring[(i + 1) % n].clone();
            actor
                .tell(Data(next))
                .map_err(|_| "a ring actor refused Data")?;
        }
        ring[0].tell(Ping(r)).map_err(|_| "actor 0 refused Ping")?;
        let pings: Vec<u64> = recv_n(&rx, n)?;
        settle(system)?;
        drop(ring);
        all(vec![
            expect_eq("ping deliveries", pings.iter().sum::<u64>(), r + 1),
            expect_eq("actors exited", pings.len(), n),
        ])
    })
}
