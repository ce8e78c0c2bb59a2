//! The fairness monitor: detects a worker stuck in one turn (an actor that loops or
//! blocks its thread) and brings in an idle worker or a spare thread so that the other
//! actors keep running.
//!
//! Per worker it remembers the turn counter and when it last changed. A worker that is
//! busy with the same turn for longer than `stall_threshold` is marked stuck: its slot
//! becomes stealable, and if work is waiting anywhere, one parked worker is woken, or,
//! failing that, a spare thread is started (at most `max_spare_workers`).
//! While every worker is idle the monitor backs off its polling interval.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crossbeam_utils::sync::Parker;

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
        Err(e) => tracing::error!(error = %e, "could not start the fairness monitor"),
    }
}

fn run(shared: &Arc<Shared>, parker: &Parker) {
    let sched = &shared.sched;
    let threshold = shared.config.stall_threshold;
    let interval = shared.config.monitor_interval;
    let n = sched.workers.len();
    let mut last: Vec<(u64, Instant)> = vec![(0, Instant::now()); n];
    let mut pause = interval;
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
                }
                any_stuck = true;
            }
        }
        pause = if any_busy {
            interval
        } else {
            (pause * 2).min(IDLE_BACKOFF_MAX)
        };
        if any_stuck && sched.has_waiting_work() && !sched.idle.notify_one(sched) {
            start_spare(shared);
        }
    }
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
