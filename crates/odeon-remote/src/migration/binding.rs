//! Ask bindings (design §3.3): which nodes may hold an ask this node sent to a mobile
//! actor, so that the ask fails at once with [`AskError::Unreachable`] when one of them
//! is lost, instead of waiting for its timeout.
//!
//! A binding starts at the ask's first hop (the entry's own report, `Out::Rebind`).
//! A node that passes the ask on reports `AskAt { at, hops, confirmed: false }` ("sent
//! to `at`": the binding becomes {reporter, at}); the node that receives it reports
//! `confirmed: true` (the binding becomes {at}). The report with the most hops wins;
//! hops are a byte compared in serial-number order ([`hops_newer`]), so bindings keep
//! updating after 255 hops. The first hop's own receipt is not reported: the binding
//! already names that node alone (so a direct ask to the host draws no `AskAt`).
//!
//! The same counter orders `WatchAt` reports (`control.rs`).
//!
//! # After a node loss, per case (design §7, issue 14)
//! - An ask the host received and confirmed is bound to the host alone: the loss of
//!   a forwarder or of the birth node does not touch it, and the host's reply goes
//!   straight to the asking node (never through a forwarder), so it is answered.
//! - An ask still in this node's route buffer (a switch or a relocation under way)
//!   is bound to nothing yet; it goes out along the relocated route, and is answered.
//! - An ask whose binding names the lost node fails at once with
//!   [`AskError::Unreachable`]: that node held it, or had sent it on and the receipt
//!   was not confirmed yet, so its request may have died there. It is not sent again:
//!   an ask is not idempotent (at most once). (Watches are, and are sent again:
//!   `rewatch.rs`.) Known limit: if the next node did receive it, its reply comes
//!   after the failure and is dropped.

use std::collections::BTreeSet;

use odeon::AskError;

use crate::node::{NodeInner, Pending};
use crate::wire::NodeId;

/// Whether hop count `a` is newer than `b` in serial-number order (RFC 1982 with
/// `SERIAL_BITS = 8`): `a` is ahead of `b` by 1 to 127 modulo 256. A counter that
/// wraps from 255 to 0 is still newer; two counts 128 apart are unordered (neither is
/// newer), which a binding treats as stale. So `0` is newer than `255`, and `255` is
/// not newer than `0` (unit tests below).
pub(crate) fn hops_newer(a: u8, b: u8) -> bool {
    a != b && a.wrapping_sub(b) < 128
}

/// Where one ask may be: the nodes that may hold it, and the hop count of the report
/// that said so.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Binding {
    /// Nodes that may hold the ask (never this node).
    pub(crate) nodes: BTreeSet<NodeId>,
    /// The hops of the report in force; `None` before the first.
    pub(crate) hops: Option<u8>,
}

impl Binding {
    /// Applies a report from `reporter` (model: `rebind`). Returns whether the binding
    /// changed.
    pub(crate) fn report(
        &mut self,
        me: &NodeId,
        reporter: &NodeId,
        at: &NodeId,
        hops: u8,
        confirmed: bool,
    ) -> bool {
        let newer = self.hops.is_none_or(|h| hops_newer(hops, h));
        if newer {
            self.nodes.clear();
            if !confirmed {
                self.nodes.insert(reporter.clone());
            }
            self.nodes.insert(at.clone());
            self.hops = Some(hops);
        } else if self.hops == Some(hops) && confirmed {
            self.nodes.clear();
            self.nodes.insert(at.clone());
        } else {
            return false;
        }
        self.nodes.remove(me);
        true
    }
}

