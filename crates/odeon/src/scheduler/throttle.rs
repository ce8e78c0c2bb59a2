//! How many workers take shared work: measured, not assumed.
//!
//! A second worker pays when handlers do real work. When they do almost none (Savina's
//! Big: a random number and a send), most messages go to an actor whose cell was last
//! touched on the other core, the cell's cache lines move with it, and two workers
//! handle fewer messages per second than one (Big: 175–181 ms on one worker against
//! 195–474 ms on two, `docs/bench/linger-2026-11-25.md`). How much the move costs
//! depends on where the host puts the cores, so no fixed rule can tell in advance.
//!
//! So the monitor measures. While the pool is busy with message-bound work it tries,
//! from time to time, one worker fewer (or, once reduced, one more) for a short probe,
//! and keeps the setting that handled more messages per unit of time. This is hill
//! climbing on the worker count, as the CLR 4 thread pool does on its thread count
//! (Hellerstein, Morrison and Eilebrecht, "Applying control theory in the real world:
//! experience with building a controller for the .NET thread pool", SIGMETRICS PER
//! 37(3), 2010).
//!
//! A *benched* worker (index ≥ `active`) hands its queued tasks to the injector and
//! parks outside the idle list, so it is neither woken for new work nor searching.
//! Fairness does not depend on the throttle: a stuck worker brings every worker back
//! at once (see `monitor.rs`), and going idle resets the count to all workers.

/// Probe a smaller count only when the pool handles at least this many messages per
/// millisecond per active worker, that is when an average handler takes well under a
/// microsecond. Below that, handlers do real work and parallelism is what pays.
pub(super) const MIN_RATE_PER_WORKER_MS: f64 = 1_000.0;

/// Busy ticks before the first probe: as soon as a baseline exists. Until it is over,
/// work that runs faster on fewer workers (Big) pays the slower count; the early
/// abort below keeps a first probe cheap for work that needs every worker. Against 10
/// ticks, side by side (2026-11-25, 18–48 interleaved runs each): Big 180.7 → 179.7
/// ms, ForkJoin throughput 25.3 → 22.8, Chameneos 29.1 → 27.0; Logistic Map, Banking
/// and Philosophers within their spread; Counting is bimodal in both builds.
const FIRST_PROBE_AFTER: u32 = BASELINE_TICKS as u32;

/// Busy ticks between later probes: the machine and the workload change. Each probe
/// that is undone doubles the wait, up to `REPROBE_MAX`; one that wins resets it.
const REPROBE_AFTER: u32 = 40;

/// Longest wait between two probes: about 1.3 s of busy ticks at the default interval.
const REPROBE_MAX: u32 = 640;

/// Ticks at the baseline averaged before a probe.
const BASELINE_TICKS: usize = 3;

/// Ticks of a probe: the first is the transition and is not counted.
const PROBE_TICKS: u32 = 3;

/// A probe wins only if it beats the baseline by this fraction (no flapping on noise).
const MARGIN: f64 = 0.05;

/// A probe whose first counted tick falls this fraction below the baseline is undone
/// at once.
const ABORT_BELOW: f64 = 0.2;

/// The throttle's decision for this tick.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Decision {
    /// Leave the active count as it is.
    Keep,
    /// Set the active count to this.
    Set(usize),
}

#[derive(Clone, Copy, Debug)]
enum State {
    Steady,
    Probing {
        from: usize,
        baseline: f64,
        ticks: u32,
        sum: f64,
    },
}

/// The hill-climbing state. Fed once per monitor tick with the pool's message count.
#[derive(Debug)]
pub(super) struct Throttle {
    base: usize,
    active: usize,
    state: State,
    busy_ticks: u32,
    probed_once: bool,
    /// Messages per millisecond of the last few ticks at the current count.
    recent: [f64; BASELINE_TICKS],
    recent_len: usize,
    last_total: Option<u64>,
    /// Whether the last probe from a reduced count went up (alternates up and down).
    last_probe_up: bool,
    /// Busy ticks before the next probe (after the first one).
    reprobe_after: u32,
}

impl Throttle {
    pub(super) fn new(base: usize) -> Self {
        Self {
            base,
            active: base,
            state: State::Steady,
            busy_ticks: 0,
            probed_once: false,
            recent: [0.0; BASELINE_TICKS],
            recent_len: 0,
            last_total: None,
            last_probe_up: false,
            reprobe_after: REPROBE_AFTER,
        }
    }

    #[cfg(test)]
    pub(super) fn active(&self) -> usize {
        self.active
    }

