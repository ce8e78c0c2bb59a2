//! Incarnations: a node restarted under the same name is a new incarnation, a larger
//! one, and the newest incarnation of a name supersedes the older ones at once.

use super::NodeInner;
use crate::wire::NodeId;

/// A new incarnation: the start time in microseconds since the Unix epoch, shifted left
/// 12 bits, with 12 random bits below. Two lives of one name differ, and the later
/// start has the larger incarnation (as long as the clocks of the hosts that ran them
/// agree to better than the time between the two starts), which lets the registry
/// prefer a restarted node over its previous life.
pub(super) fn incarnation() -> u64 {
    let micros = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64);
    let mut b = [0u8; 2];
    // The random bits only separate two starts in one microsecond; the clock alone is
    // enough if the OS source is unavailable.
    let _ = getrandom::fill(&mut b);
    (micros << 12) | u64::from(u16::from_le_bytes(b) & 0xfff)
}

impl NodeInner {
    /// Takes note of `id`, a node gossip or a link reports: live peers that are older
    /// incarnations of its name are lost at once (a restarted node's previous life is
    /// dead, whatever the failure detector says yet). Returns `false` if `id` is itself
    /// older than an incarnation of its name known here (this node's own included):
    /// such a node is neither linked nor resolved.
    pub(crate) fn supersede(&self, id: &NodeId) -> bool {
        if id.name == self.me.name && id.incarnation < self.me.incarnation {
            return false;
        }
        let older: Vec<_> = {
            let peers = self.peers.lock();
            let live = || peers.values().filter(|p| !p.is_lost());
            if live().any(|p| p.id.name == id.name && p.id.incarnation > id.incarnation) {
                return false;
            }
            live()
                .filter(|p| p.id.name == id.name && p.id.incarnation < id.incarnation)
                .cloned()
                .collect()
        };
        for p in older {
            self.forget_peer(&p, &format!("superseded by its newer incarnation {id}"));
        }
        true
    }
}