impl NodeInner {
    /// A report about this node's ask `request` (an `AskAt` frame, or the entry's own
    /// `Out::Rebind`). An ask bound to a node already lost fails now.
    pub(crate) fn rebind_ask(
        &self,
        request: u64,
        reporter: &NodeId,
        at: &NodeId,
        hops: u8,
        confirmed: bool,
    ) {
        if !self.mobile_asks.lock().contains_key(&request) {
            // Answered, failed or timed out already.
            self.ask_bindings.lock().remove(&request);
            return;
        }
        let lost = {
            let mut table = self.ask_bindings.lock();
            let b = table.entry(request).or_default();
            if !b.report(&self.me, reporter, at, hops, confirmed) {
                return;
            }
            b.nodes.iter().find(|n| self.is_lost_node(n)).cloned()
        };
        if let Some(n) = lost {
            tracing::debug!(request, node = %n, "an ask bound to a lost node fails");
            self.fail_bound_ask(request);
        }
    }

    /// `lost` was declared lost: every ask that may be there fails with
    /// [`AskError::Unreachable`].
    pub(crate) fn asks_node_lost(&self, lost: &NodeId) {
        let failed: Vec<u64> = self
            .ask_bindings
            .lock()
            .iter()
            .filter(|(_, b)| b.nodes.contains(lost))
            .map(|(r, _)| *r)
            .collect();
        for request in failed {
            tracing::debug!(request, node = %lost, "an ask bound to a lost node fails");
            self.fail_bound_ask(request);
        }
    }

    /// Whether `n` was declared lost (a node this node never linked to is not).
    pub(crate) fn is_lost_node(&self, n: &NodeId) -> bool {
        self.lost_nodes.lock().contains(n)
    }

    /// Fails the pending ask `request` with `Unreachable` and drops its binding.
    pub(crate) fn fail_bound_ask(&self, request: u64) {
        self.ask_bindings.lock().remove(&request);
        let pending = self.mobile_asks.lock().remove(&request);
        match pending {
            Some(Pending::Ask { slot, .. }) => slot.fail(AskError::Unreachable),
            Some(Pending::Raw(tx)) => {
                let _ = tx.send(Err(AskError::Unreachable));
            }
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(name: &str) -> NodeId {
        NodeId {
            name: name.into(),
            incarnation: 1,
        }
    }

    #[test]
    fn hops_compare_in_serial_number_order_across_the_wrap() {
        assert!(hops_newer(1, 0));
        assert!(hops_newer(255, 254));
        assert!(hops_newer(0, 255));
        assert!(hops_newer(3, 250));
        assert!(!hops_newer(255, 0));
        assert!(!hops_newer(250, 3));
        assert!(!hops_newer(7, 7));
        // 128 apart: unordered either way.
        assert!(!hops_newer(128, 0));
        assert!(!hops_newer(0, 128));
        assert!(hops_newer(127, 0));
    }

    #[test]
    fn a_binding_keeps_following_an_ask_after_255_hops() {
        let (me, a, b) = (n("me"), n("a"), n("b"));
        let mut bind = Binding::default();
        let mut at = a.clone();
        // 300 moves: each hop is reported sent, then confirmed; the counter wraps.
        for i in 1..=300u32 {
            let hops = (i % 256) as u8;
            let (from, to) = if i % 2 == 0 { (&a, &b) } else { (&b, &a) };
            assert!(bind.report(&me, from, to, hops, false), "hop {i} sent");
            assert_eq!(bind.nodes, [from.clone(), to.clone()].into_iter().collect());
            assert!(bind.report(&me, to, to, hops, true), "hop {i} confirmed");
            assert_eq!(bind.nodes, [to.clone()].into_iter().collect());
            at = to.clone();
        }
        assert_eq!(bind.nodes.into_iter().collect::<Vec<_>>(), vec![at]);
    }

    #[test]
    fn a_stale_report_does_not_move_a_binding_back() {
        let (me, a, b) = (n("me"), n("a"), n("b"));
        let mut bind = Binding::default();
        assert!(bind.report(&me, &me, &a, 255, false));
        assert!(bind.report(&me, &a, &b, 0, false)); // wrapped: newer
        assert!(!bind.report(&me, &a, &a, 255, true)); // older: ignored
        assert_eq!(bind.nodes, [a.clone(), b.clone()].into_iter().collect());
        // The origin itself never counts.
        assert!(bind.report(&me, &b, &me, 1, true));
        assert!(bind.nodes.is_empty());
    }
}
