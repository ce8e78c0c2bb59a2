//! Sieve of Eratosthenes (Savina #25, `shared/savina.md` §3.25): a producer streams the
//! odd numbers below N into a chain of prime filters that grows while it runs. Each
//! filter stores up to M primes and drops a candidate that one of them divides; a
//! candidate that passes the last filter is a new prime, stored there or, when that
//! filter is full, in a new filter appended to the chain.
//!
//! A new filter is spawned at the top level, not as a child of the one before it: a
//! filter exits right after passing `Exit` on, and a child would be stopped with the
//! `Exit` (and maybe candidates) still in its mailbox.

use std::sync::mpsc::{self, Sender};
use std::time::Instant;

use odeon::{Actor, ActorRef, Context, Handler, Message};
use savina::{Outcome, Params};

use super::exited::finish_exited;
use crate::common;

/// The producer's start message: where to send the candidates.
struct Begin(ActorRef<Filter>);
impl Message for Begin {
    type Reply = ();
}

/// What flows down the chain: a candidate, then the end marker.
enum Stream {
    Candidate(i64),
    Exit,
}
impl Message for Stream {
    type Reply = ();
}

/// Sends 3, 5, …, < N, then `Exit`, and exits.
struct Producer {
    limit: i64,
}
impl Actor for Producer {}

impl Handler<Begin> for Producer {
    fn handle(&mut self, Begin(first): Begin, cx: &mut Context<Self>) {
        let mut candidate = 3;
        while candidate < self.limit {
            let _ = first.tell(Stream::Candidate(candidate));
            candidate += 2;
        }
        let _ = first.tell(Stream::Exit);
        cx.stop();
    }
}

/// What the last filter reports: the number of primes and of filters.
struct Report {
    primes: usize,
    filters: usize,
    in_last: usize,
}

/// One link of the chain.
struct Filter {
    /// Held until this actor exits: Savina's actors live until they exit, while odeon's
    /// local GC collects an actor with no references left, and that can race with the
    /// last message sent through the last reference (its sender's final message just
    /// before the sender exits and drops it), leaving the message unhandled.
    me: Option<ActorRef<Self>>,
    id: usize,
    capacity: usize,
    primes: Vec<i64>,
    next: Option<ActorRef<Filter>>,
    report: Sender<Report>,
}
impl Actor for Filter {
    fn started(&mut self, cx: &mut Context<Self>) {
        self.me = Some(cx.myself());
    }
}

impl Filter {
    fn new(id: usize, prime: i64, capacity: usize, report: Sender<Report>) -> Self {
        let mut primes = Vec::with_capacity(capacity);
        primes.push(prime);
        Self {
            me: None,
            id,
            capacity,
            primes,
            next: None,
            report,
        }
    }
}

impl Handler<Stream> for Filter {
    fn handle(&mut self, msg: Stream, cx: &mut Context<Self>) {
        match msg {
            Stream::Candidate(c) => {
                // Savina tests every stored prime, not only those up to √c.
                if self.primes.iter().any(|p| c % p == 0) {
                    return;
                }
                if let Some(next) = &self.next {
                    let _ = next.tell(Stream::Candidate(c));
                } else if self.primes.len() < self.capacity {
                    self.primes.push(c);
                } else {
                    let filter = Filter::new(self.id + 1, c, self.capacity, self.report.clone());
                    self.next = Some(cx.system().spawn(filter));
                }
            }
            Stream::Exit => {
                match &self.next {
                    Some(next) => {
                        let _ = next.tell(Stream::Exit);
                    }
                    None => {
                        let _ = self.report.send(Report {
                            primes: (self.id - 1) * self.capacity + self.primes.len(),
                            filters: self.id,
                            in_last: self.primes.len(),
                        });
                    }
                }
                cx.stop();
            }
        }
    }
}

/// The primes below `limit`, by a plain sieve (the reference).
fn count_primes(limit: usize) -> usize {
    let mut composite = vec![false; limit];
    let mut count = 0;
    for i in 2..limit {
        if !composite[i] {
            count += 1;
            let mut j = i * i;
            while j < limit {
                composite[j] = true;
                j += i;
            }
        }
    }
    count
}

pub(crate) fn run(params: &Params) -> Outcome {
    let limit: i64 = params.get("n");
    let capacity: usize = params.get("m");
    if limit < 3 || capacity < 1 {
        let e = format!("need N >= 3 and M >= 1 (N={limit}, M={capacity})");
        return Outcome::new(Default::default(), Err(e));
    }

    let start = Instant::now();
    let system = common::system(params);
    let (tx, rx) = mpsc::channel();
    let producer = system.spawn(Producer { limit });
    let first = system.spawn(Filter::new(1, 2, capacity, tx));
    let _ = producer.tell(Begin(first.clone()));
    let (elapsed, report) = finish_exited(system, &rx, 1, start);
    drop((producer, first));

    let check = report.and_then(|mut r| {
        let r = r.remove(0);
        let expected = count_primes(limit as usize);
        if r.primes != expected {
            return Err(format!("{} primes, expected {expected}", r.primes));
        }
        if (limit, capacity) == (100_000, 1000)
            && (r.primes, r.filters, r.in_last) != (9592, 10, 592)
        {
            return Err(format!(
                "{} primes in {} filters ({} in the last): expected 9592 in 10 (592)",
                r.primes, r.filters, r.in_last
            ));
        }
        Ok(format!(
            "{} primes below {limit} in {} filters",
            r.primes, r.filters
        ))
    });
    Outcome::new(elapsed, check)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_reference_sieve_counts_savinas_primes() {
        assert_eq!(super::count_primes(100_000), 9592);
        assert_eq!(super::count_primes(3), 1);
    }
}
