//! What the benchmark targets share: the Counting actor and the SPSC floor.
#![allow(
    dead_code,
    unreachable_pub,
    missing_docs,
    missing_debug_implementations
)]

use std::hint::black_box;
use std::sync::Arc;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_queue::ArrayQueue;
use crossbeam_utils::Backoff;
use odeon::{Actor, ActorRef, Context, Handler, Message};

/// Capacity of the baseline SPSC ring.
pub const RING: usize = 1024;

/// Counts `Inc`s and signals `done` every `every` messages.
pub struct Counter {
    left: u64,
    every: u64,
    sum: u64,
    done: mpsc::Sender<u64>,
}

impl Counter {
    pub fn new(every: u64) -> (Self, mpsc::Receiver<u64>) {
        let (done, rx) = mpsc::channel();
        let c = Counter {
            left: every,
            every,
            sum: 0,
            done,
        };
        (c, rx)
    }

    pub fn count(&mut self, v: u64) {
        self.sum = self.sum.wrapping_add(v);
        self.left -= 1;
        if self.left == 0 {
            self.left = self.every;
            let _ = self.done.send(self.sum);
        }
    }
}

impl Actor for Counter {}

pub struct Inc(pub u64);
impl Message for Inc {
    type Reply = ();
}

impl Handler<Inc> for Counter {
    fn handle(&mut self, msg: Inc, _: &mut Context<Self>) {
        self.count(msg.0);
    }
}

/// The floor: `n` items through a bounded lock-free ring between two spinning threads.
pub fn spsc_ring<T: Send + 'static>(
    n: u64,
    make: impl Fn(u64) -> T,
    read: fn(T) -> u64,
) -> Duration {
    let q = Arc::new(ArrayQueue::<T>::new(RING));
    let start = Instant::now();
    let consumer = {
        let q = q.clone();
        thread::spawn(move || {
            let (mut got, mut sum) = (0u64, 0u64);
            let backoff = Backoff::new();
            while got < n {
                match q.pop() {
                    Some(v) => {
                        sum = sum.wrapping_add(read(v));
                        got += 1;
                        backoff.reset();
                    }
                    None => backoff.snooze(),
                }
            }
            sum
        })
    };
    let backoff = Backoff::new();
    for i in 0..n {
        let mut v = make(i);
        while let Err(back) = q.push(v) {
            v = back;
            backoff.snooze();
        }
        backoff.reset();
    }
    black_box(consumer.join().unwrap());
    start.elapsed()
}

/// Savina's Counting from the calling thread: `iters` rounds of `n` tells into
/// `counter`, each round ending when the counter reports it has seen all `n`.
pub fn counting(
    counter: &ActorRef<Counter>,
    done: &mpsc::Receiver<u64>,
    n: u64,
    iters: u64,
) -> Duration {
    let start = Instant::now();
    for _ in 0..iters {
        for i in 0..n {
            let _ = counter.tell(Inc(i));
        }
        black_box(done.recv().unwrap());
    }
    start.elapsed()
}
