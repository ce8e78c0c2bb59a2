//! Producer–Consumer with Bounded Buffer (Savina #11, `shared/savina.md` §3.11): a
//! manager actor is the buffer between P producers and C consumers, parks producers
//! when it holds too many items and wakes them as consumers drain it.

use std::collections::VecDeque;
use std::sync::mpsc;

use odeon::{Actor, ActorRef, Context, Handler, Message};
use savina::rng::PseudoRandom;
use savina::{Outcome, Params};

use super::{Exit, Latch, outcome, timed};

/// Savina's `processItem`: `cost * 100` logarithms drawn from a fresh generator
/// seeded with `cost` (one step when `cost` is 0).
fn process_item(current: f64, cost: i32) -> f64 {
    let mut random = PseudoRandom::new(i64::from(cost));
    let steps = if cost > 0 { cost * 100 } else { 1 };
    let mut result = current;
    for _ in 0..steps {
        result += (random.next_double().abs() + 0.01).ln();
    }
    result
}

/// What producers and consumers report as they exit.
enum Tally {
    Produced { items: u32, last: f64 },
    Consumed(u64),
}

#[derive(Clone, Copy)]
struct Config {
    buffer: i64,
    producers: u32,
    consumers: u32,
    per_producer: u32,
    prod_cost: i32,
    cons_cost: i32,
}

struct Manager {
    config: Config,
    /// `bufferSize - numProducers`, as the reference: every producer may have one item
    /// in flight besides the ones queued here.
    capacity: i64,
    pending: VecDeque<f64>,
    idle: VecDeque<ActorRef<Consumer>>,
    parked: VecDeque<ActorRef<Producer>>,
    exited_producers: u32,
    /// Every producer and consumer, held until the manager exits, as the reference's
    /// arrays (see `timed`).
    producers: Vec<ActorRef<Producer>>,
    consumers: Vec<ActorRef<Consumer>>,
    tally: mpsc::Sender<Tally>,
    exit: Exit,
}

struct Producer {
    manager: ActorRef<Manager>,
    item: f64,
    produced: u32,
    quota: u32,
    cost: i32,
    tally: mpsc::Sender<Tally>,
    _exit: Exit,
}

struct Consumer {
    manager: ActorRef<Manager>,
    item: f64,
    consumed: u64,
    cost: i32,
    tally: mpsc::Sender<Tally>,
    _exit: Exit,
}

impl Actor for Manager {
    fn started(&mut self, cx: &mut Context<Self>) {
        let system = cx.system();
        for _ in 0..self.config.consumers {
            let consumer = system.spawn(Consumer {
                manager: cx.myself(),
                item: 0.0,
                consumed: 0,
                cost: self.config.cons_cost,
                tally: self.tally.clone(),
                _exit: self.exit.enter(),
            });
            self.idle.push_back(consumer.clone());
            self.consumers.push(consumer);
        }
        for _ in 0..self.config.producers {
            let producer = system.spawn(Producer {
                manager: cx.myself(),
                item: 0.0,
                produced: 0,
                quota: self.config.per_producer,
                cost: self.config.prod_cost,
                tally: self.tally.clone(),
                _exit: self.exit.enter(),
            });
            let _ = producer.tell(ProduceData);
            self.producers.push(producer);
        }
        self.exit_check(cx);
    }
}
impl Actor for Producer {}
impl Actor for Consumer {}

struct ProduceData;
impl Message for ProduceData {
    type Reply = ();
}

/// An item for the buffer, with the producer to resume or park.
struct DataItem {
    data: f64,
    producer: ActorRef<Producer>,
}
impl Message for DataItem {
    type Reply = ();
}

/// An item handed to a consumer.
struct Consume(f64);
impl Message for Consume {
    type Reply = ();
}

struct ConsumerAvailable(ActorRef<Consumer>);
impl Message for ConsumerAvailable {
    type Reply = ();
}

struct ProducerExit;
impl Message for ProducerExit {
    type Reply = ();
}

struct ConsumerExit;
impl Message for ConsumerExit {
    type Reply = ();
}

impl Manager {
    /// Once every producer has exited and every consumer is idle, the run is over.
    fn exit_check(&mut self, cx: &mut Context<Self>) {
        if self.exited_producers == self.config.producers
            && self.idle.len() == self.config.consumers as usize
        {
            for consumer in self.idle.drain(..) {
                let _ = consumer.tell(ConsumerExit);
            }
            cx.stop();
        }
    }
}