    /// Back to every worker and a fresh start (the pool went idle, or a worker is stuck).
    /// The caller sets every worker active itself (`monitor.rs`), whatever the throttle
    /// last decided: a test may have benched workers behind its back.
    pub(super) fn reset(&mut self) {
        *self = Self::new(self.base);
    }

    /// One monitor tick while some worker is busy: `total` is the pool's count of
    /// messages handled so far, `elapsed_ms` the time since the previous tick.
    pub(super) fn tick(&mut self, total: u64, elapsed_ms: f64) -> Decision {
        let Some(last) = self.last_total.replace(total) else {
            return Decision::Keep;
        };
        if self.base < 2 || elapsed_ms <= 0.0 {
            return Decision::Keep;
        }
        let rate = total.saturating_sub(last) as f64 / elapsed_ms;
        match self.state {
            State::Steady => self.steady(rate),
            State::Probing {
                from,
                baseline,
                ticks,
                sum,
            } => {
                let ticks = ticks + 1;
                // The first tick of a probe mixes both counts: not counted.
                let sum = if ticks == 1 { sum } else { sum + rate };
                // A probe that is clearly losing after its first counted tick ends
                // there: it costs the workloads that need every worker half as much.
                let losing = ticks == 2 && rate < baseline * (1.0 - ABORT_BELOW);
                if ticks < PROBE_TICKS && !losing {
                    self.state = State::Probing {
                        from,
                        baseline,
                        ticks,
                        sum,
                    };
                    return Decision::Keep;
                }
                let probe = sum / f64::from(ticks - 1);
                self.state = State::Steady;
                self.busy_ticks = 0;
                self.recent_len = 0;
                if probe > baseline * (1.0 + MARGIN) {
                    self.reprobe_after = REPROBE_AFTER;
                    Decision::Keep
                } else {
                    // Settled: look again, but less often each time it does not pay.
                    self.reprobe_after = (self.reprobe_after * 2).min(REPROBE_MAX);
                    self.active = from;
                    Decision::Set(from)
                }
            }
        }
    }

