//! Concurrent Dictionary (Savina #9, `shared/savina.md` §3.9): W workers issue M
//! read/write requests each, one outstanding at a time, against one Dictionary actor.

use std::collections::HashMap;
use std::sync::OnceLock;

use actix::{Actor, ActorContext, Addr, AsyncContext, Context, Handler, Message};
use savina::rng::JavaRandom;
use savina::{Outcome, Params};

use crate::common::{Live, Rt, Slot, Variant, run_system};

/// `Integer.MAX_VALUE / 4096`: keys live in `0..DATA_LIMIT`.
const DATA_LIMIT: i32 = i32::MAX / 4096;

/// Savina's `DATA_MAP` (every key mapped to itself), built once at parse time, outside
/// the timed region; the Dictionary copies it when constructed, inside.
fn data_map() -> &'static HashMap<i32, i32> {
    static MAP: OnceLock<HashMap<i32, i32>> = OnceLock::new();
    MAP.get_or_init(|| (0..DATA_LIMIT).map(|k| (k, k)).collect())
}

/// `Math.abs(key) % DATA_LIMIT` with Java's 32-bit semantics (abs(MIN) stays negative).
fn normalise(key: i32) -> i32 {
    key.wrapping_abs() % DATA_LIMIT
}

#[derive(Message)]
#[rtype(result = "()")]
struct DoWork;

#[derive(Message)]
#[rtype(result = "()")]
struct Write {
    sender: Addr<Worker>,
    key: i32,
    value: i32,
}

#[derive(Message)]
#[rtype(result = "()")]
struct Read {
    sender: Addr<Worker>,
    key: i32,
}

