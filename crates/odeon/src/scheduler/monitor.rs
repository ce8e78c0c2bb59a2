//! The fairness monitor: detects a worker stuck in one turn (an actor that loops or
//! blocks its thread) and brings in an idle worker or a spare thread so that the other
//! actors keep running.
//!
//! Per worker it remembers the turn counter and when it last changed. A worker that is
//! busy with the same turn for longer than `stall_threshold` is marked stuck: its slot
//! becomes stealable, and if work is waiting anywhere, one parked worker is woken, or,
//! failing that, a spare thread is started (at most `max_spare_workers`).
//! While every worker is idle the monitor backs off its polling interval, up to
//! 50 ms. While messages flow but no worker is inside a turn when it looks (a light
//! load), it backs off too, up to half the stall threshold; a worker found busy brings
//! back the interval. So a turn that blocks is called stuck within the threshold plus
//! at most half of it (10–15 ms by default) of its start.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crossbeam_utils::sync::Parker;

use super::throttle::{Decision, Throttle};
use crate::system::Shared;

/// Longest pause between two looks while every worker is idle.
const IDLE_BACKOFF_MAX: Duration = Duration::from_millis(50);

pub(super) fn start(shared: &Arc<Shared>) {
    let parker = Parker::new();
    *shared.sched.monitor_unparker.lock() = Some(parker.unparker().clone());
    let shared2 = shared.clone();
    let spawned = std::thread::Builder::new()
        .name("odeon-monitor".into())
        .spawn(move || run(&shared2, &parker));
    match spawned {
        Ok(h) => shared.sched.threads.lock().push(h),
        Err(e) => {
            tracing::error!(error = %e, "could not start the fairness monitor");
            // Nobody would fire ask deadlines: asks keep their own timers instead.
            shared.deadlines.close();
        }
    }
}

fn run(shared: &Arc<Shared>, parker: &Parker) {
    let sched = &shared.sched;
    let threshold = shared.config.stall_threshold;
    let interval = shared.config.monitor_interval;
    let n = sched.workers.len();
    let mut last: Vec<(u64, Instant)> = vec![(0, Instant::now()); n];
    let mut pause = interval;
    let light_max = (threshold / 2).max(interval);
    let mut throttle = Throttle::new(sched.base);
    let mut last_tick = Instant::now();
    let mut last_total = sched.handled_total();
    while !sched.is_shutdown() {
        parker.park_timeout(pause);
        let now = Instant::now();
        let mut any_busy = false;
        let mut any_stuck = false;
        for (i, w) in sched.workers.iter().enumerate() {
            let seq = w.seq.load(Ordering::Relaxed);
            let busy = w.busy.load(Ordering::Relaxed);
            any_busy |= busy;
            if !busy || seq != last[i].0 {
                last[i] = (seq, now);
                continue;
            }
            if now.duration_since(last[i].1) >= threshold {
                if !w.stuck.swap(true, Ordering::AcqRel) {
                    tracing::debug!(worker = i, "worker stuck in one turn");
                    #[cfg(feature = "observe")]
                    if shared.config.observe {
                        crate::observe::count(crate::observe::MONITOR_RESCUES);
                    }
                }
                any_stuck = true;
            }
        }
        // A worker between two turns is not `busy`, so a pool that handled messages
        // since the last look counts as busy too.
        let total = sched.handled_total();
        let active = any_busy || total != last_total;
        last_total = total;
        let elapsed_ms = now.duration_since(last_tick).as_secs_f64() * 1e3;
        last_tick = now;
        pause = if any_busy {
            interval
        } else if active {
            // Messages flow but no worker was inside a turn at this look: a light
            // load (a request now and then), where nothing can be stuck yet and the
            // throttle has nothing to weigh. Looking less often spares the cores a
            // wake-up every interval, which showed in remote round trips' tails
            // (p99 on loopback, `docs/bench/remote-latency-2026-11-26.md`). Capped at
            // half the stall threshold, and a busy worker brings back the interval.
            (pause * 2).clamp(interval, light_max)
        } else {
            (pause * 2).min(IDLE_BACKOFF_MAX)
        };
        // Ask deadlines: wake up for the next one, however idle the pool is.
        if let Some(due) = shared.deadlines.tick(now) {
            pause = pause.min(due.saturating_duration_since(now));
        }
        let decision = if any_stuck || (shared.config.adaptive_workers && !active) {
            // Fairness first: a stuck worker gets every benched worker back at once,
            // and an idle pool starts its next burst with every worker.
            throttle.reset();
            Decision::Set(sched.base)
        } else if shared.config.adaptive_workers {
            throttle.tick(total, elapsed_ms)
        } else {
            Decision::Keep
        };
        let brought_back = match decision {
            Decision::Set(n) if n != sched.active.load(Ordering::Acquire) => {
                tracing::trace!(active = n, "throttle: workers taking shared work");
                sched.set_active(n);
                #[cfg(feature = "observe")]
                if shared.config.observe {
                    crate::observe::throttled(n);
                }
                n == sched.base
            }
            _ => false,
        };
        // A benched worker brought back for a stuck one steals its slot; a spare is only
        // needed when no worker was benched.
        if any_stuck && !brought_back && sched.has_waiting_work() && !sched.idle.notify_one(sched) {
            start_spare(shared);
        }
    }
    // Asks still waiting keep their own timers from here on.
    shared.deadlines.close();
}

/// Wakes a parked spare or starts a new one, up to the bound.
fn start_spare(shared: &Arc<Shared>) {
    let sched = &shared.sched;
    let started = sched.spares_started.load(Ordering::Acquire);
    // Prefer waking a spare that already runs and is parked.
    for w in sched.workers[sched.base..sched.base + started].iter() {
        if !w.busy.load(Ordering::Relaxed) {
            w.unparker.unpark();
            return;
        }
    }
    if started >= sched.workers.len() - sched.base {
        return;
    }
    sched.spares_started.store(started + 1, Ordering::Release);
    tracing::debug!(spare = started, "starting a spare worker");
    sched.start_worker(shared, sched.base + started);
}
