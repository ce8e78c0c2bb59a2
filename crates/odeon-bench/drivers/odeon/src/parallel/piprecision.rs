//! Precise Pi Computation (Savina #29, `shared/savina.md` §3.29): a master hands out
//! the terms of the Bailey–Borwein–Plouffe series to W workers, one at a time per
//! worker, and adds up the results until a term is within the tolerance 10^−PRECISION.
//!
//! Savina computes with Java's `BigDecimal` at scale PRECISION and rounds each division
//! HALF_EVEN. Here a number x is the big integer x·10^PRECISION, and [`div_half_even`]
//! rounds each quotient the same way, so every term is bit-for-bit Java's. The divisor
//! 16^k is divided by in full, as `BigDecimal` does, not shifted.

use std::cmp::Ordering;
use std::sync::mpsc::{self, Sender};
use std::time::Instant;

use num_bigint::{BigInt, Sign};
use odeon::{Actor, ActorRef, Context, Handler, Message};
use savina::{Outcome, Params};

use super::exited::finish_exited;
use crate::common;

/// Starts the master.
struct Start;
/// Compute term `term` at `scale`.
struct Work {
    scale: u32,
    term: u32,
}
/// A term, from worker `worker`.
struct TermResult {
    value: BigInt,
    worker: usize,
}
/// Master → worker: exit; worker → master: the echo.
struct Stop;

macro_rules! messages {
    ($($m:ty),*) => { $(impl Message for $m { type Reply = (); })* };
}
messages!(Start, Work, TermResult, Stop);

/// `n / d` rounded half to even (`d > 0`), as `BigDecimal.divide(…, HALF_EVEN)`.
fn div_half_even(n: &BigInt, d: &BigInt) -> BigInt {
    let q = n / d; // truncated toward zero
    let r = n - &q * d;
    let away = match (r.magnitude() << 1u8).cmp(d.magnitude()) {
        Ordering::Less => false,
        Ordering::Greater => true,
        Ordering::Equal => q.bit(0),
    };
    match (away, n.sign()) {
        (false, _) => q,
        (true, Sign::Minus) => q - 1,
        (true, _) => q + 1,
    }
}

/// BBP term k at `scale` (as x·10^scale): (4/(8k+1) − 2/(8k+4) − 1/(8k+5) − 1/(8k+6))
/// / 16^k, each division rounded HALF_EVEN to `scale` digits.
fn bbp_term(k: u32, unit: &BigInt) -> BigInt {
    let eight_k = 8 * u64::from(k);
    let part = |numerator: u8, offset: u64| {
        div_half_even(&(unit * numerator), &BigInt::from(eight_k + offset))
    };
    let sum = part(4, 1) - part(2, 4) - part(1, 5) - part(1, 6);
    div_half_even(&sum, &BigInt::from(16).pow(k))
}

struct Master {
    workers: usize,
    scale: u32,
    worker_refs: Vec<ActorRef<Worker>>,
    sum: BigInt,
    /// 10^−scale, that is 1 in our representation.
    tolerance: BigInt,
    stopped_issuing: bool,
    next_term: u32,
    requested: usize,
    received: usize,
    echoes: usize,
    report: Sender<(BigInt, usize)>,
}

impl Actor for Master {
    fn started(&mut self, cx: &mut Context<Self>) {
        let master = cx.myself();
        self.worker_refs = (0..self.workers)
            .map(|id| {
                cx.spawn(Worker {
                    id,
                    master: master.clone(),
                    unit: None,
                })
            })
            .collect();
    }
}

impl Master {
    fn issue(&mut self, worker: usize) {
        let (scale, term) = (self.scale, self.next_term);
        let _ = self.worker_refs[worker].tell(Work { scale, term });
        self.next_term += 1;
        self.requested += 1;
    }
}

impl Handler<Start> for Master {
    fn handle(&mut self, _: Start, _: &mut Context<Self>) {
        let initial = (self.scale as usize).min(10 * self.workers);
        for t in 0..initial {
            self.issue(t % self.workers);
        }
    }
}

impl Handler<TermResult> for Master {
    fn handle(&mut self, r: TermResult, _: &mut Context<Self>) {
        self.received += 1;
        if r.value <= self.tolerance {
            self.stopped_issuing = true;
        }
        self.sum += r.value;
        if !self.stopped_issuing {
            self.issue(r.worker);
        }
        if self.received == self.requested {
            for w in &self.worker_refs {
                let _ = w.tell(Stop);
            }
        }
    }
}

impl Handler<Stop> for Master {
    fn handle(&mut self, _: Stop, cx: &mut Context<Self>) {
        self.echoes += 1;
        if self.echoes == self.workers {
            let sum = std::mem::take(&mut self.sum);
            let _ = self.report.send((sum, self.received));
            cx.stop();
        }
    }
}

struct Worker {
    id: usize,
    master: ActorRef<Master>,
    /// 10^scale for the scale last asked for (the same every time, in practice).
    unit: Option<(u32, BigInt)>,
}
impl Actor for Worker {}