impl Handler<DataItem> for Manager {
    fn handle(&mut self, msg: DataItem, _: &mut Context<Self>) {
        match self.idle.pop_front() {
            Some(consumer) => {
                let _ = consumer.tell(Consume(msg.data));
            }
            None => self.pending.push_back(msg.data),
        }
        if self.pending.len() as i64 >= self.capacity {
            self.parked.push_back(msg.producer);
        } else {
            let _ = msg.producer.tell(ProduceData);
        }
    }
}

impl Handler<ConsumerAvailable> for Manager {
    fn handle(&mut self, msg: ConsumerAvailable, cx: &mut Context<Self>) {
        match self.pending.pop_front() {
            None => {
                self.idle.push_back(msg.0);
                self.exit_check(cx);
            }
            Some(data) => {
                let _ = msg.0.tell(Consume(data));
                if let Some(producer) = self.parked.pop_front() {
                    let _ = producer.tell(ProduceData);
                }
            }
        }
    }
}

impl Handler<ProducerExit> for Manager {
    fn handle(&mut self, _: ProducerExit, cx: &mut Context<Self>) {
        self.exited_producers += 1;
        self.exit_check(cx);
    }
}

impl Handler<ProduceData> for Producer {
    fn handle(&mut self, _: ProduceData, cx: &mut Context<Self>) {
        if self.produced == self.quota {
            let _ = self.manager.tell(ProducerExit);
            let _ = self.tally.send(Tally::Produced {
                items: self.produced,
                last: self.item,
            });
            cx.stop();
        } else {
            self.item = process_item(self.item, self.cost);
            let producer = cx.myself();
            let _ = self.manager.tell(DataItem {
                data: self.item,
                producer,
            });
            self.produced += 1;
        }
    }
}

impl Handler<Consume> for Consumer {
    fn handle(&mut self, msg: Consume, cx: &mut Context<Self>) {
        self.item = process_item(self.item + msg.0, self.cost);
        self.consumed += 1;
        let _ = self.manager.tell(ConsumerAvailable(cx.myself()));
    }
}

impl Handler<ConsumerExit> for Consumer {
    fn handle(&mut self, _: ConsumerExit, cx: &mut Context<Self>) {
        let _ = self.tally.send(Tally::Consumed(self.consumed));
        cx.stop();
    }
}

pub(crate) fn run(params: &Params) -> Outcome {
    let config = Config {
        buffer: params.get("bb"),
        producers: params.get("np"),
        consumers: params.get("nc"),
        per_producer: params.get("ipp"),
        prod_cost: params.get("pc"),
        cons_cost: params.get("cc"),
    };
    // Every producer's items are the same chain from 0 (a fresh generator per item).
    let last_item =
        (0..config.per_producer).fold(0.0, |item, _| process_item(item, config.prod_cost));
    let (tx, rx) = mpsc::channel();
    let elapsed = timed(params, |system, latch: &Latch| {
        // Kept alive by the refs its workers hold while the run lasts (as before).
        drop(system.spawn(Manager {
            config,
            capacity: config.buffer - i64::from(config.producers),
            pending: VecDeque::new(),
            idle: VecDeque::new(),
            parked: VecDeque::new(),
            exited_producers: 0,
            producers: Vec::new(),
            consumers: Vec::new(),
            tally: tx,
            exit: latch.enter(),
        }));
    });
    outcome(elapsed, || {
        let (mut produced, mut consumed, mut producers, mut consumers) = (0u64, 0u64, 0, 0);
        for tally in rx.try_iter() {
            match tally {
                Tally::Produced { items, last } => {
                    if last.to_bits() != last_item.to_bits() {
                        return Err(format!("a producer's last item is {last}, not {last_item}"));
                    }
                    produced += u64::from(items);
                    producers += 1;
                }
                Tally::Consumed(items) => {
                    consumed += items;
                    consumers += 1;
                }
            }
        }
        let expected = u64::from(config.producers) * u64::from(config.per_producer);
        if (producers, consumers) != (config.producers, config.consumers) {
            return Err(format!(
                "{producers} producers and {consumers} consumers reported, expected {} and {}",
                config.producers, config.consumers
            ));
        }
        if produced != expected || consumed != expected {
            return Err(format!(
                "{produced} items produced, {consumed} consumed, expected {expected}"
            ));
        }
        Ok(format!("{consumed} items consumed"))
    })
}
