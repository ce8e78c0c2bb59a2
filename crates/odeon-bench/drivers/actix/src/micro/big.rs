//! Big (Savina #8, `shared/savina.md` §3.8): W workers ping random peers (including
//! themselves) N times each; a Sink collects their exits and then stops them all.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use actix::{Actor, ActorContext, Addr, Context, Handler, Message};
use savina::rng::PseudoRandom;
use savina::{Outcome, Params};

use crate::common::{Live, Rt, Slot, Variant, run_system};

/// Every worker, shared rather than copied into each of the W + 1 actors.
#[derive(Message)]
#[rtype(result = "()")]
struct Neighbors(Arc<[Addr<Worker>]>);

#[derive(Message)]
#[rtype(result = "()")]
struct Ping(i32);

#[derive(Message)]
#[rtype(result = "()")]
struct Pong(i32);

#[derive(Message)]
#[rtype(result = "()")]
struct Exit;

#[derive(Default)]
struct Totals {
    pings_sent: AtomicU64,
    pongs_received: AtomicU64,
    mismatches: AtomicU64,
}

struct Worker {
    id: i32,
    rng: PseudoRandom,
    neighbors: Arc<[Addr<Worker>]>,
    sink: Addr<Sink>,
    expected: i32,
    pings_sent: u64,
    pongs_received: u64,
    mismatches: u64,
    n: u64,
    totals: Arc<Totals>,
    _live: Live,
}

impl Actor for Worker {
    type Context = Context<Self>;

    fn stopped(&mut self, _: &mut Context<Self>) {
        let totals = &self.totals;
        totals
            .pings_sent
            .fetch_add(self.pings_sent, Ordering::Relaxed);
        totals
            .pongs_received
            .fetch_add(self.pongs_received, Ordering::Relaxed);
        totals
            .mismatches
            .fetch_add(self.mismatches, Ordering::Relaxed);
    }
}

impl Handler<Neighbors> for Worker {
    type Result = ();
    fn handle(&mut self, Neighbors(all): Neighbors, _: &mut Context<Self>) {
        self.neighbors = all;
    }
}

impl Handler<Pong> for Worker {
    type Result = ();
    fn handle(&mut self, Pong(sender): Pong, _: &mut Context<Self>) {
        self.pongs_received += 1;
        if sender != self.expected {
            self.mismatches += 1;
        }
        if self.pings_sent == self.n {
            self.sink.do_send(Exit);
        } else {
            let target = self.rng.next_int_bounded(self.neighbors.len() as i32);
            self.expected = target;
            self.neighbors[target as usize].do_send(Ping(self.id));
            self.pings_sent += 1;
        }
    }
}

impl Handler<Ping> for Worker {
    type Result = ();
    fn handle(&mut self, Ping(sender): Ping, _: &mut Context<Self>) {
        self.neighbors[sender as usize].do_send(Pong(self.id));
    }
}

impl Handler<Exit> for Worker {
    type Result = ();
    fn handle(&mut self, _: Exit, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}

struct Sink {
    workers: Arc<[Addr<Worker>]>,
    exits: u64,
    report: Slot<u64>,
    _live: Live,
}

impl Actor for Sink {
    type Context = Context<Self>;
}

impl Handler<Neighbors> for Sink {
    type Result = ();
    fn handle(&mut self, Neighbors(all): Neighbors, _: &mut Context<Self>) {
        self.workers = all;
    }
}

impl Handler<Exit> for Sink {
    type Result = ();
    fn handle(&mut self, _: Exit, ctx: &mut Context<Self>) {
        self.exits += 1;
        if self.exits == self.workers.len() as u64 {
            for worker in self.workers.iter() {
                worker.do_send(Exit);
            }
            self.report.put(self.exits);
            ctx.stop();
        }
    }
}

pub(crate) fn run(params: &Params, variant: Variant) -> Outcome {
    let n: u64 = params.get("n");
    let w: i32 = params.get("w");
    if w < 1 {
        return Outcome::new(Default::default(), Err("-w must be >= 1".into()));
    }
    let totals = Arc::new(Totals::default());
    let sink_exits = Slot::new();
    let elapsed = run_system(variant, |rt: &Rt| {
        let report = sink_exits.clone();
        let sink = rt.spawn(move |_, live| Sink {
            workers: Arc::new([]),
            exits: 0,
            report,
            _live: live,
        });
        let workers: Arc<[Addr<Worker>]> = (0..w)
            .map(|id| {
                let (sink, totals) = (sink.clone(), Arc::clone(&totals));
                rt.spawn(move |_, live| Worker {
                    id,
                    rng: PseudoRandom::new(i64::from(id)),
                    neighbors: Arc::new([]),
                    sink,
                    expected: -1,
                    pings_sent: 0,
                    pongs_received: 0,
                    mismatches: 0,
                    n,
                    totals,
                    _live: live,
                })
            })
            .collect();
        // Each worker (and the Sink) holds every worker's address from here on, so
        // none can auto-stop before its Exit.
        sink.do_send(Neighbors(Arc::clone(&workers)));
        for worker in workers.iter() {
            worker.do_send(Neighbors(Arc::clone(&workers)));
        }
        for worker in workers.iter() {
            worker.do_send(Pong(-1));
        }
    });
    let w = w as u64;
    let pings = totals.pings_sent.load(Ordering::Relaxed);
    let pongs = totals.pongs_received.load(Ordering::Relaxed);
    let mismatches = totals.mismatches.load(Ordering::Relaxed);
    let check = sink_exits.take("the Sink").and_then(|exits| {
        // Every worker gets its N pongs plus the kick-off.
        if pings == w * n && pongs == w * (n + 1) && mismatches == 0 && exits == w {
            Ok(format!(
                "{w} x {n} ping/pong pairs; no expected-pinger errors; {exits} exits at the sink"
            ))
        } else {
            Err(format!(
                "{pings} pings, {pongs} pongs, {mismatches} expected-pinger errors, {exits} exits; expected {}, {}, 0, {w}",
                w * n,
                w * (n + 1)
            ))
        }
    });
    Outcome::new(elapsed, check)
}
