//! Collection (design §3.7, step 10): a node the actor left forgets it once nothing
//! routes through it.
//!
//! The entry's own rule (`route.rs::gc`) drops its *export* when its pins reach zero
//! (`Out::Collected`): no other node routes through it any more. The node then drops
//! what it kept for the actor:
//! 1. **The stub.** The node's own ref to the stub cell goes at once. The cell lives on
//!    while local refs to it are left (they still forward through the entry); the core
//!    retires it silently when the last one goes.
//! 2. **The table entry**, once it is also unused here: no [`MobileEndpoint`] and no
//!    stub route left ([`Mobile::users`]), a direct or dead route (no switch or
//!    relocation buffering this node's own messages), no hand-over under way, no
//!    control state (a watch made here waiting for the actor's `Terminated`, a
//!    control waiting for the entry's lock: `ControlState::idle`), and never on the
//!    birth node (its entry is the actor's directory). The check runs after every
//!    transition (under the entry's lock) and when the last user goes.
//!
//! **A forgotten entry is retired for good** (`Driver::retired`, set under its lock
//! as it leaves the table). Threads find entries in the table and only then take
//! their lock, so one may hold an entry that was forgotten while it waited: a frame
//! from a peer, or an offer that makes this node a move's target. Such an entry must
//! not be used, let alone put back in the table: it released its pin at its route's
//! node, which may then have forgotten the actor too, so its route can lead to a node
//! with no entry (a drain's flush sent there is dropped, and the target never gets
//! Ready: every move to this node timed out, forever; issue 14's stall). The thread
//! looks the token up again ([`NodeInner::lock_live`]) and gets, or makes, a fresh
//! entry, which routes through the birth node: that one never forgets the actor.
//!
//! # Why no frame reaches a forgotten entry
//! Step 10's invariant: a node sends the actor's frames to a non-owner only while it
//! holds a pin there, and releases the pin after its last frame to it, on the same
//! link. Zero pins at F (`gc`) therefore means no message, flush or probe from
//! anyone is still on its way to F, and none will be sent. Frames that need no pin
//! are answered without the entry when it is gone: an offer makes a fresh entry (a
//! move may come back to F at any time), a probe is answered `Gone`, and `Unpin`,
//! `Reflush` and `Hint` to a node with no route need nothing. The local senders
//! (endpoints, the stub) are counted in [`Mobile::users`]: the entry stays while any
//! is left, and a new one can only start under the table's lock, where the removal
//! checks the count again.
//!
//! An entry that sent numbered messages of its own first drains them: a flush
//! through its route, acknowledged by the owner (see `forget_if_unused`). Forgetting
//! releases this node's pin at its route's node (`Unpin`: the entry would never
//! answer that node's hints again) and keeps one number: the largest sequence number
//! the entry gave out, node-wide (`NodeInner::mobile_retired_seq`). A later entry for
//! the same actor numbers on from there, so the owner's straggler rule (step 9) never
//! mistakes its messages for old ones.
//!
//! [`MobileEndpoint`]: super::stub::MobileEndpoint

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::driver::{Driver, Mobile};
use super::entry::{MobileEntry, Place, Route};
use crate::node::NodeInner;
use crate::wire::{Traffic, WireRef};

/// Whether `d`'s entry holds nothing another node or a hand-over still needs (what
/// this node's own users need is checked by `forget_if_unused`).
fn collectable(d: &Driver) -> bool {
    let e = &d.entry;
    e.me != e.actor.node
        && !d.retired
        && !e.exported
        && e.pins() == 0
        && d.moving.is_none()
        && d.arriving.is_none()
        && matches!(
            e.place,
            Place::Away {
                route: Route::Direct(_) | Route::Dead
            }
        )
}

impl NodeInner {
    /// `Out::Collected`: no other node routes through this one. The node's own ref to
    /// the stub goes (local refs to it keep it alive as long as they need it).
    pub(crate) fn collected(&self, mobile: &Arc<Mobile>) {
        tracing::debug!(node = %self.me, token = mobile.token, "forwarding entry collected");
        let stub = mobile.local.lock().take();
        // Dropped outside the `local` lock: the last ref signals the cell.
        drop(stub);
    }

    /// After every transition of `mobile`'s entry, under its lock: forgets the entry
    /// if it became collectable and nothing here uses it.
    ///
    /// A forgotten entry is never brought back: it released its pin at its route's
    /// node, which may have forgotten the actor in turn, so its route may lead
    /// nowhere. A frame that finds it retired goes to a fresh entry instead
    /// ([`NodeInner::lock_live`]), which routes through the birth node.
    pub(crate) fn after_transition(self: &Arc<Self>, mobile: &Arc<Mobile>, d: &mut Driver) {
        if d.retired {
            return;
        }
        let now = collectable(d);
        mobile.collectable.store(now, Ordering::Release);
        if now {
            self.forget_if_unused(mobile, d);
        }
    }

