//! Ping Pong (Savina #1, `shared/savina.md` §3.1): N strictly sequential round trips
//! between two actors, each ping going back through Ping's own mailbox.

use kameo::actor::ActorRef;
use kameo::message::{Context, Message};
use savina::protocol::expect_eq;
use savina::{Outcome, Params};
use tokio::sync::oneshot;

use crate::common::{self, Exit, plain_actor, tell};

struct Ping {
    pings_left: u64,
    pong: ActorRef<Pong>,
    _exit: Exit,
}

struct Pong {
    pongs: u64,
    done: Option<oneshot::Sender<u64>>,
    _exit: Exit,
}

plain_actor!(Ping, Pong);

enum PingMsg {
    Start,
    Ping,
    SendPong,
}

enum PongMsg {
    SendPing(ActorRef<Ping>),
    Stop,
}

impl Ping {
    fn send_ping(&mut self, me: &ActorRef<Ping>) {
        tell(&self.pong, PongMsg::SendPing(me.clone()));
        self.pings_left -= 1;
    }
}

impl Message<PingMsg> for Ping {
    type Reply = ();

    async fn handle(&mut self, msg: PingMsg, ctx: &mut Context<Self, ()>) {
        match msg {
            PingMsg::Start | PingMsg::Ping => self.send_ping(ctx.actor_ref()),
            PingMsg::SendPong if self.pings_left > 0 => tell(ctx.actor_ref(), PingMsg::Ping),
            PingMsg::SendPong => {
                tell(&self.pong, PongMsg::Stop);
                ctx.stop();
            }
        }
    }
}

impl Message<PongMsg> for Pong {
    type Reply = ();

    async fn handle(&mut self, msg: PongMsg, ctx: &mut Context<Self, ()>) {
        match msg {
            PongMsg::SendPing(sender) => {
                tell(&sender, PingMsg::SendPong);
                self.pongs += 1;
            }
            PongMsg::Stop => {
                if let Some(done) = self.done.take() {
                    let _ = done.send(self.pongs);
                }
                ctx.stop();
            }
        }
    }
}

pub fn run(params: &Params) -> Outcome {
    let n: u64 = params.get("n");
    common::run(params, |latch| async move {
        if n == 0 {
            return Err("-n must be at least 1 (Start always sends one ping)".to_owned());
        }
        let (done, result) = oneshot::channel();
        let pong = common::spawn(Pong {
            pongs: 0,
            done: Some(done),
            _exit: latch.enter(),
        });
        let ping = common::spawn(Ping {
            pings_left: n,
            pong,
            _exit: latch.enter(),
        });
        tell(&ping, PingMsg::Start);
        let pongs = common::report(result).await?;
        expect_eq("round trips", pongs, n)
    })
}