    fn steady(&mut self, rate: f64) -> Decision {
        self.busy_ticks += 1;
        self.recent[self.recent_len % BASELINE_TICKS] = rate;
        self.recent_len += 1;
        if self.recent_len < BASELINE_TICKS {
            return Decision::Keep;
        }
        let baseline = self.recent.iter().sum::<f64>() / BASELINE_TICKS as f64;
        if baseline < MIN_RATE_PER_WORKER_MS * self.active as f64 {
            // Not message-bound (or not any more): every worker, and look again later.
            self.busy_ticks = 0;
            if self.active == self.base {
                return Decision::Keep;
            }
            self.active = self.base;
            return Decision::Set(self.base);
        }
        let due = if self.probed_once {
            self.reprobe_after
        } else {
            FIRST_PROBE_AFTER
        };
        if self.busy_ticks < due {
            return Decision::Keep;
        }
        // From every worker, try one fewer; from fewer, alternate up and down.
        let up = self.active < self.base && (self.active == 1 || !self.last_probe_up);
        let to = if up { self.active + 1 } else { self.active - 1 };
        self.probed_once = true;
        self.last_probe_up = up;
        self.state = State::Probing {
            from: self.active,
            baseline,
            ticks: 0,
            sum: 0.0,
        };
        self.active = to;
        Decision::Set(to)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds ticks of 1 ms whose message rate depends on the active count.
    fn run(
        t: &mut Throttle,
        total: &mut u64,
        ticks: u32,
        rate: impl Fn(usize) -> u64,
    ) -> Vec<usize> {
        let mut seen = Vec::new();
        for _ in 0..ticks {
            *total += rate(t.active());
            if let Decision::Set(n) = t.tick(*total, 1.0) {
                assert_eq!(n, t.active(), "a decision is the new active count");
            }
            seen.push(t.active());
        }
        seen
    }

    #[test]
    fn message_bound_work_that_is_faster_on_fewer_workers_settles_there() {
        let mut t = Throttle::new(2);
        let mut total = 0;
        // Two workers: 20k msgs/ms; one: 27k (Big's shape).
        let seen = run(&mut t, &mut total, 200, |a| {
            if a == 1 { 27_000 } else { 20_000 }
        });
        // The first tick only starts the count; the probe follows the baseline.
        let first = FIRST_PROBE_AFTER as usize;
        assert!(seen[..first].iter().all(|&a| a == 2), "{seen:?}");
        assert_eq!(
            seen[first], 1,
            "the first probe comes once a baseline exists"
        );
        let late = &seen[100..];
        let reduced = late.iter().filter(|&&a| a == 1).count();
        assert!(
            reduced >= 90,
            "the faster count is kept: {reduced} of 100 late ticks"
        );
        // It keeps looking: later probes of two workers happen and are undone.
        assert!(late.contains(&2));
    }

    #[test]
    fn message_bound_work_that_scales_keeps_every_worker() {
        let mut t = Throttle::new(2);
        let mut total = 0;
        // ForkJoin-throughput shape: two workers 15% faster.
        let seen = run(&mut t, &mut total, 200, |a| {
            if a == 1 { 28_000 } else { 33_000 }
        });
        assert!(seen.contains(&1), "the smaller count was probed");
        let reduced = seen.iter().filter(|&&a| a == 1).count();
        assert!(
            reduced <= 3 * 5,
            "probes are short: {reduced} of 200 ticks reduced"
        );
    }

    #[test]
    fn a_clearly_losing_probe_is_undone_after_one_counted_tick() {
        let mut t = Throttle::new(2);
        let mut total = 0;
        // Parallel work: one worker handles half as much.
        let seen = run(&mut t, &mut total, 60, |a| 20_000 * a as u64);
        let first = seen.iter().position(|&a| a == 1).expect("a probe happened");
        let reduced = seen[first..].iter().take_while(|&&a| a == 1).count();
        assert_eq!(reduced, 2, "the transition tick and one counted tick");
        assert_eq!(seen[first + reduced], 2);
    }

    #[test]
    fn probes_that_keep_losing_come_less_often() {
        let mut t = Throttle::new(2);
        let mut total = 0;
        // Parallel work: every probe of one worker is undone.
        let seen = run(&mut t, &mut total, 2_000, |a| 20_000 * a as u64);
        let starts: Vec<usize> = (1..seen.len())
            .filter(|&i| seen[i] == 1 && seen[i - 1] == 2)
            .collect();
        let gaps: Vec<usize> = starts.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(gaps.len() >= 4, "it keeps probing: {starts:?}");
        assert!(
            gaps.windows(2).all(|g| g[1] >= g[0]),
            "the waits grow: {gaps:?}"
        );
        assert!(
            gaps.last().is_some_and(|&g| g >= 4 * gaps[0]),
            "and end well apart: {gaps:?}"
        );
        assert!(
            gaps.iter()
                .all(|&g| g <= REPROBE_MAX as usize + 2 * PROBE_TICKS as usize),
            "never further apart than the cap: {gaps:?}"
        );
    }

    #[test]
    fn heavy_handlers_are_never_throttled() {
        let mut t = Throttle::new(2);
        let mut total = 0;
        // A few hundred messages per ms: handlers of microseconds.
        let seen = run(&mut t, &mut total, 300, |a| 300 * a as u64);
        assert!(seen.iter().all(|&a| a == 2));
    }

    #[test]
    fn a_change_of_phase_brings_the_workers_back() {
        let mut t = Throttle::new(2);
        let mut total = 0;
        run(&mut t, &mut total, 100, |a| {
            if a == 1 { 27_000 } else { 20_000 }
        });
        assert_eq!(t.active(), 1);
        // Now the second worker pays (the workload changed).
        let seen = run(&mut t, &mut total, 200, |a| {
            if a == 1 { 20_000 } else { 40_000 }
        });
        let all = seen[100..].iter().filter(|&&a| a == 2).count();
        assert!(all >= 90, "every worker is back: {all} of 100 late ticks");
    }

    #[test]
    fn reset_restores_every_worker() {
        let mut t = Throttle::new(2);
        let mut total = 0;
        run(&mut t, &mut total, 100, |a| {
            if a == 1 { 27_000 } else { 20_000 }
        });
        while t.active() != 1 {
            run(
                &mut t,
                &mut total,
                1,
                |a| if a == 1 { 27_000 } else { 20_000 },
            );
        }
        t.reset();
        assert_eq!(t.active(), 2);
        // A fresh start: the next probe waits for the first-probe delay again.
        let seen = run(&mut t, &mut total, FIRST_PROBE_AFTER, |a| {
            if a == 1 { 27_000 } else { 20_000 }
        });
        assert!(
            seen.iter().all(|&a| a == 2),
            "no probe before the delay: {seen:?}"
        );
    }

    #[test]
    fn one_worker_pools_are_left_alone() {
        let mut t = Throttle::new(1);
        let mut total = 0;
        let seen = run(&mut t, &mut total, 100, |_| 50_000);
        assert!(seen.iter().all(|&a| a == 1));
    }
}
