//! Ping Pong (Savina #1, `shared/savina.md` §3.1): a strictly sequential request/reply
//! exchange between two actors; every next ping goes back through Ping's own mailbox.

use actix::{Actor, ActorContext, Addr, AsyncContext, Context, Handler, Message};
use savina::{Outcome, Params};

use crate::common::{Live, Rt, Slot, Variant, run_system};

#[derive(Message)]
#[rtype(result = "()")]
struct Start;

/// The self-message that makes each ping wait its turn in Ping's mailbox.
#[derive(Message)]
#[rtype(result = "()")]
struct PingSelf;

#[derive(Message)]
#[rtype(result = "()")]
struct SendPing(Addr<Ping>);

#[derive(Message)]
#[rtype(result = "()")]
struct SendPong(#[allow(dead_code)] Addr<Pong>);

#[derive(Message)]
#[rtype(result = "()")]
struct Stop;

struct Ping {
    me: Addr<Ping>,
    pong: Addr<Pong>,
    pings_left: i64,
    self_pings: u64,
    report: Slot<u64>,
    _live: Live,
}

impl Actor for Ping {
    type Context = Context<Self>;
}

impl Ping {
    fn send_ping(&mut self) {
        self.pong.do_send(SendPing(self.me.clone()));
        self.pings_left -= 1;
    }
}

impl Handler<Start> for Ping {
    type Result = ();
    fn handle(&mut self, _: Start, _: &mut Context<Self>) {
        self.send_ping();
    }
}

impl Handler<PingSelf> for Ping {
    type Result = ();
    fn handle(&mut self, _: PingSelf, _: &mut Context<Self>) {
        self.self_pings += 1;
        self.send_ping();
    }
}

impl Handler<SendPong> for Ping {
    type Result = ();
    fn handle(&mut self, _: SendPong, ctx: &mut Context<Self>) {
        if self.pings_left > 0 {
            self.me.do_send(PingSelf);
        } else {
            self.pong.do_send(Stop);
            self.report.put(self.self_pings);
            ctx.stop();
        }
    }
}

struct Pong {
    me: Addr<Pong>,
    count: u64,
    report: Slot<u64>,
    _live: Live,
}

impl Actor for Pong {
    type Context = Context<Self>;
}

impl Handler<SendPing> for Pong {
    type Result = ();
    fn handle(&mut self, SendPing(sender): SendPing, _: &mut Context<Self>) {
        sender.do_send(SendPong(self.me.clone()));
        self.count += 1;
    }
}

impl Handler<Stop> for Pong {
    type Result = ();
    fn handle(&mut self, _: Stop, ctx: &mut Context<Self>) {
        self.report.put(self.count);
        ctx.stop();
    }
}

pub(crate) fn run(params: &Params, variant: Variant) -> Outcome {
    let n: u64 = params.get("n");
    let (pongs, self_pings) = (Slot::new(), Slot::new());
    let elapsed = run_system(variant, |rt: &Rt| {
        let report = pongs.clone();
        let pong = rt.spawn(move |ctx, live| Pong {
            me: ctx.address(),
            count: 0,
            report,
            _live: live,
        });
        let report = self_pings.clone();
        let ping = rt.spawn(move |ctx, live| Ping {
            me: ctx.address(),
            pong,
            pings_left: i64::try_from(n).unwrap_or(i64::MAX),
            self_pings: 0,
            report,
            _live: live,
        });
        ping.do_send(Start);
    });
    // The first ping is sent on Start even when n = 0.
    let trips = n.max(1);
    let check = pongs.take("Pong").and_then(|count| {
        let selfs = self_pings.take("Ping")?;
        if count != trips || selfs != trips - 1 {
            return Err(format!(
                "{count} round trips and {selfs} self-pings, expected {trips} and {}",
                trips - 1
            ));
        }
        Ok(format!("{count} round trips"))
    });
    Outcome::new(elapsed, check)
}
