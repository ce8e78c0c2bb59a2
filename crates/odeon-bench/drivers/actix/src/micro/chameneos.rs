//! Chameneos (Savina #7, `shared/savina.md` §3.7): C chameneos meet through one broker,
//! the Mall, until it has arranged M meetings.

use actix::{Actor, ActorContext, Addr, AsyncContext, Context, Handler, Message};
use savina::{Outcome, Params};

use crate::common::{Live, Rt, Slot, Variant, run_system};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Colour {
    Red,
    Yellow,
    Blue,
    Faded,
}

impl Colour {
    /// The complement rule: same gives same, two different live colours give the
    /// third, anything with Faded fades.
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

#[derive(Message)]
#[rtype(result = "()")]
struct Meet {
    colour: Colour,
    sender: Addr<Chameneo>,
}

#[derive(Message)]
#[rtype(result = "()")]
struct Change {
    colour: Colour,
    #[allow(dead_code)] // part of Savina's message; the protocol never replies to it
    sender: Addr<Chameneo>,
}

#[derive(Message)]
#[rtype(result = "()")]
struct MeetingCount {
    count: u64,
    #[allow(dead_code)] // part of Savina's message; the Mall only sums
    sender: Addr<Chameneo>,
}

#[derive(Message)]
#[rtype(result = "()")]
struct Exit {
    #[allow(dead_code)] // part of Savina's message; the chameneo replies via its own Mall
    sender: Addr<Mall>,
}

struct Mall {
    me: Addr<Mall>,
    meetings_left: u64,
    waiting: Option<Meet>,
    sum: u64,
    faded: u64,
    chameneos: u64,
    rt: Rt,
    report: Slot<(u64, u64)>,
    _live: Live,
}

impl Actor for Mall {
    type Context = Context<Self>;

    /// The Mall creates the chameneos when it starts; each announces itself.
    fn started(&mut self, _: &mut Context<Self>) {
        let colours = [Colour::Red, Colour::Yellow, Colour::Blue];
        for i in 0..self.chameneos {
            let mall = self.me.clone();
            let colour = colours[(i % 3) as usize];
            self.rt.spawn(move |ctx, live| Chameneo {
                me: ctx.address(),
                mall,
                colour,
                meetings: 0,
                _live: live,
            });
        }
    }
}

impl Handler<Meet> for Mall {
    type Result = ();
    fn handle(&mut self, meet: Meet, _: &mut Context<Self>) {
        if self.meetings_left > 0 {
            match self.waiting.take() {
                None => self.waiting = Some(meet),
                Some(waiting) => {
                    self.meetings_left -= 1;
                    waiting.sender.do_send(meet);
                }
            }
        } else {
            meet.sender.do_send(Exit {
                sender: self.me.clone(),
            });
        }
    }
}

impl Handler<MeetingCount> for Mall {
    type Result = ();
    fn handle(&mut self, msg: MeetingCount, ctx: &mut Context<Self>) {
        self.sum += msg.count;
        self.faded += 1;
        if self.faded == self.chameneos {
            self.report.put((self.sum, self.faded));
            ctx.stop();
        }
    }
}

struct Chameneo {
    me: Addr<Chameneo>,
    mall: Addr<Mall>,
    colour: Colour,
    meetings: u64,
    _live: Live,
}

impl Actor for Chameneo {
    type Context = Context<Self>;

    fn started(&mut self, _: &mut Context<Self>) {
        self.mall.do_send(Meet {
            colour: self.colour,
            sender: self.me.clone(),
        });
    }
}

impl Handler<Meet> for Chameneo {
    type Result = ();
    fn handle(&mut self, Meet { colour, sender }: Meet, _: &mut Context<Self>) {
        self.colour = self.colour.complement(colour);
        self.meetings += 1;
        sender.do_send(Change {
            colour: self.colour,
            sender: self.me.clone(),
        });
        self.mall.do_send(Meet {
            colour: self.colour,
            sender: self.me.clone(),
        });
    }
}

impl Handler<Change> for Chameneo {
    type Result = ();
    fn handle(&mut self, Change { colour, .. }: Change, _: &mut Context<Self>) {
        self.colour = colour;
        self.meetings += 1;
        self.mall.do_send(Meet {
            colour,
            sender: self.me.clone(),
        });
    }
}

impl Handler<Exit> for Chameneo {
    type Result = ();
    fn handle(&mut self, _: Exit, ctx: &mut Context<Self>) {
        self.colour = Colour::Faded;
        self.mall.do_send(MeetingCount {
            count: self.meetings,
            sender: self.me.clone(),
        });
        ctx.stop();
    }
}

pub(crate) fn run(params: &Params, variant: Variant) -> Outcome {
    let c: u64 = params.get("c");
    let m: u64 = params.get("m");
    if c < 2 && m > 0 {
        // A lone chameneo would wait in the Mall for ever.
        return Outcome::new(Default::default(), Err("-c must be >= 2".into()));
    }
    let result = Slot::new();
    let elapsed = run_system(variant, |rt: &Rt| {
        let (mall_rt, report) = (rt.clone(), result.clone());
        rt.spawn(move |ctx, live| Mall {
            me: ctx.address(),
            meetings_left: m,
            waiting: None,
            sum: 0,
            faded: 0,
            chameneos: c,
            rt: mall_rt,
            report,
            _live: live,
        });
    });
    let check = result.take("the Mall").and_then(|(sum, faded)| {
        if sum == 2 * m && faded == c {
            Ok(format!("sum of meetings = {sum}; {faded} faded"))
        } else {
            Err(format!(
                "sum of meetings {sum} with {faded} faded, expected {} and {c}",
                2 * m
            ))
        }
    });
    Outcome::new(elapsed, check)
}

#[cfg(test)]
mod tests {
    use super::Colour::*;

    #[test]
    fn complement_rule() {
        assert_eq!(Red.complement(Red), Red);
        assert_eq!(Red.complement(Yellow), Blue);
        assert_eq!(Blue.complement(Yellow), Red);
        assert_eq!(Blue.complement(Red), Yellow);
        assert_eq!(Faded.complement(Red), Faded);
        assert_eq!(Yellow.complement(Faded), Faded);
    }
}
