//! What a node counts instead of logging: refused handshakes, shed connections,
//! rejected gossip datagrams. Strangers can cause these at will, so the log only gets
//! a rate-limited warning now and then, and the exact numbers are here.

use std::sync::Arc;

use crate::membership::GossipStats;
use crate::transport::ListenerStats;

/// A node's counters, live: read them at any time from [`Node::metrics`](crate::Node::metrics).
#[derive(Clone, Debug)]
pub struct Metrics {
    links: Arc<ListenerStats>,
    gossip: Arc<GossipStats>,
}

impl Metrics {
    pub(crate) fn new(links: Arc<ListenerStats>, gossip: Arc<GossipStats>) -> Self {
        Self { links, gossip }
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
}
