//! Fibonacci (Savina #6, `shared/savina.md` §3.6): a recursive fork-join tree of
//! short-lived actors, two children per `Request(n)` with n > 2.

use kameo::actor::ActorRef;
use kameo::message::{Context, Message};
use savina::protocol::expect_eq;
use savina::{Outcome, Params};
use tokio::sync::oneshot;

use crate::common::{self, Exit, plain_actor, tell};

/// Where an actor reports: its parent, or the driver for the root.
enum Parent {
    Actor(ActorRef<Fib>),
    Driver(oneshot::Sender<Sum>),
}

/// A subtree's result: its Fibonacci value and how many actors it used, so the actor
/// count is checked without any shared counter.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Sum {
    value: u64,
    actors: u64,
}

struct Fib {
    parent: Option<Parent>,
    sum: Sum,
    responses: u8,
    exit: Exit,
}

plain_actor!(Fib);

enum FibMsg {
    Request(u32),
    Response(Sum),
}

impl Fib {
    fn report(&mut self, ctx: &mut Context<Self, ()>) {
        match self.parent.take() {
            Some(Parent::Actor(parent)) => tell(&parent, FibMsg::Response(self.sum)),
            Some(Parent::Driver(done)) => {
                let _ = done.send(self.sum);
            }
            None => {}
        }
        ctx.stop();
    }

    fn child(&self, me: &ActorRef<Fib>, n: u32) {
        let child = common::spawn(Fib {
            parent: Some(Parent::Actor(me.clone())),
            sum: Sum {
                value: 0,
                actors: 1,
            },
            responses: 0,
            exit: self.exit.enter(),
        });
        tell(&child, FibMsg::Request(n));
    }
}

impl Message<FibMsg> for Fib {
    type Reply = ();

    async fn handle(&mut self, msg: FibMsg, ctx: &mut Context<Self, ()>) {
        match msg {
            FibMsg::Request(n) if n <= 2 => {
                self.sum.value = 1;
                self.report(ctx);
            }
            FibMsg::Request(n) => {
                self.child(ctx.actor_ref(), n - 1);
                self.child(ctx.actor_ref(), n - 2);
            }
            FibMsg::Response(sub) => {
                self.sum.value += sub.value;
                self.sum.actors += sub.actors;
                self.responses += 1;
                if self.responses == 2 {
                    self.report(ctx);
                }
            }
        }
    }
}

/// The sequential reference: fib(1) = fib(2) = 1 (and 1 for n ≤ 2, as the protocol
/// answers), with 2·fib(n) − 1 actors.
fn expected(n: u32) -> Sum {
    let (mut a, mut b) = (1u64, 1u64);
    for _ in 2..n {
        (a, b) = (b, a + b);
    }
    Sum {
        value: b,
        actors: 2 * b - 1,
    }
}

pub fn run(params: &Params) -> Outcome {
    let n: u32 = params.get("n");
    common::run(params, |latch| async move {
        let (done, result) = oneshot::channel();
        let root = common::spawn(Fib {
            parent: Some(Parent::Driver(done)),
            sum: Sum {
                value: 0,
                actors: 1,
            },
            responses: 0,
            exit: latch.enter(),
        });
        tell(&root, FibMsg::Request(n));
        let sum = common::report(result).await?;
        expect_eq("fib(n), actors", sum, expected(n))
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn reference_matches_savina() {
        assert_eq!(super::expected(25).value, 75025);
        assert_eq!(super::expected(25).actors, 150049);
        assert_eq!(super::expected(2).actors, 1);
    }
}
