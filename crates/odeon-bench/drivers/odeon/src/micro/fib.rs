//! Savina #6, Fibonacci (`savina.md` §3.6): a recursive fork-join tree of actors. Each
//! request for n > 2 spawns two children; every actor reports to its parent and exits.
//! This prices creating many short-lived actors and parent/child request/response.

use std::sync::mpsc;

use odeon::{ActorRef, Context, Handler};
use savina::protocol::expect_eq;
use savina::{Outcome, Params};

use super::{all, recv_n, settle, tell_only};
use crate::common;

/// Where an actor's result goes.
enum Parent {
    /// The root reports to the driver (Savina's root prints its result).
    Driver(mpsc::Sender<Response>),
    Actor(ActorRef<FibActor>),
}

/// One node of the call tree.
struct FibActor {
    parent: Parent,
    /// Its two children, held until it reports (see [`Handler<Request>`] for why).
    children: [Option<ActorRef<FibActor>>; 2],
    result: u64,
    /// Actors in this subtree that have reported, itself excluded (validation).
    actors: u64,
    responses: u8,
}

impl odeon::Actor for FibActor {}

/// Compute fib(n).
struct Request(u32);
/// A child's result, with the size of its subtree so the driver can check how many
/// actors ran without any shared counter.
struct Response {
    value: u64,
    actors: u64,
}
tell_only!(Request, Response);

impl FibActor {
    fn new(parent: Parent) -> Self {
        Self {
            parent,
            children: [None, None],
            result: 0,
            actors: 0,
            responses: 0,
        }
    }

    fn report(&mut self, cx: &mut Context<Self>) {
        let response = Response {
            value: self.result,
            actors: self.actors + 1,
        };
        match &self.parent {
            Parent::Driver(done) => {
                let _ = done.send(response);
            }
            Parent::Actor(parent) => {
                let _ = parent.tell(response);
            }
        }
        cx.stop();
    }
}

impl Handler<Request> for FibActor {
    /// Spawns the two children and keeps their references until it reports. Dropping
    /// a child's reference right after its `tell` would let odeon's local GC race with
    /// the child's own responses later (its turn can find the mailbox empty, then, once
    /// the grandchildren have answered and dropped their references, find none left and
    /// stop as unreferenced with the responses queued: the race described in
    /// `chameneos.rs`, reported as a runtime bug).
    fn handle(&mut self, Request(n): Request, cx: &mut Context<Self>) {
        if n <= 2 {
            self.result = 1;
            self.report(cx);
            return;
        }
        for (slot, k) in self.children.iter_mut().zip([n - 1, n - 2]) {
            let child = cx.spawn(FibActor::new(Parent::Actor(cx.myself())));
            let _ = child.tell(Request(k));
            *slot = Some(child);
        }
    }
}

impl Handler<Response> for FibActor {
    fn handle(&mut self, r: Response, cx: &mut Context<Self>) {
        self.result += r.value;
        self.actors += r.actors;
        self.responses += 1;
        if self.responses == 2 {
            self.report(cx);
        }
    }
}

/// fib(n) with fib(1) = fib(2) = 1, as the protocol computes it (n ≤ 2 gives 1).
fn fib_reference(n: u32) -> u64 {
    let (mut a, mut b) = (1u64, 1u64);
    for _ in 2..n {
        (a, b) = (b, a + b);
    }
    b
}

/// One timed iteration with Savina's `-n`.
pub(crate) fn run(params: &Params) -> Outcome {
    let n: u32 = params.get("n");
    Outcome::timed(|| {
        if n > 40 {
            return Err("Fibonacci with -n > 40 would create billions of actors".to_owned());
        }
        let system = common::system(params);
        let (tx, rx) = mpsc::channel();
        let root = system.spawn(FibActor::new(Parent::Driver(tx)));
        root.tell(Request(n))
            .map_err(|_| "the root refused its request")?;
        let response = recv_n(&rx, 1)?.pop().ok_or("no response")?;
        settle(system)?;
        drop(root);
        let expected = fib_reference(n);
        all(vec![
            expect_eq("fib", response.value, expected),
            expect_eq("actors", response.actors, 2 * expected - 1),
        ])
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_reference_matches_savina_expected_values() {
        assert_eq!(super::fib_reference(1), 1);
        assert_eq!(super::fib_reference(2), 1);
        assert_eq!(super::fib_reference(3), 2);
        assert_eq!(super::fib_reference(25), 75025);
    }
}
