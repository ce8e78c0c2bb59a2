//! Each move, traced and counted at its source (design §3.9): a `migration` span
//! from freeze to commit or abort, closed with an event that carries the same fields,
//! and the node's [`MigrationStats`](crate::metrics::MigrationStats).

use std::time::Duration;

use tracing::Span;
use tracing::field::Empty;

use super::api::MigrateError;
use crate::node::NodeInner;
use crate::wire::NodeId;

/// What a move carried, as far as it got.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Carried {
    /// The encoded state, in bytes.
    pub(crate) state_bytes: usize,
    /// Messages in the snapshot (the mailbox at freeze).
    pub(crate) queued: usize,
    /// Messages that arrived from other nodes while frozen.
    pub(crate) held: usize,
}

/// The span of one move of the actor `token` from this node to `to`; its outcome
/// fields are filled by [`NodeInner::migration_ended`].
pub(crate) fn span(me: &NodeId, token: u64, actor_type: &str, to: &NodeId) -> Span {
    tracing::info_span!(
        "migration",
        actor = token,
        actor_type,
        from = %me,
        to = %to,
        epoch = Empty,
        duration_us = Empty,
        state_bytes = Empty,
        queued = Empty,
        held = Empty,
        outcome = Empty,
    )
}

/// The outcome's name in traces: `moved`, `refused` or `failed`.
fn outcome_name(error: Option<&MigrateError>) -> &'static str {
    match error {
        None => "moved",
        Some(MigrateError::Refused(_)) => "refused",
        Some(MigrateError::Failed(_)) => "failed",
    }
}

impl NodeInner {
    /// A move from this node ended: counts it, fills its span's fields and logs its
    /// outcome inside the span (with `to`, so that it reads alone). `epoch` is the actor's moves committed after this
    /// one, `elapsed` the time since the freeze; both `None` if the move was refused
    /// before the actor was frozen. `error` is `None` for a committed move.
    pub(crate) fn migration_ended(
        &self,
        span: &Span,
        to: &NodeId,
        epoch: Option<u32>,
        carried: Carried,
        elapsed: Option<Duration>,
        error: Option<&MigrateError>,
    ) {
        let elapsed_or_zero = elapsed.unwrap_or_default();
        self.migration_stats
            .record(error.map_or(Ok(elapsed_or_zero), Err));
        let outcome = outcome_name(error);
        let duration_us = u64::try_from(elapsed_or_zero.as_micros()).unwrap_or(u64::MAX);
        span.record("outcome", outcome);
        span.record("duration_us", duration_us);
        span.record("state_bytes", carried.state_bytes);
        span.record("queued", carried.queued);
        span.record("held", carried.held);
        if let Some(e) = epoch {
            span.record("epoch", e);
        }
        let error = error.map(ToString::to_string);
        tracing::info!(
            parent: span,
            to = %to,
            outcome,
            duration_us,
            state_bytes = carried.state_bytes,
            queued = carried.queued,
            held = carried.held,
            epoch,
            error = error.as_deref(),
            "migration ended"
        );
    }
}
