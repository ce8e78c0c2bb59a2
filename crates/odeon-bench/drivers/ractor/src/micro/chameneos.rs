//! Chameneos (Savina #7, `shared/savina.md` §3.7): C chameneos meet through one broker
//! (the Mall) until M meetings have happened.

use ractor::{Actor, ActorProcessingErr, ActorRef};
use savina::protocol::expect_eq;
use savina::{Outcome, Params};
use tokio::sync::oneshot;

use crate::common::{self, Exit, tell};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Colour {
    Red,
    Yellow,
    Blue,
    Faded,
}

impl Colour {
    fn complement(self, other: Colour) -> Colour {
        use Colour::*;
        match (self, other) {
            (Faded, _) | (_, Faded) => Faded,
            (a, b) if a == b => a,
            (Red, Yellow) | (Yellow, Red) => Blue,
            (Red, Blue) | (Blue, Red) => Yellow,
            _ => Red,
        }
    }
}

struct MallActor;
struct ChameneoActor;

struct Mall {
    meetings_left: u64,
    chameneos: u64,
    waiting: Option<(Colour, ActorRef<ChameneoMsg>)>,
    sum: u64,
    faded: u64,
    done: Option<oneshot::Sender<u64>>,
    exit: Exit,
}

struct Chameneo {
    colour: Colour,
    meetings: u64,
    mall: ActorRef<MallMsg>,
    _exit: Exit,
}

enum MallMsg {
    Meet(Colour, ActorRef<ChameneoMsg>),
    MeetingCount(u64),
}

enum ChameneoMsg {
    Meet(Colour, ActorRef<ChameneoMsg>),
    Change(Colour),
    Exit,
}

impl Actor for MallActor {
    type Msg = MallMsg;
    type State = Mall;
    type Arguments = Mall;

    /// The Mall creates the chameneos when it starts, as in Savina.
    async fn pre_start(
        &self,
        myself: ActorRef<MallMsg>,
        mall: Mall,
    ) -> Result<Mall, ActorProcessingErr> {
        for i in 0..mall.chameneos {
            let chameneo = Chameneo {
                colour: [Colour::Red, Colour::Yellow, Colour::Blue][(i % 3) as usize],
                meetings: 0,
                mall: myself.clone(),
                _exit: mall.exit.enter(),
            };
            common::spawn(ChameneoActor, chameneo).await;
        }
        Ok(mall)
    }

    async fn handle(
        &self,
        myself: ActorRef<MallMsg>,
        msg: MallMsg,
        st: &mut Mall,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            MallMsg::Meet(colour, sender) if st.meetings_left > 0 => match st.waiting.take() {
                None => st.waiting = Some((colour, sender)),
                Some((_, waiting)) => {
                    st.meetings_left -= 1;
                    tell(&waiting, ChameneoMsg::Meet(colour, sender));
                }
            },
            MallMsg::Meet(_, sender) => tell(&sender, ChameneoMsg::Exit),
            MallMsg::MeetingCount(count) => {
                st.sum += count;
                st.faded += 1;
                if st.faded == st.chameneos {
                    if let Some(done) = st.done.take() {
                        let _ = done.send(st.sum);
                    }
                    myself.stop(None);
                }
            }
        }
        Ok(())
    }
}

impl Actor for ChameneoActor {
    type Msg = ChameneoMsg;
    type State = Chameneo;
    type Arguments = Chameneo;

    /// A chameneo asks for its first meeting as soon as it starts.
    async fn pre_start(
        &self,
        myself: ActorRef<ChameneoMsg>,
        chameneo: Chameneo,
    ) -> Result<Chameneo, ActorProcessingErr> {
        tell(&chameneo.mall, MallMsg::Meet(chameneo.colour, myself));
        Ok(chameneo)
    }

    async fn handle(
        &self,
        myself: ActorRef<ChameneoMsg>,
        msg: ChameneoMsg,
        st: &mut Chameneo,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            ChameneoMsg::Meet(other_colour, other) => {
                st.colour = st.colour.complement(other_colour);
                st.meetings += 1;
                tell(&other, ChameneoMsg::Change(st.colour));
                tell(&st.mall, MallMsg::Meet(st.colour, myself));
            }
            ChameneoMsg::Change(colour) => {
                st.colour = colour;
                st.meetings += 1;
                tell(&st.mall, MallMsg::Meet(st.colour, myself));
            }
            ChameneoMsg::Exit => {
                st.colour = Colour::Faded;
                tell(&st.mall, MallMsg::MeetingCount(st.meetings));
                myself.stop(None);
            }
        }
        Ok(())
    }
}

pub fn run(params: &Params) -> Outcome {
    let c: u64 = params.get("c");
    let m: u64 = params.get("m");
    common::run(params, |latch| async move {
        if c < 2 {
            return Err("-c must be at least 2 (a lone chameneo waits for ever)".to_owned());
        }
        let (done, result) = oneshot::channel();
        let mall = Mall {
            meetings_left: m,
            chameneos: c,
            waiting: None,
            sum: 0,
            faded: 0,
            done: Some(done),
            exit: latch.enter(),
        };
        drop(common::spawn(MallActor, mall).await);
        let sum = common::report(result).await?;
        expect_eq("sum of meetings", sum, 2 * m)
    })
}

#[cfg(test)]
mod tests {
    use super::Colour::*;

    #[test]
    fn complement_follows_the_rule() {
        assert_eq!(Red.complement(Red), Red);
        assert_eq!(Red.complement(Yellow), Blue);
        assert_eq!(Yellow.complement(Blue), Red);
        assert_eq!(Blue.complement(Red), Yellow);
        assert_eq!(Blue.complement(Faded), Faded);
    }
}
