//! Guarantee 4 (FIFO per pair) and guarantee 3's "every message sent to a live actor is
//! eventually handled": with any number of concurrent senders, OS threads and actors,
//! each sending any number of sequence-numbered messages, the receiver sees each
//! sender's messages exactly once and in the order sent.

use std::collections::BTreeMap;

use odeon::{Actor, ActorRef, Context, Handler, Message, SpawnOptions, System};
use proptest::prelude::*;

struct Receiver {
    /// Per sender, the sequence numbers in arrival order.
    seen: BTreeMap<usize, Vec<u32>>,
}
impl Actor for Receiver {}

struct Seq {
    from: usize,
    n: u32,
}
impl Message for Seq {
    type Reply = ();
}
impl Handler<Seq> for Receiver {
    fn handle(&mut self, msg: Seq, _cx: &mut Context<Self>) {
        self.seen.entry(msg.from).or_default().push(msg.n);
    }
}

struct Seen;
impl Message for Seen {
    type Reply = BTreeMap<usize, Vec<u32>>;
}
impl Handler<Seen> for Receiver {
    fn handle(&mut self, _: Seen, _cx: &mut Context<Self>) -> BTreeMap<usize, Vec<u32>> {
        std::mem::take(&mut self.seen)
    }
}

/// A sender actor: sends its sequence in chunks, one chunk per turn, so that its
/// messages interleave with everyone else's.
struct Sender {
    to: ActorRef<Receiver>,
    from: usize,
    chunk: u32,
}
impl Actor for Sender {}

struct Send {
    next: u32,
    end: u32,
}
impl Message for Send {
    type Reply = ();
}
impl Handler<Send> for Sender {
    fn handle(&mut self, Send { next, end }: Send, cx: &mut Context<Self>) {
        let stop = next.saturating_add(self.chunk).min(end);
        for n in next..stop {
            self.to.tell(Seq { from: self.from, n }).unwrap();
        }
        if stop < end {
            cx.notify(Send { next: stop, end })
                .expect("the mailbox is unbounded");
        }
    }
}

#[derive(Clone, Debug)]
struct Plan {
    /// Per sender: is it an OS thread (else an actor), and how many messages it sends.
    senders: Vec<(bool, u32)>,
    /// Messages a sender actor sends per turn.
    chunk: u32,
    /// The system's per-turn budget.
    budget: usize,
    /// Whether the receiver has its own thread (`SpawnOptions::blocking`).
    blocking: bool,
}

fn plan() -> impl Strategy<Value = Plan> {
    (
        prop::collection::vec((any::<bool>(), 0u32..500), 1..8),
        1u32..64,
        prop_oneof![Just(1usize), Just(3), Just(64)],
        prop::bool::weighted(0.25),
    )
        .prop_map(|(senders, chunk, budget, blocking)| Plan {
            senders,
            chunk,
            budget,
            blocking,
        })
}

fn run(plan: &Plan) -> BTreeMap<usize, Vec<u32>> {
    let system = System::builder().workers(2).budget(plan.budget).build();
    let opts = if plan.blocking {
        SpawnOptions::new().blocking()
    } else {
        SpawnOptions::new()
    };
    let receiver = system.spawn_with(
        Receiver {
            seen: BTreeMap::new(),
        },
        opts,
    );
    let actors: Vec<_> = plan
        .senders
        .iter()
        .enumerate()
        .filter(|(_, (thread, _))| !thread)
        .map(|(from, &(_, count))| {
            let a = system.spawn(Sender {
                to: receiver.clone(),
                from,
                chunk: plan.chunk,
            });
            (a, count)
        })
        .collect();
    std::thread::scope(|s| {
        for (from, &(thread, count)) in plan.senders.iter().enumerate() {
            if thread {
                let to = receiver.clone();
                s.spawn(move || {
                    for n in 0..count {
                        to.tell(Seq { from, n }).unwrap();
                    }
                });
            }
        }
        for (a, count) in &actors {
            a.tell(Send {
                next: 0,
                end: *count,
            })
            .unwrap();
        }
    });
    system.run_until_quiescent();
    let seen = system.block_on(receiver.ask(Seen)).unwrap();
    assert!(system.shutdown());
    seen
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn every_senders_messages_arrive_exactly_once_and_in_the_order_sent(plan in plan()) {
        let seen = run(&plan);
        for (from, &(_, count)) in plan.senders.iter().enumerate() {
            let got = seen.get(&from).cloned().unwrap_or_default();
            prop_assert_eq!(got.len(), count as usize, "sender {} lost or duplicated", from);
            prop_assert!(
                got.iter().copied().eq(0..count),
                "sender {} out of order: {:?}", from, got
            );
        }
        prop_assert!(seen.keys().all(|k| *k < plan.senders.len()));
    }
}

#[test]
fn messages_told_from_one_thread_arrive_in_order_even_across_many_turns() {
    let plan = Plan {
        senders: vec![(true, 20_000)],
        chunk: 1,
        budget: 1,
        blocking: false,
    };
    let seen = run(&plan);
    assert!(seen[&0].iter().copied().eq(0..20_000));
}
