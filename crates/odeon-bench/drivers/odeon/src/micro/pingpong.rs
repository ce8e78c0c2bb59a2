//! Savina #1, Ping Pong (`savina.md` §3.1): N strictly sequential request/reply round
//! trips between two actors. It prices one enqueue, one dequeue and one hand-over of
//! the turn per message; there is no parallelism to find.

use std::sync::mpsc;

use odeon::{ActorRef, Context, Handler};
use savina::protocol::expect_eq;
use savina::{Outcome, Params};

use super::{all, recv_n, settle, tell_only};
use crate::common;

/// Sends the pings; knows Pong.
struct PingActor {
    pong: ActorRef<PongActor>,
    pings_left: u64,
    pongs_received: u64,
    done: mpsc::Sender<Report>,
}

/// Answers each ping and counts its answers.
struct PongActor {
    pongs_sent: u64,
    done: mpsc::Sender<Report>,
}

impl odeon::Actor for PingActor {}
impl odeon::Actor for PongActor {}

/// What each actor tells the driver when it exits.
enum Report {
    Ping { pongs_received: u64 },
    Pong { pongs_sent: u64 },
}

/// From the driver: start pinging.
struct Start;
/// Ping to itself, so that each ping goes back through its own mailbox.
struct Ping;
/// Ping to Pong, naming whom to answer.
struct SendPing(ActorRef<PingActor>);
/// Pong's answer. The sender is part of Savina's message though Ping does not use it.
struct SendPong {
    _sender: ActorRef<PongActor>,
}
/// Ping to Pong when the pings are done.
struct Stop;
tell_only!(Start, Ping, SendPing, SendPong, Stop);

impl PingActor {
    fn send_ping(&mut self, cx: &mut Context<Self>) {
        let _ = self.pong.tell(SendPing(cx.myself()));
        self.pings_left -= 1;
    }
}

impl Handler<Start> for PingActor {
    fn handle(&mut self, _: Start, cx: &mut Context<Self>) {
        self.send_ping(cx);
    }
}

impl Handler<Ping> for PingActor {
    fn handle(&mut self, _: Ping, cx: &mut Context<Self>) {
        self.send_ping(cx);
    }
}

impl Handler<SendPong> for PingActor {
    fn handle(&mut self, _: SendPong, cx: &mut Context<Self>) {
        self.pongs_received += 1;
        if self.pings_left > 0 {
            // Behind whatever is already queued, and without taking a reference.
            let _ = cx.notify(Ping);
        } else {
            let _ = self.pong.tell(Stop);
            let _ = self.done.send(Report::Ping {
                pongs_received: self.pongs_received,
            });
            cx.stop();
        }
    }
}

impl Handler<SendPing> for PongActor {
    fn handle(&mut self, SendPing(sender): SendPing, cx: &mut Context<Self>) {
        let _ = sender.tell(SendPong {
            _sender: cx.myself(),
        });
        self.pongs_sent += 1;
    }
}

impl Handler<Stop> for PongActor {
    fn handle(&mut self, _: Stop, cx: &mut Context<Self>) {
        let _ = self.done.send(Report::Pong {
            pongs_sent: self.pongs_sent,
        });
        cx.stop();
    }
}

/// One timed iteration.
pub(crate) fn run(params: &Params) -> Outcome {
    let n: u64 = params.get("n");
    Outcome::timed(|| {
        if n == 0 {
            return Err("Ping Pong needs -n ≥ 1 (Start always sends one ping)".to_owned());
        }
        let system = common::system(params);
        let (tx, rx) = mpsc::channel();
        let pong = system.spawn(PongActor {
            pongs_sent: 0,
            done: tx.clone(),
        });
        let ping = system.spawn(PingActor {
            pong: pong.clone(),
            pings_left: n,
            pongs_received: 0,
            done: tx,
        });
        ping.tell(Start).map_err(|_| "Ping refused Start")?;
        let reports = recv_n(&rx, 2)?;
        settle(system)?;
        drop((ping, pong));
        let (mut received, mut sent) = (None, None);
        for r in reports {
            match r {
                Report::Ping { pongs_received } => received = Some(pongs_received),
                Report::Pong { pongs_sent } => sent = Some(pongs_sent),
            }
        }
        all(vec![
            expect_eq("round trips (pongs Ping received)", received, Some(n)),
            expect_eq("pongs Pong sent", sent, Some(n)),
        ])
    })
}
