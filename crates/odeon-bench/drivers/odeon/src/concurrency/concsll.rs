//! Concurrent Sorted Linked List (Savina #10, `shared/savina.md` §3.10): W workers
//! against one actor that owns a sorted singly linked list, so every operation costs a
//! linear scan that grows as the run goes on.
//!
//! The master/worker structure is Concurrent Dictionary's: requests carry the
//! requester's reference and the list actor answers with a `tell`.

use std::sync::mpsc;

use odeon::{Actor, ActorRef, Context, Handler, Message};
use savina::rng::PseudoRandom;
use savina::{Outcome, Params};

use super::{Exit, Latch, outcome, timed};

/// A singly linked list of boxed nodes, as the reference's: the scans chase pointers,
/// which is the cost the benchmark is about (a `Vec` would hide it).
#[derive(Default)]
struct SortedList {
    head: Option<Box<Node>>,
}

struct Node {
    value: i32,
    next: Option<Box<Node>>,
}

impl SortedList {
    /// Inserts before the first strictly greater value: equal values keep their
    /// insertion order.
    fn insert(&mut self, value: i32) {
        let mut cursor = &mut self.head;
        while cursor.as_ref().is_some_and(|node| node.value <= value) {
            if let Some(node) = cursor {
                cursor = &mut node.next;
            }
        }
        let next = cursor.take();
        *cursor = Some(Box::new(Node { value, next }));
    }

    fn iter(&self) -> impl Iterator<Item = i32> + '_ {
        std::iter::successors(self.head.as_deref(), |node| node.next.as_deref())
            .map(|node| node.value)
    }

    /// A linear scan that stops only on a match, as the reference's.
    fn contains(&self, value: i32) -> bool {
        self.iter().any(|v| v == value)
    }

    /// Counted by traversal, O(n), as the reference's.
    fn size(&self) -> usize {
        self.iter().count()
    }
}

impl Drop for SortedList {
    /// Unlinks node by node: the default recursive drop could overflow a worker's
    /// stack on a long list.
    fn drop(&mut self) {
        let mut next = self.head.take();
        while let Some(mut node) = next {
            next = node.next.take();
        }
    }
}

/// A worker's next request, drawn from its generator.
#[derive(Clone, Copy)]
enum Request {
    Size,
    Write(i32),
    Contains(i32),
}

fn next_request(random: &mut PseudoRandom, write_percent: i32, size_percent: i32) -> Request {
    let r = random.next_int_bounded(100);
    if r < size_percent {
        Request::Size
    } else if r < size_percent + write_percent {
        Request::Write(random.next_int())
    } else {
        Request::Contains(random.next_int())
    }
}

/// What the list actor saw, reported when it exits: (writes, sizes, contains, final
/// size, sorted).
type Report = (u64, u64, u64, usize, bool);

struct Config {
    workers: u32,
    per_worker: u32,
    write_percent: i32,
    size_percent: i32,
}

impl Config {
    fn seed(&self, id: u32) -> i64 {
        i64::from(id)
            + i64::from(self.per_worker)
            + i64::from(self.write_percent)
            + i64::from(self.size_percent)
    }
}

struct Master {
    config: Config,
    ended: u32,
    /// Held until the master exits, as the reference's array (see `timed`).
    worker_refs: Vec<ActorRef<Worker>>,
    list: Option<ActorRef<ListServer>>,
    report: mpsc::Sender<Report>,
    exit: Exit,
}

struct ListServer {
    list: SortedList,
    counts: [u64; 3],
    report: mpsc::Sender<Report>,
    _exit: Exit,
}

struct Worker {
    master: ActorRef<Master>,
    list: ActorRef<ListServer>,
    random: PseudoRandom,
    per_worker: u32,
    write_percent: i32,
    size_percent: i32,
    handled: u32,
    _exit: Exit,
}

impl Actor for Master {
    fn started(&mut self, cx: &mut Context<Self>) {
        // Top-level, as Savina's `system.actorOf`: a child would be stopped with the
        // master, before the list handles its `EndWork`.
        let system = cx.system();
        let list = system.spawn(ListServer {
            list: SortedList::default(),
            counts: [0; 3],
            report: self.report.clone(),
            _exit: self.exit.enter(),
        });
        for id in 0..self.config.workers {
            let worker = system.spawn(Worker {
                master: cx.myself(),
                list: list.clone(),
                random: PseudoRandom::new(self.config.seed(id)),
                per_worker: self.config.per_worker,
                write_percent: self.config.write_percent,
                size_percent: self.config.size_percent,
                handled: 0,
                _exit: self.exit.enter(),
            });
            let _ = worker.tell(DoWork);
            self.worker_refs.push(worker);
        }
        if self.config.workers == 0 {
            let _ = list.tell(EndWork);
            cx.stop();
        }
        self.list = Some(list);
    }
}
impl Actor for ListServer {}
impl Actor for Worker {}

struct DoWork;
impl Message for DoWork {
    type Reply = ();
}

struct EndWork;
impl Message for EndWork {
    type Reply = ();
}

