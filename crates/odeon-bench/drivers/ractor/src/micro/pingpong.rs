//! Ping Pong (Savina #1, `shared/savina.md` §3.1): N strictly sequential round trips
//! between two actors, each ping going back through Ping's own mailbox.

use ractor::{Actor, ActorProcessingErr, ActorRef};
use savina::protocol::expect_eq;
use savina::{Outcome, Params};
use tokio::sync::oneshot;

use crate::common::{self, Exit, state_from_args, tell};

struct PingActor;
struct PongActor;

struct Ping {
    pings_left: u64,
    pong: ActorRef<PongMsg>,
    _exit: Exit,
}

struct Pong {
    pongs: u64,
    done: Option<oneshot::Sender<u64>>,
    _exit: Exit,
}

enum PingMsg {
    Start,
    Ping,
    SendPong,
}

enum PongMsg {
    SendPing(ActorRef<PingMsg>),
    Stop,
}

impl Actor for PingActor {
    type Msg = PingMsg;
    type State = Ping;
    type Arguments = Ping;

    state_from_args!();

    async fn handle(
        &self,
        myself: ActorRef<PingMsg>,
        msg: PingMsg,
        st: &mut Ping,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            PingMsg::Start | PingMsg::Ping => {
                tell(&st.pong, PongMsg::SendPing(myself));
                st.pings_left -= 1;
            }
            PingMsg::SendPong if st.pings_left > 0 => tell(&myself, PingMsg::Ping),
            PingMsg::SendPong => {
                tell(&st.pong, PongMsg::Stop);
                myself.stop(None);
            }
        }
        Ok(())
    }
}

impl Actor for PongActor {
    type Msg = PongMsg;
    type State = Pong;
    type Arguments = Pong;

    state_from_args!();

    async fn handle(
        &self,
        myself: ActorRef<PongMsg>,
        msg: PongMsg,
        st: &mut Pong,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            PongMsg::SendPing(sender) => {
                tell(&sender, PingMsg::SendPong);
                st.pongs += 1;
            }
            PongMsg::Stop => {
                if let Some(done) = st.done.take() {
                    let _ = done.send(st.pongs);
                }
                myself.stop(None);
            }
        }
        Ok(())
    }
}

pub fn run(params: &Params) -> Outcome {
    let n: u64 = params.get("n");
    common::run(params, |latch| async move {
        if n == 0 {
            return Err("-n must be at least 1 (Start always sends one ping)".to_owned());
        }
        let (done, result) = oneshot::channel();
        let pong = Pong {
            pongs: 0,
            done: Some(done),
            _exit: latch.enter(),
        };
        let pong = common::spawn(PongActor, pong).await;
        let ping = Ping {
            pings_left: n,
            pong,
            _exit: latch.enter(),
        };
        let ping = common::spawn(PingActor, ping).await;
        tell(&ping, PingMsg::Start);
        let pongs = common::report(result).await?;
        expect_eq("round trips", pongs, n)
    })
}
