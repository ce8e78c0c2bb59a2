//! Chameneos (Savina #7, `shared/savina.md` §3.7): C chameneos meet through one broker
//! (the Mall) until M meetings have happened.

use kameo::actor::ActorRef;
use kameo::error::Infallible;
use kameo::message::{Context, Message};
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

struct Mall {
    meetings_left: u64,
    chameneos: u64,
    waiting: Option<(Colour, ActorRef<Chameneo>)>,
    sum: u64,
    faded: u64,
    done: Option<oneshot::Sender<u64>>,
    exit: Exit,
}

struct Chameneo {
    colour: Colour,
    meetings: u64,
    mall: ActorRef<Mall>,
    _exit: Exit,
}

enum MallMsg {
    Meet(Colour, ActorRef<Chameneo>),
    MeetingCount(u64),
}

enum ChameneoMsg {
    Meet(Colour, ActorRef<Chameneo>),
    Change(Colour),
    Exit,
}

impl kameo::Actor for Mall {
    type Args = Self;
    type Error = Infallible;

    /// The Mall creates the chameneos when it starts, as in Savina.
    async fn on_start(mall: Self, me: ActorRef<Self>) -> Result<Self, Infallible> {
        for i in 0..mall.chameneos {
            common::spawn(Chameneo {
                colour: [Colour::Red, Colour::Yellow, Colour::Blue][(i % 3) as usize],
                meetings: 0,
                mall: me.clone(),
                _exit: mall.exit.enter(),
            });
        }
        Ok(mall)
    }
}

impl kameo::Actor for Chameneo {
    type Args = Self;
    type Error = Infallible;

    /// A chameneo asks for its first meeting as soon as it starts.
    async fn on_start(chameneo: Self, me: ActorRef<Self>) -> Result<Self, Infallible> {
        tell(&chameneo.mall, MallMsg::Meet(chameneo.colour, me));
        Ok(chameneo)
    }
}

impl Message<MallMsg> for Mall {
    type Reply = ();

    async fn handle(&mut self, msg: MallMsg, ctx: &mut Context<Self, ()>) {
        match msg {
            MallMsg::Meet(colour, sender) if self.meetings_left > 0 => match self.waiting.take() {
                None => self.waiting = Some((colour, sender)),
                Some((_, waiting)) => {
                    self.meetings_left -= 1;
                    tell(&waiting, ChameneoMsg::Meet(colour, sender));
                }
            },
            MallMsg::Meet(_, sender) => tell(&sender, ChameneoMsg::Exit),
            MallMsg::MeetingCount(count) => {
                self.sum += count;
                self.faded += 1;
                if self.faded == self.chameneos {
                    if let Some(done) = self.done.take() {
                        let _ = done.send(self.sum);
                    }
                    ctx.stop();
                }
            }
        }
    }
}

impl Message<ChameneoMsg> for Chameneo {
    type Reply = ();

    async fn handle(&mut self, msg: ChameneoMsg, ctx: &mut Context<Self, ()>) {
        match msg {
            ChameneoMsg::Meet(other_colour, other) => {
                self.colour = self.colour.complement(other_colour);
                self.meetings += 1;
                tell(&other, ChameneoMsg::Change(self.colour));
                tell(
                    &self.mall,
                    MallMsg::Meet(self.colour, ctx.actor_ref().clone()),
                );
            }
            ChameneoMsg::Change(colour) => {
                self.colour = colour;
                self.meetings += 1;
                tell(
                    &self.mall,
                    MallMsg::Meet(self.colour, ctx.actor_ref().clone()),
                );
            }
            ChameneoMsg::Exit => {
                self.colour = Colour::Faded;
                tell(&self.mall, MallMsg::MeetingCount(self.meetings));
                ctx.stop();
            }
        }
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
        drop(common::spawn(Mall {
            meetings_left: m,
            chameneos: c,
            waiting: None,
            sum: 0,
            faded: 0,
            done: Some(done),
            exit: latch.enter(),
        }));
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