impl Handler<Work> for Worker {
    fn handle(&mut self, w: Work, _: &mut Context<Self>) {
        let unit = match &self.unit {
            Some((scale, unit)) if *scale == w.scale => unit,
            _ => &self.unit.insert((w.scale, BigInt::from(10).pow(w.scale))).1,
        };
        let value = bbp_term(w.term, unit);
        let _ = self.master.tell(TermResult {
            value,
            worker: self.id,
        });
    }
}

impl Handler<Stop> for Worker {
    fn handle(&mut self, _: Stop, cx: &mut Context<Self>) {
        let _ = self.master.tell(Stop);
        cx.stop();
    }
}

/// π·10^digits, truncated toward zero up to a few units, by Machin's formula
/// π = 16·atan(1/5) − 4·atan(1/239) (the independent reference).
fn machin_pi(digits: u32) -> BigInt {
    let unit = BigInt::from(10).pow(digits);
    let atan_inv = |x: u32| {
        let x2 = BigInt::from(x * x);
        let mut power = &unit / x; // unit / x^(2n+1)
        let mut sum = power.clone();
        let mut n = 1u32;
        while power > BigInt::ZERO {
            power /= &x2;
            let term = &power / (2 * n + 1);
            if n % 2 == 1 {
                sum -= term;
            } else {
                sum += term;
            }
            n += 1;
        }
        sum
    };
    atan_inv(5) * 16u8 - atan_inv(239) * 4u8
}

pub(crate) fn run(params: &Params) -> Outcome {
    let workers: usize = params.get("w");
    let scale: u32 = params.get("p");
    if workers < 1 || scale < 1 {
        let e = format!("need NUM_WORKERS >= 1 and PRECISION >= 1 (w={workers}, p={scale})");
        return Outcome::new(Default::default(), Err(e));
    }

    let start = Instant::now();
    let system = common::system(params);
    let (tx, rx) = mpsc::channel();
    let master = system.spawn(Master {
        workers,
        scale,
        worker_refs: Vec::new(),
        sum: BigInt::ZERO,
        tolerance: BigInt::from(1),
        stopped_issuing: false,
        next_term: 0,
        requested: 0,
        received: 0,
        echoes: 0,
        report: tx,
    });
    let _ = master.tell(Start);
    let (elapsed, report) = finish_exited(system, &rx, 1, start);
    drop(master);

    let check = report.and_then(|mut r| {
        let (sum, terms) = r.remove(0);
        validate(&sum, terms, scale, workers)
    });
    Outcome::new(elapsed, check)
}

/// Within the rounding error of the terms used, and π to 4998 decimals with at least
/// 4147 terms at the defaults.
fn validate(sum: &BigInt, terms: usize, scale: u32, workers: usize) -> Result<String, String> {
    const GUARD: u32 = 10;
    let pi = machin_pi(scale + GUARD);
    let guard = BigInt::from(10).pow(GUARD);
    // Each nonzero term is off by at most half a unit, term 0 by at most 2.5 (its four
    // roundings are not divided by 16^k); the reference by a few units of its own.
    let bound = (BigInt::from(terms) + 6) * &guard / 2 + 100;
    let error = (sum * &guard - &pi).magnitude().clone();
    if BigInt::from(error.clone()) > bound {
        return Err(format!(
            "off from π by {error} units of 10^-{}, more than the rounding of {terms} terms",
            scale + GUARD
        ));
    }
    if (workers, scale) == (20, 5000) {
        let truncate = |x: &BigInt, digits: u32| x / BigInt::from(10).pow(digits);
        if truncate(sum, 2) != truncate(&pi, GUARD + 2) || terms < 4147 {
            return Err(format!(
                "{terms} terms; expected π to 4998 decimals with >= 4147 terms (savina.md §3.29)"
            ));
        }
        return Ok(format!("π to 4998 decimals, {terms} terms"));
    }
    Ok(format!("π to scale {scale} within rounding, {terms} terms"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_is_half_even() {
        let q = |n: i64, d: i64| div_half_even(&BigInt::from(n), &BigInt::from(d));
        assert_eq!(q(5, 2), BigInt::from(2));
        assert_eq!(q(7, 2), BigInt::from(4));
        assert_eq!(q(-5, 2), BigInt::from(-2));
        assert_eq!(q(-7, 2), BigInt::from(-4));
        assert_eq!(q(8, 3), BigInt::from(3));
        assert_eq!(q(-8, 3), BigInt::from(-3));
        assert_eq!(q(7, 3), BigInt::from(2));
    }

    #[test]
    fn the_first_term_within_tolerance_is_4146() {
        let unit = BigInt::from(10).pow(5000);
        assert!(bbp_term(4145, &unit) > BigInt::from(1));
        assert!(bbp_term(4146, &unit) <= BigInt::from(1));
    }

    #[test]
    fn machin_and_bbp_agree_on_pi() {
        let unit = BigInt::from(10).pow(60);
        let bbp: BigInt = (0..60).map(|k| bbp_term(k, &unit)).sum();
        let machin = machin_pi(60);
        assert!((bbp - machin).magnitude() < &num_bigint::BigUint::from(100u8));
        assert!(machin_pi(20).to_string().starts_with("3141592653589793238"));
    }
}
