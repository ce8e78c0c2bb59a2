//! Concurrent Dictionary (Savina #9, `shared/savina.md` §3.9): W workers against one
//! dictionary actor, each with at most one request outstanding; 90 % reads.
//!
//! The reference protocol is request/reply with the requester's reference in the
//! request, so the dictionary answers with a `tell` to that reference; a worker is a
//! plain synchronous actor that issues its next request when the reply arrives.

use std::collections::HashMap;
use std::sync::{OnceLock, mpsc};

use odeon::{Actor, ActorRef, Context, Handler, Message};
use savina::rng::JavaRandom;
use savina::{Outcome, Params};

use super::{Exit, Latch, outcome, timed};

/// `Integer.MAX_VALUE / 4096`: keys are normalised into `0..DATA_LIMIT`.
const DATA_LIMIT: i32 = i32::MAX / 4096;

/// Savina's `DATA_MAP` (every key mapped to itself), built once, outside the timed
/// region, as Savina builds it while parsing arguments.
fn data_map() -> &'static HashMap<i32, i32> {
    static MAP: OnceLock<HashMap<i32, i32>> = OnceLock::new();
    MAP.get_or_init(|| (0..DATA_LIMIT).map(|k| (k, k)).collect())
}

/// Java's `Math.abs(key) % DATA_LIMIT` (`abs(MIN_VALUE)` stays negative, as in Java).
fn normalise(key: i32) -> i32 {
    key.wrapping_abs() % DATA_LIMIT
}

/// The request a worker's generator produces next: `Some((key, value))` for a write.
fn next_request(random: &mut JavaRandom, write_percent: i32) -> (i32, Option<i32>) {
    if random.next_int_bounded(100) < write_percent {
        let key = random.next_int();
        (normalise(key), Some(random.next_int()))
    } else {
        (normalise(random.next_int()), None)
    }
}

/// What the dictionary saw, reported when it exits.
struct Report {
    writes: u64,
    reads: u64,
    size: usize,
}

struct Master {
    workers: u32,
    per_worker: u32,
    write_percent: i32,
    ended: u32,
    /// Held until the master exits, as the reference's array (see `timed`).
    worker_refs: Vec<ActorRef<Worker>>,
    dictionary: Option<ActorRef<Dictionary>>,
    report: mpsc::Sender<Report>,
    exit: Exit,
}

struct Dictionary {
    map: HashMap<i32, i32>,
    writes: u64,
    reads: u64,
    report: mpsc::Sender<Report>,
    _exit: Exit,
}

struct Worker {
    master: ActorRef<Master>,
    dictionary: ActorRef<Dictionary>,
    random: JavaRandom,
    per_worker: u32,
    write_percent: i32,
    handled: u32,
    _exit: Exit,
}

impl Actor for Master {
    fn started(&mut self, cx: &mut Context<Self>) {
        // Top-level, as Savina's `system.actorOf`: a child would be stopped with the
        // master, before the dictionary handles its `EndWork`.
        let system = cx.system();
        let dictionary = system.spawn(Dictionary {
            map: data_map().clone(),
            writes: 0,
            reads: 0,
            report: self.report.clone(),
            _exit: self.exit.enter(),
        });
        for id in 0..self.workers {
            let seed = i64::from(id) + i64::from(self.per_worker) + i64::from(self.write_percent);
            let worker = system.spawn(Worker {
                master: cx.myself(),
                dictionary: dictionary.clone(),
                random: JavaRandom::new(seed),
                per_worker: self.per_worker,
                write_percent: self.write_percent,
                handled: 0,
                _exit: self.exit.enter(),
            });
            let _ = worker.tell(DoWork);
            self.worker_refs.push(worker);
        }
        if self.workers == 0 {
            let _ = dictionary.tell(EndWork);
            cx.stop();
        }
        self.dictionary = Some(dictionary);
    }
}
impl Actor for Dictionary {}
impl Actor for Worker {}

struct DoWork;
impl Message for DoWork {
    type Reply = ();
}

struct EndWork;
impl Message for EndWork {
    type Reply = ();
}

struct Write {
    sender: ActorRef<Worker>,
    key: i32,
    value: i32,
}
impl Message for Write {
    type Reply = ();
}

struct Read {
    sender: ActorRef<Worker>,
    key: i32,
}
impl Message for Read {
    type Reply = ();
}

