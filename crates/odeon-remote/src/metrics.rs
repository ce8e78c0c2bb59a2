//! What a node counts instead of logging: refused handshakes, shed connections,
//! rejected gossip datagrams. Strangers can cause these at will, so the log only gets
//! a rate-limited warning now and then, and the exact numbers are here. Live
//! migrations are counted here too ([`MigrationStats`], design §3.9).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::membership::GossipStats;
use crate::migration::api::MigrateError;
use crate::transport::ListenerStats;

/// A node's counters, live: read them at any time from [`Node::metrics`](crate::Node::metrics).
#[derive(Clone, Debug)]
pub struct Metrics {
    links: Arc<ListenerStats>,
    gossip: Arc<GossipStats>,
    migrations: Arc<MigrationStats>,
}

impl Metrics {
    pub(crate) fn new(
        links: Arc<ListenerStats>,
        gossip: Arc<GossipStats>,
        migrations: Arc<MigrationStats>,
    ) -> Self {
        Self {
            links,
            gossip,
            migrations,
        }
    }

    /// The link listener's counts: handshakes accepted, refused (wrong secret, garbage,
    /// timeouts) and shed (over the cap of pending handshakes), and failed accepts.
    pub fn links(&self) -> &ListenerStats {
        &self.links
    }

    /// The gossip socket's counts: datagrams accepted, rejected (failed
    /// authentication), malformed and oversized.
    pub fn gossip(&self) -> &GossipStats {
        &self.gossip
    }

    /// The live migrations this node was the source of (moved, refused, failed, and
    /// how long the moves took), and the messages it forwarded for actors that left.
    pub fn migrations(&self) -> &MigrationStats {
        &self.migrations
    }
}

/// The upper bounds of [`MigrationStats::durations`]' buckets, in microseconds; a last
/// bucket holds everything slower.
pub const MIGRATION_DURATION_BUCKETS_US: [u64; 10] = [
    100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 100_000, 1_000_000,
];

/// Counts of live migrations, kept by the node that had the actor (the source), and
/// of the messages this node forwarded to actors that moved on.
///
/// Every move that reached the actor's turn on this node is counted once, as moved,
/// refused (nothing moved: [`MigrateError::Refused`]) or failed
/// ([`MigrateError::Failed`]), when its outcome is known here. A request turned down
/// before it reached the actor (a ref to an actor on another node, no node on the
/// ref's system) is only answered to its caller. Each move is also traced here: a
/// `migration` span (`actor`, `actor_type`, `from`, `to`) whose end fills in `epoch`,
/// `duration_us`, `state_bytes`, `queued`, `held` and `outcome`, with a `migration
/// ended` event inside it that carries the same fields.
///
/// ```
/// use odeon_remote::{Node, Secret};
/// # let system = odeon::System::new();
/// let secret = Secret::new("a doc secret, 16+ bytes").unwrap();
/// let node = system
///     .block_on(Node::builder("doc").secret(secret).start(&system.handle()))
///     .unwrap();
/// let m = node.metrics().migrations();
/// assert_eq!((m.moved(), m.refused(), m.failed()), (0, 0, 0));
/// assert_eq!(m.durations().count(), 0);
/// ```
#[derive(Debug, Default)]
pub struct MigrationStats {
    moved: AtomicU64,
    refused: AtomicU64,
    failed: AtomicU64,
    forwarded: AtomicU64,
    /// One count per bucket of `MIGRATION_DURATION_BUCKETS_US`, and the overflow.
    buckets: [AtomicU64; MIGRATION_DURATION_BUCKETS_US.len() + 1],
    total_us: AtomicU64,
}

impl MigrationStats {
    /// Moves that committed: the actor left this node.
    pub fn moved(&self) -> u64 {
        self.moved.load(Ordering::Relaxed)
    }

    /// Moves refused before anything moved (unknown type, unreachable target, already
    /// there, local-only mail, ...): the actor kept running here.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    /// Moves that were tried and did not commit (target lost, timeout, state that did
    /// not encode or decode): the actor resumed here with nothing lost.
    pub fn failed(&self) -> u64 {
        self.failed.load(Ordering::Relaxed)
    }

    /// Messages this node passed on for other nodes' senders to an actor that is not
    /// here (it moved away, or this node is on the route to it): each costs one hop
    /// more until the sender's route is repaired.
    pub fn forwarded_frames(&self) -> u64 {
        self.forwarded.load(Ordering::Relaxed)
    }

