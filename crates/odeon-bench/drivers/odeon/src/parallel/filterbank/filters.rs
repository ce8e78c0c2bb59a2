//! The filters of Filter Bank's chains (`shared/savina.md` §3.23, steps 5–7), as plain
//! state machines: the actors of `filterbank.rs` wrap them, and the sequential reference
//! runs them directly.

use std::sync::Arc;

/// A filter of the chain: takes one value, emits one or none.
pub(super) trait Filter: Send + 'static {
    fn push(&mut self, v: f64) -> Option<f64>;
}

/// Delay(L): emits the value received L inputs ago (zeros at first).
pub(super) struct Delay {
    buf: Vec<f64>,
    pos: usize,
}

impl Delay {
    pub(super) fn new(len: usize) -> Self {
        Self {
            buf: vec![0.0; len],
            pos: 0,
        }
    }
}

impl Filter for Delay {
    fn push(&mut self, v: f64) -> Option<f64> {
        let out = std::mem::replace(&mut self.buf[self.pos], v);
        self.pos = (self.pos + 1) % self.buf.len();
        Some(out)
    }
}

/// FIR(P, coef): silent for P−1 inputs, then `Σ buf[i]·coef[P−1−i]` over buffer *slots*.
pub(super) struct Fir {
    coef: Arc<[f64]>,
    buf: Vec<f64>,
    pos: usize,
    full: bool,
}

impl Fir {
    pub(super) fn new(coef: Arc<[f64]>) -> Self {
        Self {
            buf: vec![0.0; coef.len()],
            coef,
            pos: 0,
            full: false,
        }
    }
}

impl Filter for Fir {
    fn push(&mut self, v: f64) -> Option<f64> {
        self.buf[self.pos] = v;
        self.pos += 1;
        if self.pos == self.buf.len() {
            self.full = true;
            self.pos = 0;
        }
        self.full.then(|| {
            let mut sum = 0.0;
            for (x, c) in self.buf.iter().zip(self.coef.iter().rev()) {
                sum += x * c;
            }
            sum
        })
    }
}

/// Sample(R): passes the 1st, (R+1)th, … inputs and 0.0 for the others.
pub(super) struct Sample {
    pub(super) rate: usize,
    pub(super) received: usize,
}

impl Filter for Sample {
    fn push(&mut self, v: f64) -> Option<f64> {
        let out = if self.received == 0 { v } else { 0.0 };
        self.received = (self.received + 1) % self.rate;
        Some(out)
    }
}

/// The sums the Sink must receive, computed sequentially with the same filters.
pub(super) fn reference(
    columns: usize,
    simulations: usize,
    h: &[Arc<[f64]>],
    f: &[Arc<[f64]>],
) -> Vec<f64> {
    let outputs: Vec<Vec<f64>> = h
        .iter()
        .zip(f)
        .map(|(h, f)| {
            let mut chain: [Box<dyn Filter>; 5] = [
                Box::new(Delay::new(columns - 1)),
                Box::new(Fir::new(h.clone())),
                Box::new(Sample {
                    rate: columns,
                    received: 0,
                }),
                Box::new(Delay::new(columns - 1)),
                Box::new(Fir::new(f.clone())),
            ];
            (0..simulations)
                .filter_map(|s| {
                    let mut v = Some((s % 1000) as f64);
                    for stage in &mut chain {
                        v = v.and_then(|v| stage.push(v));
                    }
                    v
                })
                .collect()
        })
        .collect();
    let len = outputs.iter().map(Vec::len).min().unwrap_or(0);
    (0..len)
        .map(|i| outputs.iter().fold(0.0, |acc, o| acc + o[i]))
        .collect()
}
