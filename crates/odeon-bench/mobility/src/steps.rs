//! `move-steps`: where the time of one move goes. One rover moves round the three
//! nodes; a minimal `tracing` subscriber records the instant of each step event the
//! migration code emits ([`odeon_remote::MIGRATION_STEPS_TARGET`]), and the rover
//! adds `asked` (its handler called `migrate_to`) and `migrated` (its hook ran on the
//! new node). All nodes are in this process, so the instants share one clock.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use tracing::field::{Field, Visit};
use tracing::{Event, Metadata, Subscriber, span};

use crate::stats::quantile;

/// The steps in protocol order.
const ORDER: [&str; 12] = [
    "asked",
    "freeze",
    "offer_sent",
    "offer_received",
    "drain",
    "ready_sent",
    "ready_received",
    "committed",
    "commit_sent",
    "commit_received",
    "activated",
    "migrated",
];

/// Whether the rover records its own steps.
static RECORDING: AtomicBool = AtomicBool::new(false);
/// Steps seen, in arrival order.
static SEEN: Mutex<Vec<(Instant, &'static str)>> = Mutex::new(Vec::new());

/// Notes `step` now, if recording.
pub(crate) fn note(step: &'static str) {
    if RECORDING.load(Ordering::Relaxed)
        && let Ok(mut s) = SEEN.lock()
    {
        s.push((Instant::now(), step));
    }
}

/// Records the migration code's step events.
struct Steps;

/// A target whose route carried nothing since it was last drained answered Ready
/// without a drain (step 3's shortcut); counted, not timed.
const SKIPPED: &str = "drain_skipped";

/// The frames a node queued for its link's driver instead of writing them at once.
const QUEUED: [&str; 3] = ["queued offer", "queued ready", "queued commit"];

struct StepField(Option<&'static str>);
impl Visit for StepField {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "step" if self.0.is_none() => {
                self.0 = ORDER
                    .iter()
                    .copied()
                    .find(|s| *s == value)
                    .or((value == SKIPPED).then_some(SKIPPED));
            }
            "frame" => {
                self.0 = QUEUED.iter().copied().find(|s| s.ends_with(value));
            }
            _ => {}
        }
    }
    fn record_debug(&mut self, _: &Field, _: &dyn std::fmt::Debug) {}
}

impl Subscriber for Steps {
    fn enabled(&self, m: &Metadata<'_>) -> bool {
        m.target() == odeon_remote::MIGRATION_STEPS_TARGET
    }
    fn new_span(&self, _: &span::Attributes<'_>) -> span::Id {
        span::Id::from_u64(1)
    }
    fn record(&self, _: &span::Id, _: &span::Record<'_>) {}
    fn record_follows_from(&self, _: &span::Id, _: &span::Id) {}
    fn event(&self, e: &Event<'_>) {
        let mut f = StepField(None);
        e.record(&mut f);
        if let Some(step) = f.0 {
            note(step);
        }
    }
    fn enter(&self, _: &span::Id) {}
    fn exit(&self, _: &span::Id) {}
}

/// Per move (split at `asked`), each step's time after `asked`, in µs.
fn split_moves(seen: &[(Instant, &'static str)]) -> Vec<Vec<Option<f64>>> {
    let mut out = Vec::new();
    let mut cur: Option<(Instant, Vec<Option<f64>>)> = None;
    for &(t, step) in seen {
        let Some(i) = ORDER.iter().position(|s| *s == step) else {
            continue;
        };
        if i == 0 {
            if let Some((_, m)) = cur.take() {
                out.push(m);
            }
            let mut m = vec![None; ORDER.len()];
            m[0] = Some(0.0);
            cur = Some((t, m));
        } else if let Some((t0, m)) = cur.as_mut() {
            m[i].get_or_insert(t.saturating_duration_since(*t0).as_secs_f64() * 1e6);
        }
    }
    out.extend(cur.map(|(_, m)| m));
    out
}

/// `move-steps`: one rover, `moves` moves round a, b, c; the median time of each step
/// after `asked`, and the median and 90th percentile of each step after the one before
/// it (among the moves that had both).
pub fn move_steps(moves: u32) -> Result<(), String> {
    tracing::subscriber::set_global_default(Steps).map_err(|e| e.to_string())?;
    let cluster = crate::moves::Cluster::start()?;
    RECORDING.store(true, Ordering::Relaxed);
    let r = crate::moves::rings(&cluster, 1, moves, 0);
    RECORDING.store(false, Ordering::Relaxed);
    cluster.shutdown();
    r?;
    let seen = std::mem::take(&mut *SEEN.lock().map_err(|e| e.to_string())?);
    // The first move warms up (connections' first use, allocations): not counted.
    let all: Vec<_> = split_moves(&seen).into_iter().skip(1).collect();
    println!(
        "move-steps: one actor, {} moves round a, b, c (one process); µs, median over moves",
        all.len()
    );
    println!(
        "  {:<16} {:>12} {:>15} {:>13} {:>6}",
        "step", "since asked", "since previous", "(p90)", "moves"
    );
    for (i, name) in ORDER.iter().enumerate() {
        let at: Vec<f64> = all.iter().filter_map(|m| m[i]).collect();
        let step: Vec<f64> = all
            .iter()
            .filter_map(|m| {
                let prev = m[..i].iter().rev().find_map(|x| *x)?;
                Some(m[i]? - prev)
            })
            .collect();
        let (p50, p90) = match i {
            0 => (0.0, 0.0),
            _ => (quantile(&step, 0.5), quantile(&step, 0.9)),
        };
        println!(
            "  {name:<16} {:>12.1} {p50:>15.1} {p90:>13.1} {:>6}",
            quantile(&at, 0.5),
            at.len()
        );
    }
    // offer_received (3) to ready_sent (5), with and without the drain (4).
    let wait = |drained: bool| -> Vec<f64> {
        all.iter()
            .filter(|m| m[4].is_some() == drained)
            .filter_map(|m| Some(m[5]? - m[3]?))
            .collect()
    };
    let (with, without) = (wait(true), wait(false));
    println!(
        "  offer received to ready sent: {} moves whose target drained its route first \
         (a flush through it before Ready): median {:.1} µs; {} others: median {:.1} µs",
        with.len(),
        quantile(&with, 0.5),
        without.len(),
        quantile(&without, 0.5)
    );
    println!(
        "  of the moves whose target's route did not lead to the source, {} skipped the \
         drain (nothing sent on the route since it was last drained)",
        seen.iter().filter(|s| s.1 == SKIPPED).count()
    );
    let queued: Vec<String> = QUEUED
        .iter()
        .map(|q| format!("{} {q}", seen.iter().filter(|s| s.1 == *q).count()))
        .collect();
    println!(
        "  frames queued for the link's driver (not written at once): {}",
        queued.join(", ")
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn steps_are_split_into_moves_at_asked() {
        let t = Instant::now();
        let us = |n| t + Duration::from_micros(n);
        let seen = [
            (us(0), "asked"),
            (us(5), "freeze"),
            (us(50), "activated"),
            (us(60), "migrated"),
            (us(100), "asked"),
            (us(130), "migrated"),
        ];
        let m = split_moves(&seen);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0][1], Some(5.0));
        assert_eq!(m[0][11], Some(60.0));
        assert_eq!(m[0][2], None);
        assert_eq!(m[1][11], Some(30.0));
    }
}