/// The dictionary's answer (`None`: a key that was never written, which only the
/// negative key `abs(MIN_VALUE) % DATA_LIMIT` can be).
struct Reply(#[allow(dead_code)] Option<i32>);
impl Message for Reply {
    type Reply = ();
}

impl Worker {
    /// Savina's worker: every message counts; the first M trigger one request each.
    fn next(&mut self, cx: &mut Context<Self>) {
        self.handled += 1;
        if self.handled <= self.per_worker {
            let sender = cx.myself();
            match next_request(&mut self.random, self.write_percent) {
                (key, Some(value)) => {
                    let _ = self.dictionary.tell(Write { sender, key, value });
                }
                (key, None) => {
                    let _ = self.dictionary.tell(Read { sender, key });
                }
            }
        } else {
            let _ = self.master.tell(EndWork);
            cx.stop();
        }
    }
}

impl Handler<DoWork> for Worker {
    fn handle(&mut self, _: DoWork, cx: &mut Context<Self>) {
        self.next(cx);
    }
}

impl Handler<Reply> for Worker {
    fn handle(&mut self, _: Reply, cx: &mut Context<Self>) {
        self.next(cx);
    }
}

impl Handler<Write> for Dictionary {
    fn handle(&mut self, msg: Write, _: &mut Context<Self>) {
        self.writes += 1;
        self.map.insert(msg.key, msg.value);
        let _ = msg.sender.tell(Reply(Some(msg.value)));
    }
}

impl Handler<Read> for Dictionary {
    fn handle(&mut self, msg: Read, _: &mut Context<Self>) {
        self.reads += 1;
        let _ = msg.sender.tell(Reply(self.map.get(&msg.key).copied()));
    }
}

impl Handler<EndWork> for Dictionary {
    fn handle(&mut self, _: EndWork, cx: &mut Context<Self>) {
        let _ = self.report.send(Report {
            writes: self.writes,
            reads: self.reads,
            size: self.map.len(),
        });
        cx.stop();
    }
}

impl Handler<EndWork> for Master {
    fn handle(&mut self, _: EndWork, cx: &mut Context<Self>) {
        self.ended += 1;
        if self.ended == self.workers {
            if let Some(dictionary) = self.dictionary.take() {
                let _ = dictionary.tell(EndWork);
            }
            cx.stop();
        }
    }
}

/// The request streams replayed sequentially: (writes, reads, final size). The
/// streams do not depend on the replies, so this is exact for any parameters.
fn reference(workers: u32, per_worker: u32, write_percent: i32) -> (u64, u64, usize) {
    let (mut writes, mut reads) = (0, 0);
    let mut new_keys = std::collections::HashSet::new();
    for id in 0..workers {
        let seed = i64::from(id) + i64::from(per_worker) + i64::from(write_percent);
        let mut random = JavaRandom::new(seed);
        for _ in 0..per_worker {
            match next_request(&mut random, write_percent) {
                (key, Some(_)) => {
                    writes += 1;
                    if !(0..DATA_LIMIT).contains(&key) {
                        new_keys.insert(key);
                    }
                }
                (_, None) => reads += 1,
            }
        }
    }
    (writes, reads, DATA_LIMIT as usize + new_keys.len())
}

pub(crate) fn run(params: &Params) -> Outcome {
    let workers: u32 = params.get("e");
    let per_worker: u32 = params.get("m");
    let write_percent: i32 = params.get("w");
    data_map();
    let (tx, rx) = mpsc::channel();
    let elapsed = timed(params, |system, latch: &Latch| {
        // Kept alive by the refs its workers hold while the run lasts (as before).
        drop(system.spawn(Master {
            workers,
            per_worker,
            write_percent,
            ended: 0,
            worker_refs: Vec::new(),
            dictionary: None,
            report: tx,
            exit: latch.enter(),
        }));
    });
    outcome(elapsed, || {
        let got = rx.try_recv().map_err(|_| "the dictionary sent no report")?;
        let (writes, reads, size) = reference(workers, per_worker, write_percent);
        if (got.writes, got.reads, got.size) != (writes, reads, size) {
            return Err(format!(
                "writes/reads/size: got {}/{}/{}, expected {writes}/{reads}/{size}",
                got.writes, got.reads, got.size
            ));
        }
        if super::is_default(params) && (writes, size) != (19_848, 524_287) {
            return Err(format!(
                "{writes} writes, size {size}: not savina.md's 19848, 524287"
            ));
        }
        Ok(format!(
            "{} requests ({writes} writes); final size {size}",
            writes + reads
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `shared/savina.md` §3.9: 19848 writes, 180152 reads, final size 524287.
    #[test]
    fn the_default_request_stream_matches_savina() {
        assert_eq!(reference(20, 10_000, 10), (19_848, 180_152, 524_287));
        assert_eq!(normalise(i32::MIN), i32::MIN % DATA_LIMIT);
    }
}
