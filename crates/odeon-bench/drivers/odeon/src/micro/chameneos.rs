//! Savina #7, Chameneos (`savina.md` §3.7): C chameneos meet in pairs through one mall
//! until M meetings have happened. Every chameneo talks to the mall, so this prices
//! many-to-one contention on one mailbox, and fairness.

use std::sync::mpsc;

use odeon::{ActorRef, Context, Handler};
use savina::protocol::expect_eq;
use savina::{Outcome, Params};

use super::{all, recv_n, settle, tell_only};
use crate::common;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Colour {
    Red,
    Yellow,
    Blue,
    Faded,
}

impl Colour {
    /// Chameneo `i` starts with colour `i mod 3`, in the order red, yellow, blue.
    fn initial(i: usize) -> Self {
        [Self::Red, Self::Yellow, Self::Blue][i % 3]
    }

    /// The colour two chameneos take when they meet.
    fn complement(self, other: Self) -> Self {
        use Colour::{Blue, Faded, Red, Yellow};
        match (self, other) {
            (Faded, _) | (_, Faded) => Faded,
            (a, b) if a == b => a,
            (Red, Yellow) | (Yellow, Red) => Blue,
            (Red, Blue) | (Blue, Red) => Yellow,
            _ => Red,
        }
    }
}

/// The broker: pairs chameneos up until no meetings are left.
struct Mall {
    chameneos: usize,
    /// The chameneos it created, kept until it exits. Savina needs no such list; see
    /// the note on `Mall::started` for why odeon's mall keeps one.
    members: Vec<ActorRef<Chameneo>>,
    meetings_left: u64,
    waiting: Option<ActorRef<Chameneo>>,
    meetings_sum: u64,
    faded: usize,
    done: mpsc::Sender<(u64, usize)>,
}

struct Chameneo {
    mall: ActorRef<Mall>,
    colour: Colour,
    meetings: u64,
}

/// "I want to meet" (to the mall), or "you meet `sender`" (forwarded to the waiting one).
struct Meet {
    colour: Colour,
    sender: ActorRef<Chameneo>,
}
/// To the partner of a meeting: adopt this colour.
struct Change {
    colour: Colour,
    _sender: ActorRef<Chameneo>,
}
/// From a fading chameneo to the mall.
struct MeetingCount {
    count: u64,
    _sender: ActorRef<Chameneo>,
}
/// From the mall: no meetings left, fade and exit.
struct Exit {
    _sender: ActorRef<Mall>,
}
tell_only!(Meet, Change, MeetingCount, Exit);

impl odeon::Actor for Mall {
    /// Creates the chameneos and keeps a reference to each until it exits.
    ///
    /// Without those references, a chameneo's last strong reference is often the one
    /// inside a `Meet` that the mall forwards or answers, dropped right after that
    /// `tell`. odeon's local GC then races with the message: the chameneo's turn can
    /// see its mailbox empty, then (after the `tell` and the drop) see no references,
    /// and stop as unreferenced with the message still queued (`cell/turn.rs`,
    /// `on_empty`; reported as a runtime bug). One run in a few hung that way. Held
    /// references also spare a GC signal per meeting.
    fn started(&mut self, cx: &mut Context<Self>) {
        self.members = (0..self.chameneos)
            .map(|i| {
                cx.spawn(Chameneo {
                    mall: cx.myself(),
                    colour: Colour::initial(i),
                    meetings: 0,
                })
            })
            .collect();
    }
}

impl odeon::Actor for Chameneo {
    fn started(&mut self, cx: &mut Context<Self>) {
        self.ask_to_meet(cx);
    }
}

impl Chameneo {
    fn ask_to_meet(&self, cx: &mut Context<Self>) {
        let _ = self.mall.tell(Meet {
            colour: self.colour,
            sender: cx.myself(),
        });
    }
}

impl Handler<Meet> for Mall {
    fn handle(&mut self, msg: Meet, cx: &mut Context<Self>) {
        if self.meetings_left == 0 {
            let _ = msg.sender.tell(Exit {
                _sender: cx.myself(),
            });
            return;
        }
        match self.waiting.take() {
            None => self.waiting = Some(msg.sender),
            Some(waiting) => {
                self.meetings_left -= 1;
                let _ = waiting.tell(msg);
            }
        }
    }
}

impl Handler<MeetingCount> for Mall {
    fn handle(&mut self, msg: MeetingCount, cx: &mut Context<Self>) {
        self.meetings_sum += msg.count;
        self.faded += 1;
        if self.faded == self.chameneos {
            let _ = self.done.send((self.meetings_sum, self.faded));
            cx.stop();
        }
    }
}

impl Handler<Meet> for Chameneo {
    fn handle(&mut self, other: Meet, cx: &mut Context<Self>) {
        self.colour = self.colour.complement(other.colour);
        self.meetings += 1;
        let _ = other.sender.tell(Change {
            colour: self.colour,
            _sender: cx.myself(),
        });
        self.ask_to_meet(cx);
    }
}

impl Handler<Change> for Chameneo {
    fn handle(&mut self, msg: Change, cx: &mut Context<Self>) {
        self.colour = msg.colour;
        self.meetings += 1;
        self.ask_to_meet(cx);
    }
}

impl Handler<Exit> for Chameneo {
    fn handle(&mut self, _: Exit, cx: &mut Context<Self>) {
        self.colour = Colour::Faded;
        let _ = self.mall.tell(MeetingCount {
            count: self.meetings,
            _sender: cx.myself(),
        });
        cx.stop();
    }
}

/// One timed iteration with Savina's `-c` (chameneos) and `-m` (meetings).
pub(crate) fn run(params: &Params) -> Outcome {
    let c: usize = params.get("c");
    let m: u64 = params.get("m");
    Outcome::timed(|| {
        if c < 2 {
            return Err("Chameneos needs -c ≥ 2 (meetings take two)".to_owned());
        }
        let system = common::system(params);
        let (tx, rx) = mpsc::channel();
        let mall = system.spawn(Mall {
            chameneos: c,
            members: Vec::new(),
            meetings_left: m,
            waiting: None,
            meetings_sum: 0,
            faded: 0,
            done: tx,
        });
        let (sum, faded) = recv_n(&rx, 1)?.pop().ok_or("no result")?;
        settle(system)?;
        drop(mall);
        all(vec![
            expect_eq("sum of meetings", sum, 2 * m),
            expect_eq("chameneos faded", faded, c),
        ])
    })
}

#[cfg(test)]
mod tests {
    use super::Colour::{Blue, Faded, Red, Yellow};

    #[test]
    fn complements_follow_the_rules() {
        assert_eq!(Red.complement(Red), Red);
        assert_eq!(Red.complement(Yellow), Blue);
        assert_eq!(Yellow.complement(Blue), Red);
        assert_eq!(Blue.complement(Red), Yellow);
        assert_eq!(Blue.complement(Faded), Faded);
        assert_eq!(Faded.complement(Yellow), Faded);
    }
}