    /// How long the committed moves took, freeze to commit, at the source.
    pub fn durations(&self) -> DurationHistogram {
        let mut buckets = [0; MIGRATION_DURATION_BUCKETS_US.len() + 1];
        for (b, a) in buckets.iter_mut().zip(&self.buckets) {
            *b = a.load(Ordering::Relaxed);
        }
        DurationHistogram {
            buckets,
            total_us: self.total_us.load(Ordering::Relaxed),
        }
    }

    /// Counts a move's outcome; `took` is freeze to commit.
    pub(crate) fn record(&self, outcome: Result<Duration, &MigrateError>) {
        match outcome {
            Ok(took) => {
                self.moved.fetch_add(1, Ordering::Relaxed);
                let us = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
                let i = MIGRATION_DURATION_BUCKETS_US.partition_point(|&b| b < us);
                self.buckets[i].fetch_add(1, Ordering::Relaxed);
                self.total_us.fetch_add(us, Ordering::Relaxed);
            }
            Err(MigrateError::Refused(_)) => {
                self.refused.fetch_add(1, Ordering::Relaxed);
            }
            Err(MigrateError::Failed(_)) => {
                self.failed.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// One message forwarded for another node's sender.
    pub(crate) fn forwarded(&self) {
        self.forwarded.fetch_add(1, Ordering::Relaxed);
    }
}

/// A snapshot of the durations of committed moves, in the fixed buckets of
/// [`MIGRATION_DURATION_BUCKETS_US`].
///
/// ```
/// use odeon_remote::metrics::DurationHistogram;
/// let h = DurationHistogram::default();
/// assert_eq!(h.count(), 0);
/// assert_eq!(h.mean(), None);
/// assert_eq!(h.quantile(0.5), None);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DurationHistogram {
    buckets: [u64; MIGRATION_DURATION_BUCKETS_US.len() + 1],
    total_us: u64,
}

impl DurationHistogram {
    /// `(upper bound, count)` per bucket, fastest first; the last bound is `None`
    /// (slower than every bound).
    pub fn buckets(&self) -> impl Iterator<Item = (Option<Duration>, u64)> + '_ {
        let bounds = MIGRATION_DURATION_BUCKETS_US
            .iter()
            .map(|&us| Some(Duration::from_micros(us)))
            .chain([None]);
        bounds.zip(self.buckets.iter().copied())
    }

    /// Moves counted.
    pub fn count(&self) -> u64 {
        self.buckets.iter().sum()
    }

    /// The mean duration, if any move was counted.
    pub fn mean(&self) -> Option<Duration> {
        let n = self.count();
        (n > 0).then(|| Duration::from_micros(self.total_us / n))
    }

    /// The upper bound of the bucket that holds the `q` quantile (`0.0..=1.0`), if any
    /// move was counted; `Duration::MAX` if it is the last, unbounded bucket.
    pub fn quantile(&self, q: f64) -> Option<Duration> {
        let n = self.count();
        if n == 0 {
            return None;
        }
        // The rank of the quantile, 1-based: the smallest that covers q of the moves.
        let rank = ((q.clamp(0.0, 1.0) * n as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (bound, count) in self.buckets() {
            seen += count;
            if seen >= rank {
                return Some(bound.unwrap_or(Duration::MAX));
            }
        }
        Some(Duration::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MigrateFailure, MigrateRefusal};

    #[test]
    fn moves_fall_in_their_buckets_and_the_quantiles_read_them() {
        let s = MigrationStats::default();
        for us in [50, 100, 101, 700, 700, 2_000_000] {
            s.record(Ok(Duration::from_micros(us)));
        }
        s.record(Err(&MigrateRefusal::HasChildren.into()));
        s.record(Err(&MigrateFailure::TargetLost.into()));
        assert_eq!((s.moved(), s.refused(), s.failed()), (6, 1, 1));
        let h = s.durations();
        let counts: Vec<u64> = h.buckets().map(|(_, n)| n).collect();
        assert_eq!(counts, [2, 1, 0, 2, 0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(h.count(), 6);
        assert_eq!(h.quantile(0.0), Some(Duration::from_micros(100)));
        assert_eq!(h.quantile(0.5), Some(Duration::from_micros(250)));
        assert_eq!(h.quantile(0.8), Some(Duration::from_micros(1_000)));
        assert_eq!(h.quantile(1.0), Some(Duration::MAX));
        assert_eq!(
            h.mean(),
            Some(Duration::from_micros(
                (50 + 100 + 101 + 1_400 + 2_000_000) / 6
            ))
        );
    }
}
