//! Fibonacci (Savina #6, `shared/savina.md` §3.6): a recursive fork-join tree of
//! short-lived actors, two children per `Request(n)` with n > 2.

use ractor::{Actor, ActorProcessingErr, ActorRef};
use savina::protocol::expect_eq;
use savina::{Outcome, Params};
use tokio::sync::oneshot;

use crate::common::{self, Exit, state_from_args, tell};

struct FibActor;

/// Where an actor reports: its parent, or the driver for the root.
enum Parent {
    Actor(ActorRef<FibMsg>),
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

enum FibMsg {
    Request(u32),
    Response(Sum),
}

impl Fib {
    fn new(parent: Parent, exit: Exit) -> Self {
        Fib {
            parent: Some(parent),
            sum: Sum {
                value: 0,
                actors: 1,
            },
            responses: 0,
            exit,
        }
    }

    fn report(&mut self, myself: &ActorRef<FibMsg>) {
        match self.parent.take() {
            Some(Parent::Actor(parent)) => tell(&parent, FibMsg::Response(self.sum)),
            Some(Parent::Driver(done)) => {
                let _ = done.send(self.sum);
            }
            None => {}
        }
        myself.stop(None);
    }

    async fn child(&self, myself: &ActorRef<FibMsg>, n: u32) {
        let state = Fib::new(Parent::Actor(myself.clone()), self.exit.enter());
        let child = common::spawn(FibActor, state).await;
        tell(&child, FibMsg::Request(n));
    }
}

impl Actor for FibActor {
    type Msg = FibMsg;
    type State = Fib;
    type Arguments = Fib;

    state_from_args!();

    async fn handle(
        &self,
        myself: ActorRef<FibMsg>,
        msg: FibMsg,
        st: &mut Fib,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            FibMsg::Request(n) if n <= 2 => {
                st.sum.value = 1;
                st.report(&myself);
            }
            FibMsg::Request(n) => {
                st.child(&myself, n - 1).await;
                st.child(&myself, n - 2).await;
            }
            FibMsg::Response(sub) => {
                st.sum.value += sub.value;
                st.sum.actors += sub.actors;
                st.responses += 1;
                if st.responses == 2 {
                    st.report(&myself);
                }
            }
        }
        Ok(())
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
        let root = Fib::new(Parent::Driver(done), latch.enter());
        let root = common::spawn(FibActor, root).await;
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
