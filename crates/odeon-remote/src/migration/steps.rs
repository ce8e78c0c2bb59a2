//! Per-step trace events of a move, to find where its time goes.
//!
//! Each step of the hand-over emits a `TRACE` event with the target [`TARGET`] and
//! two fields: `step` (the names below) and `migration` (the move's id, unique per
//! source node; 0 for `freeze`, which comes before the id is drawn). A subscriber that
//! does not enable the target pays one cached callsite check per step. The mobility
//! benchmark's `move-steps` records them with their times
//! (`odeon-mobility-bench move-steps`).
//!
//! Steps, in protocol order (`mod.rs`): `freeze` (source, the actor's turn hands it
//! over), `offer_sent` (source, the offer encoded, about to be written or queued),
//! `offer_received` (target), `drain` (target, its route does not lead to the source
//! and carried messages since it was last drained: it flushes it before Ready, step 3)
//! or `drain_skipped` (the same, but its route carried nothing: no flush),
//! `ready_sent` (target), `ready_received`
//! (source), `committed` (source, the cell became a stub), `commit_sent` (source),
//! `commit_received` (target), `activated` (target, about to schedule the actor).
//! A hand-over frame that the link queued for its driver instead of writing it at
//! once also emits `queued` with `frame` = `offer`, `ready` or `commit`.

/// The `tracing` target of the per-step events of a move (`TRACE` level, fields
/// `step` and `migration`): `freeze`, `offer_sent`, `offer_received`, `drain` or
/// `drain_skipped`, `ready_sent`,
/// `ready_received`, `committed`, `commit_sent`, `commit_received`, `activated`.
/// Enable it to see where a move's time goes; `odeon-mobility-bench move-steps`
/// reports the median of each step.
///
/// ```
/// assert_eq!(odeon_remote::MIGRATION_STEPS_TARGET, "odeon_remote::migration::steps");
/// ```
pub const TARGET: &str = "odeon_remote::migration::steps";

/// Emits the event of `step` of the move `migration`.
#[inline]
pub(crate) fn step(step: &'static str, migration: u64) {
    tracing::trace!(target: "odeon_remote::migration::steps", migration, step);
}

/// A hand-over frame is about to be handed to its link (steps `offer_sent`,
/// `ready_sent`, `commit_sent`).
pub(crate) fn sending(frame: &crate::wire::Traffic<'_>) {
    use crate::wire::Traffic;
    match frame {
        Traffic::MigrateOffer { migration, .. } => step("offer_sent", *migration),
        Traffic::MigrateReady { migration } => step("ready_sent", *migration),
        Traffic::MigrateCommit { migration, .. } => step("commit_sent", *migration),
        _ => {}
    }
}

/// A hand-over frame was queued for its link's driver rather than written at once
/// (step `queued`, with the frame's kind in `frame`).
pub(crate) fn queued(frame: &crate::wire::Traffic<'_>) {
    let kind = match frame {
        crate::wire::Traffic::MigrateOffer { .. } => "offer",
        crate::wire::Traffic::MigrateReady { .. } => "ready",
        crate::wire::Traffic::MigrateCommit { .. } => "commit",
        _ => return,
    };
    tracing::trace!(target: "odeon_remote::migration::steps", frame = kind, step = "queued");
}