/// A request and who to answer.
struct Op {
    sender: ActorRef<Worker>,
    request: Request,
}
impl Message for Op {
    type Reply = ();
}

/// The list's answer: the value written, 1/0 for contains, or the size.
struct Reply(#[allow(dead_code)] i64);
impl Message for Reply {
    type Reply = ();
}

impl Worker {
    /// Every message counts; the first M trigger one request each.
    fn next(&mut self, cx: &mut Context<Self>) {
        self.handled += 1;
        if self.handled <= self.per_worker {
            let request = next_request(&mut self.random, self.write_percent, self.size_percent);
            let sender = cx.myself();
            let _ = self.list.tell(Op { sender, request });
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

impl Handler<Op> for ListServer {
    fn handle(&mut self, msg: Op, _: &mut Context<Self>) {
        let answer = match msg.request {
            Request::Write(value) => {
                self.counts[0] += 1;
                self.list.insert(value);
                i64::from(value)
            }
            Request::Size => {
                self.counts[1] += 1;
                self.list.size() as i64
            }
            Request::Contains(value) => {
                self.counts[2] += 1;
                i64::from(self.list.contains(value))
            }
        };
        let _ = msg.sender.tell(Reply(answer));
    }
}

impl Handler<EndWork> for ListServer {
    fn handle(&mut self, _: EndWork, cx: &mut Context<Self>) {
        let sorted = self
            .list
            .iter()
            .zip(self.list.iter().skip(1))
            .all(|(a, b)| a <= b);
        let [writes, sizes, contains] = self.counts;
        let _ = self
            .report
            .send((writes, sizes, contains, self.list.size(), sorted));
        cx.stop();
    }
}

impl Handler<EndWork> for Master {
    fn handle(&mut self, _: EndWork, cx: &mut Context<Self>) {
        self.ended += 1;
        if self.ended == self.config.workers {
            if let Some(list) = self.list.take() {
                let _ = list.tell(EndWork);
            }
            cx.stop();
        }
    }
}

/// The request streams replayed sequentially: (writes, sizes, contains). They do not
/// depend on the replies, so this is exact for any parameters.
fn reference(config: &Config) -> (u64, u64, u64) {
    let mut counts = (0, 0, 0);
    for id in 0..config.workers {
        let mut random = PseudoRandom::new(config.seed(id));
        for _ in 0..config.per_worker {
            match next_request(&mut random, config.write_percent, config.size_percent) {
                Request::Write(_) => counts.0 += 1,
                Request::Size => counts.1 += 1,
                Request::Contains(_) => counts.2 += 1,
            }
        }
    }
    counts
}

pub(crate) fn run(params: &Params) -> Outcome {
    let config = Config {
        workers: params.get("e"),
        per_worker: params.get("m"),
        write_percent: params.get("w"),
        size_percent: params.get("s"),
    };
    // Savina's own argument checks.
    if config.write_percent >= 50 || 2 * config.write_percent + config.size_percent >= 100 {
        return Outcome::new(
            std::time::Duration::ZERO,
            Err("Savina requires -w < 50 and 2*w + s < 100".into()),
        );
    }
    let expected = reference(&config);
    let (tx, rx) = mpsc::channel();
    let elapsed = timed(params, |system, latch: &Latch| {
        // Kept alive by the refs its workers hold while the run lasts (as before).
        drop(system.spawn(Master {
            config,
            ended: 0,
            worker_refs: Vec::new(),
            list: None,
            report: tx,
            exit: latch.enter(),
        }));
    });
    outcome(elapsed, || {
        let (writes, sizes, contains, size, sorted) =
            rx.try_recv().map_err(|_| "the list sent no report")?;
        if !sorted {
            return Err("the final list is not sorted".into());
        }
        if (writes, sizes, contains) != expected || size as u64 != writes {
            return Err(format!(
                "writes/sizes/contains/final size: got {writes}/{sizes}/{contains}/{size}, \
                 expected {:?} and size = writes",
                expected
            ));
        }
        if super::is_default(params) && size != 16_126 {
            return Err(format!("final size {size}, savina.md says 16126"));
        }
        Ok(format!(
            "{} requests ({writes} writes, {sizes} sizes); final size {size}, sorted",
            writes + sizes + contains
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_keeps_order_and_duplicates() {
        let mut list = SortedList::default();
        for v in [5, 1, 9, 5, 0, 9] {
            list.insert(v);
        }
        assert_eq!(list.iter().collect::<Vec<_>>(), [0, 1, 5, 5, 9, 9]);
        assert!(list.contains(9) && !list.contains(4));
        assert_eq!(list.size(), 6);
    }

    /// `shared/savina.md` §3.10: 16126 writes, 10 sizes, 143864 contains.
    #[test]
    fn the_default_request_stream_matches_savina() {
        let config = Config {
            workers: 20,
            per_worker: 8000,
            write_percent: 10,
            size_percent: 1,
        };
        assert_eq!(reference(&config), (16_126, 10, 143_864));
    }
}
