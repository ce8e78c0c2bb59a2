//! Thread Ring (Savina #2, `shared/savina.md` §3.2), also run as `threadring503`
//! (503 actors, 10M passes): one token circulates, then an exit wave of N+1 hops.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use actix::{Actor, ActorContext, Addr, AsyncContext, Context, Handler, Message};
use savina::{Outcome, Params};

use crate::common::{Live, Rt, Variant, run_system};

/// Wiring: the next actor of the ring.
#[derive(Message)]
#[rtype(result = "()")]
struct Data(Addr<RingActor>);

#[derive(Message)]
#[rtype(result = "()")]
struct Ping(u64);

#[derive(Message)]
#[rtype(result = "()")]
struct Exit(u64);

/// Counters every ring actor adds to when it exits.
#[derive(Default)]
struct Totals {
    pings: AtomicU64,
    exited: AtomicU64,
}

struct RingActor {
    /// Keeps the actor alive until its own `Exit`, whoever else holds its address.
    _me: Addr<RingActor>,
    next: Option<Addr<RingActor>>,
    ring_size: u64,
    pings: u64,
    totals: Arc<Totals>,
    _live: Live,
}

impl Actor for RingActor {
    type Context = Context<Self>;

    fn stopped(&mut self, _: &mut Context<Self>) {
        self.totals.pings.fetch_add(self.pings, Ordering::Relaxed);
        self.totals.exited.fetch_add(1, Ordering::Relaxed);
    }
}

impl Handler<Data> for RingActor {
    type Result = ();
    fn handle(&mut self, Data(next): Data, _: &mut Context<Self>) {
        self.next = Some(next);
    }
}

impl Handler<Ping> for RingActor {
    type Result = ();
    fn handle(&mut self, Ping(left): Ping, _: &mut Context<Self>) {
        self.pings += 1;
        if let Some(next) = &self.next {
            if left > 0 {
                next.do_send(Ping(left - 1));
            } else {
                next.do_send(Exit(self.ring_size));
            }
        }
    }
}

impl Handler<Exit> for RingActor {
    type Result = ();
    fn handle(&mut self, Exit(left): Exit, ctx: &mut Context<Self>) {
        if let (true, Some(next)) = (left > 0, &self.next) {
            next.do_send(Exit(left - 1));
        }
        ctx.stop();
    }
}

pub(crate) fn run(params: &Params, variant: Variant) -> Outcome {
    let n: u64 = params.get("n");
    let r: u64 = params.get("r");
    if n == 0 {
        return Outcome::new(Default::default(), Err("a ring needs -n >= 1".into()));
    }
    let totals = Arc::new(Totals::default());
    let elapsed = run_system(variant, |rt: &Rt| {
        let ring: Vec<Addr<RingActor>> = (0..n)
            .map(|_| {
                let totals = Arc::clone(&totals);
                rt.spawn(move |ctx, live| RingActor {
                    _me: ctx.address(),
                    next: None,
                    ring_size: n,
                    pings: 0,
                    totals,
                    _live: live,
                })
            })
            .collect();
        for (i, actor) in ring.iter().enumerate() {
            actor.do_send(Data(ring[(i + 1) % ring.len()].clone()));
        }
        ring[0].do_send(Ping(r));
    });
    let pings = totals.pings.load(Ordering::Relaxed);
    let exited = totals.exited.load(Ordering::Relaxed);
    let check = if pings == r + 1 && exited == n {
        Ok(format!("{pings} ping deliveries; all {n} actors exit"))
    } else {
        Err(format!(
            "{pings} ping deliveries and {exited} exits, expected {} and {n}",
            r + 1
        ))
    };
    Outcome::new(elapsed, check)
}