    /// `mobile`'s entry, locked, if it is still this node's entry for the actor;
    /// `None` if it was forgotten while the caller waited for the lock (the caller
    /// looks the token up again).
    pub(crate) fn lock_live(mobile: &Mobile) -> Option<parking_lot::MutexGuard<'_, Driver>> {
        let d = mobile.state.lock();
        (!d.retired).then_some(d)
    }

    /// A local user of `mobile` (an endpoint, a stub's route) started.
    pub(crate) fn mobile_used(mobile: &Mobile) {
        mobile.users.fetch_add(1, Ordering::AcqRel);
    }

    /// A local user of `mobile` went away: the entry may go now.
    pub(crate) fn mobile_unused(self: &Arc<Self>, mobile: &Arc<Mobile>) {
        if mobile.users.fetch_sub(1, Ordering::AcqRel) == 1
            && mobile.collectable.load(Ordering::Acquire)
        {
            // `try_lock`: a user may go while this thread holds the entry (a ref
            // dropped during a delivery). Whoever holds it checks again at the end of
            // its transition.
            if let Some(mut d) = mobile.state.try_lock() {
                self.forget_if_unused(mobile, &mut d);
            }
        }
    }

    /// Removes `mobile` from the table if it is collectable and unused (under its
    /// entry's lock; the table's lock is only ever taken inside an entry's).
    ///
    /// An entry that numbered messages of its own first **drains**: it flushes its
    /// route (step 8's switch, unprompted) and goes only once the owner acknowledged,
    /// with no message sent since. Everything it sent is then queued at the owner, so
    /// a later entry here (numbering on from it, through the birth node) cannot
    /// overtake it and have it dropped as a straggler.
    fn forget_if_unused(self: &Arc<Self>, mobile: &Arc<Mobile>, d: &mut Driver) {
        // Users first: a node that sends through the entry has one, and pays nothing
        // more per send. A watch or a control that kept the entry is checked again at
        // its next transition.
        if !collectable(d) || mobile.users.load(Ordering::Acquire) != 0 || !mobile.control.idle() {
            return;
        }
        let drained = d.entry.seq_out == 0
            || d.flushed_at == Some(d.entry.seq_out)
            || matches!(d.entry.place, Place::Away { route: Route::Dead });
        if !drained {
            d.flushed_at = Some(d.entry.seq_out);
            d.entry.start_switch();
            let outs = d.entry.take_out();
            self.perform(mobile, d, outs);
            return;
        }
        {
            let mut table = self.mobile.lock();
            // Endpoints are made under the table's lock (`resolve_mobile`), so none
            // can start between this check and the removal.
            if mobile.users.load(Ordering::Acquire) != 0
                || !table
                    .get(&mobile.token)
                    .is_some_and(|m| Arc::ptr_eq(m, mobile))
            {
                return;
            }
            // Before the removal, under the table's lock: a fresh entry is made under
            // it too (`resolve_mobile`, `receive_offer`), and must number after this one.
            self.mobile_retired_seq
                .fetch_max(d.entry.seq_out, Ordering::AcqRel);
            table.remove(&mobile.token);
            d.retired = true;
        }
        if let Place::Away {
            route: Route::Direct(hop),
        } = &d.entry.place
            && let Some(peer) = self.known_peer(hop)
        {
            // The route's node pinned this one (it acknowledged a flush, or it is the
            // birth node and was sent to): release it, or it could never be collected.
            let frame = Traffic::Unpin { to: mobile.token };
            if let Err(e) = peer.send(&frame) {
                tracing::debug!(peer = %hop, error = %e, "unpin not sent");
            }
        }
        tracing::debug!(node = %self.me, token = mobile.token, "mobile entry forgotten");
    }

    /// A fresh entry on this node for an actor born elsewhere: it routes to the birth
    /// node and numbers after every entry this node forgot.
    pub(crate) fn fresh_away(
        &self,
        wire: &WireRef,
        peers: Vec<crate::wire::NodeId>,
    ) -> MobileEntry {
        let mut entry = MobileEntry::away(self.me.clone(), wire.clone(), peers);
        entry.seq_out = self.mobile_retired_seq.load(Ordering::Acquire);
        entry
    }

    /// How many mobile entries this node keeps, and how many stub cells among them
    /// (see [`Node::mobile_counts`](crate::Node::mobile_counts)).
    pub(crate) fn mobile_counts(&self) -> (usize, usize) {
        let all: Vec<Arc<Mobile>> = self.mobile.lock().values().cloned().collect();
        let stubs = all
            .iter()
            .filter(|m| m.local().is_some() && !m.state.lock().entry.is_host())
            .count();
        (all.len(), stubs)
    }
}

impl crate::Node {
    /// How many mobile actors this node keeps an entry for, and how many of those it
    /// keeps a forwarding stub cell for (design §3.7). A node the actor left keeps both
    /// only while something may still route through it: other nodes whose route leads
    /// here, local refs to the stub, or remote refs held on this node. The actor's host
    /// counts one entry and no stub; its birth node always keeps its entry (the actor's
    /// directory). For tests and monitoring.
    ///
    /// ```
    /// # let system = odeon::System::new();
    /// # system.block_on(async {
    /// let node = odeon_remote::Node::builder("lonely")
    ///     .secret(odeon_remote::Secret::generate())
    ///     .start(&system.handle())
    ///     .await
    ///     .unwrap();
    /// assert_eq!(node.mobile_counts(), (0, 0));
    /// # });
    /// ```
    pub fn mobile_counts(&self) -> (usize, usize) {
        self.inner.mobile_counts()
    }
}