#[derive(Message)]
#[rtype(result = "()")]
struct Reply(#[allow(dead_code)] Option<i32>);

/// From a worker to the Master, then from the Master to the Dictionary.
#[derive(Message)]
#[rtype(result = "()")]
struct EndWork;

/// What the Dictionary reports when it ends: requests served, writes, final size.
type DictReport = (u64, u64, usize);

struct Master {
    me: Addr<Master>,
    rt: Rt,
    workers: u64,
    messages: u64,
    write_percentage: i32,
    dictionary: Option<Addr<Dictionary>>,
    ended: u64,
    report: Slot<DictReport>,
    _live: Live,
}

impl Actor for Master {
    type Context = Context<Self>;

    /// The Master creates the Dictionary and the workers when it starts.
    fn started(&mut self, _: &mut Context<Self>) {
        let report = self.report.clone();
        let dictionary = self.rt.spawn(move |ctx, live| Dictionary {
            _me: ctx.address(),
            map: data_map().clone(),
            served: 0,
            writes: 0,
            report,
            _live: live,
        });
        for id in 0..self.workers {
            let (master, dictionary) = (self.me.clone(), dictionary.clone());
            let (m, wp) = (self.messages, self.write_percentage);
            let seed = id as i64 + m as i64 + i64::from(wp);
            let worker = self.rt.spawn(move |ctx, live| Worker {
                me: ctx.address(),
                master,
                dictionary,
                rng: JavaRandom::new(seed),
                received: 0,
                messages: m,
                write_percentage: wp,
                _live: live,
            });
            worker.do_send(DoWork);
        }
        self.dictionary = Some(dictionary);
    }
}

impl Handler<EndWork> for Master {
    type Result = ();
    fn handle(&mut self, _: EndWork, ctx: &mut Context<Self>) {
        self.ended += 1;
        if self.ended == self.workers {
            if let Some(dictionary) = &self.dictionary {
                dictionary.do_send(EndWork);
            }
            ctx.stop();
        }
    }
}

struct Worker {
    me: Addr<Worker>,
    master: Addr<Master>,
    dictionary: Addr<Dictionary>,
    rng: JavaRandom,
    received: u64,
    messages: u64,
    write_percentage: i32,
    _live: Live,
}

impl Actor for Worker {
    type Context = Context<Self>;
}

impl Worker {
    /// Every message (DoWork or a reply) counts; the first M each issue one request.
    fn on_message(&mut self, ctx: &mut Context<Self>) {
        self.received += 1;
        if self.received <= self.messages {
            if self.rng.next_int_bounded(100) < self.write_percentage {
                let key = normalise(self.rng.next_int());
                let value = self.rng.next_int();
                self.dictionary.do_send(Write {
                    sender: self.me.clone(),
                    key,
                    value,
                });
            } else {
                let key = normalise(self.rng.next_int());
                self.dictionary.do_send(Read {
                    sender: self.me.clone(),
                    key,
                });
            }
        } else {
            self.master.do_send(EndWork);
            ctx.stop();
        }
    }
}

impl Handler<DoWork> for Worker {
    type Result = ();
    fn handle(&mut self, _: DoWork, ctx: &mut Context<Self>) {
        self.on_message(ctx);
    }
}

impl Handler<Reply> for Worker {
    type Result = ();
    fn handle(&mut self, _: Reply, ctx: &mut Context<Self>) {
        self.on_message(ctx);
    }
}

struct Dictionary {
    /// The Master drops its address right after sending the final EndWork; without
    /// this one the Dictionary could auto-stop before handling it.
    _me: Addr<Dictionary>,
    map: HashMap<i32, i32>,
    served: u64,
    writes: u64,
    report: Slot<DictReport>,
    _live: Live,
}

impl Actor for Dictionary {
    type Context = Context<Self>;
}

impl Handler<Write> for Dictionary {
    type Result = ();
    fn handle(&mut self, Write { sender, key, value }: Write, _: &mut Context<Self>) {
        self.map.insert(key, value);
        self.served += 1;
        self.writes += 1;
        sender.do_send(Reply(Some(value)));
    }
}

impl Handler<Read> for Dictionary {
    type Result = ();
    fn handle(&mut self, Read { sender, key }: Read, _: &mut Context<Self>) {
        self.served += 1;
        sender.do_send(Reply(self.map.get(&key).copied()));
    }
}

impl Handler<EndWork> for Dictionary {
    type Result = ();
    fn handle(&mut self, _: EndWork, ctx: &mut Context<Self>) {
        self.report.put((self.served, self.writes, self.map.len()));
        ctx.stop();
    }
}

/// The request streams replayed sequentially: (writes, final dictionary size).
fn reference(workers: u64, messages: u64, write_percentage: i32) -> (u64, usize) {
    let mut writes = 0;
    let mut new_keys = std::collections::HashSet::new();
    for id in 0..workers {
        let seed = id as i64 + messages as i64 + i64::from(write_percentage);
        let mut rng = JavaRandom::new(seed);
        for _ in 0..messages {
            if rng.next_int_bounded(100) < write_percentage {
                let key = normalise(rng.next_int());
                rng.next_int();
                writes += 1;
                if !(0..DATA_LIMIT).contains(&key) {
                    new_keys.insert(key);
                }
            } else {
                rng.next_int();
            }
        }
    }
    (writes, DATA_LIMIT as usize + new_keys.len())
}

pub(crate) fn run(params: &Params, variant: Variant) -> Outcome {
    let workers: u64 = params.get("e");
    let messages: u64 = params.get("m");
    let write_percentage: i32 = params.get("w");
    if workers == 0 {
        return Outcome::new(Default::default(), Err("-e must be >= 1".into()));
    }
    data_map();
    let result = Slot::new();
    let elapsed = run_system(variant, |rt: &Rt| {
        let (master_rt, report) = (rt.clone(), result.clone());
        rt.spawn(move |ctx, live| Master {
            me: ctx.address(),
            rt: master_rt,
            workers,
            messages,
            write_percentage,
            dictionary: None,
            ended: 0,
            report,
            _live: live,
        });
    });
    let (writes_expected, size_expected) = reference(workers, messages, write_percentage);
    let requests = workers * messages;
    let check = result
        .take("the Dictionary")
        .and_then(|(served, writes, size)| {
            if served == requests && writes == writes_expected && size == size_expected {
                Ok(format!(
                    "{served} requests; final size {size} ({writes} writes)"
                ))
            } else {
                Err(format!(
                    "{served} requests, {writes} writes, final size {size}; expected {requests}, {writes_expected}, {size_expected}"
                ))
            }
        });
    Outcome::new(elapsed, check)
}

#[cfg(test)]
mod tests {
    #[test]
    fn defaults_match_the_spec() {
        assert_eq!(super::reference(20, 10000, 10), (19848, 524287));
    }
}
