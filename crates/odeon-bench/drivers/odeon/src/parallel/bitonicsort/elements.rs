//! The building blocks of the bitonic network (`shared/savina.md` §3.24): splitter,
//! compare-exchange, joiner and the two tag adapters, with the messages they exchange.
//! Every one keeps a reference to itself until it exits (see the parent module).

use std::collections::VecDeque;

use odeon::{Actor, ActorRef, Context, Handler, Message, Recipient};

/// The untagged stream between the parts of the network (Savina's `ValueMessage` and
/// `ExitMessage`).
pub(super) enum Flow {
    Value(i64),
    Exit,
}
impl Message for Flow {
    type Reply = ();
}

/// The tagged stream into a joiner: `order` is the input the value came from (Savina's
/// `DataMessage` and `ExitMessage`).
pub(super) enum Tagged {
    Data { order: usize, value: i64 },
    Exit,
}
impl Message for Tagged {
    type Reply = ();
}

/// A reference an actor holds to itself until it exits (see the parent module).
pub(super) type KeepAlive<A> = Option<ActorRef<A>>;

/// `Actor` impls whose `started` takes the self-reference.
macro_rules! kept_alive {
    ($($a:ty),*) => {$(
        impl Actor for $a {
            fn started(&mut self, cx: &mut Context<Self>) {
                self.me = Some(cx.myself());
            }
        }
    )*};
}
kept_alive!(
    Splitter,
    CompareExchange,
    Joiner,
    ValueDataAdapter,
    DataValueAdapter
);

/// Sends `run` consecutive values to one receiver, then moves on to the next,
/// cyclically; broadcasts `Exit`.
pub(super) struct Splitter {
    me: KeepAlive<Self>,
    run: usize,
    receivers: Vec<Recipient<Flow>>,
    current: usize,
    sent: usize,
}

impl Splitter {
    pub(super) fn spawn<A: Actor>(
        cx: &Context<A>,
        run: usize,
        receivers: Vec<Recipient<Flow>>,
    ) -> Recipient<Flow> {
        cx.system()
            .spawn(Splitter {
                me: None,
                run,
                receivers,
                current: 0,
                sent: 0,
            })
            .recipient()
    }
}

impl Handler<Flow> for Splitter {
    fn handle(&mut self, msg: Flow, cx: &mut Context<Self>) {
        match msg {
            Flow::Value(v) => {
                let _ = self.receivers[self.current].tell(Flow::Value(v));
                self.sent += 1;
                if self.sent == self.run {
                    self.sent = 0;
                    self.current = (self.current + 1) % self.receivers.len();
                }
            }
            Flow::Exit => {
                for r in &self.receivers {
                    let _ = r.tell(Flow::Exit);
                }
                cx.stop();
            }
        }
    }
}

/// Holds the first value of each pair; on the second emits (min, max) when sorting up,
/// (max, min) when sorting down, tagged with its order.
pub(super) struct CompareExchange {
    me: KeepAlive<Self>,
    order: usize,
    up: bool,
    held: Option<i64>,
    next: Recipient<Tagged>,
}

impl CompareExchange {
    pub(super) fn spawn<A: Actor>(
        cx: &Context<A>,
        order: usize,
        up: bool,
        next: Recipient<Tagged>,
    ) -> Recipient<Flow> {
        cx.system()
            .spawn(CompareExchange {
                me: None,
                order,
                up,
                held: None,
                next,
            })
            .recipient()
    }
}

impl Handler<Flow> for CompareExchange {
    fn handle(&mut self, msg: Flow, cx: &mut Context<Self>) {
        match msg {
            Flow::Value(v) => match self.held.take() {
                None => self.held = Some(v),
                Some(first) => {
                    let (lo, hi) = (first.min(v), first.max(v));
                    let (a, b) = if self.up { (lo, hi) } else { (hi, lo) };
                    let order = self.order;
                    let _ = self.next.tell(Tagged::Data { order, value: a });
                    let _ = self.next.tell(Tagged::Data { order, value: b });
                }
            },
            Flow::Exit => {
                let _ = self.next.tell(Tagged::Exit);
                cx.stop();
            }
        }
    }
}

/// Buffers tagged values per input and emits them untagged, `run` from input 0, `run`
/// from input 1, …, cyclically, each as soon as the one it needs next has arrived;
/// forwards `Exit` once every input has sent one.
pub(super) struct Joiner {
    me: KeepAlive<Self>,
    run: usize,
    buffers: Vec<VecDeque<i64>>,
    current: usize,
    emitted: usize,
    exits: usize,
    next: Recipient<Flow>,
}

impl Joiner {
    pub(super) fn spawn<A: Actor>(
        cx: &Context<A>,
        run: usize,
        inputs: usize,
        next: Recipient<Flow>,
    ) -> Recipient<Tagged> {
        cx.system()
            .spawn(Joiner {
                me: None,
                run,
                buffers: vec![VecDeque::new(); inputs],
                current: 0,
                emitted: 0,
                exits: 0,
                next,
            })
            .recipient()
    }
}

impl Handler<Tagged> for Joiner {
    fn handle(&mut self, msg: Tagged, cx: &mut Context<Self>) {
        match msg {
            Tagged::Data { order, value } => {
                self.buffers[order].push_back(value);
                while let Some(v) = self.buffers[self.current].pop_front() {
                    let _ = self.next.tell(Flow::Value(v));
                    self.emitted += 1;
                    if self.emitted == self.run {
                        self.emitted = 0;
                        self.current = (self.current + 1) % self.buffers.len();
                    }
                }
            }
            Tagged::Exit => {
                self.exits += 1;
                if self.exits == self.buffers.len() {
                    let _ = self.next.tell(Flow::Exit);
                    cx.stop();
                }
            }
        }
    }
}

/// Tags values with a partition's order for its step's joiner.
pub(super) struct ValueDataAdapter {
    pub(super) me: KeepAlive<Self>,
    pub(super) order: usize,
    pub(super) next: Recipient<Tagged>,
}

impl Handler<Flow> for ValueDataAdapter {
    fn handle(&mut self, msg: Flow, cx: &mut Context<Self>) {
        match msg {
            Flow::Value(value) => {
                let order = self.order;
                let _ = self.next.tell(Tagged::Data { order, value });
            }
            Flow::Exit => {
                let _ = self.next.tell(Tagged::Exit);
                cx.stop();
            }
        }
    }
}

/// Savina's untagging adapter after a step's joiner. Our joiner already emits untagged
/// values, so it only passes them on; it stays for Savina's topology (one hop per step).
pub(super) struct DataValueAdapter {
    pub(super) me: KeepAlive<Self>,
    pub(super) next: Recipient<Flow>,
}

impl Handler<Flow> for DataValueAdapter {
    fn handle(&mut self, msg: Flow, cx: &mut Context<Self>) {
        let exit = matches!(msg, Flow::Exit);
        let _ = self.next.tell(msg);
        if exit {
            cx.stop();
        }
    }
}
