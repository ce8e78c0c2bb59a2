//! Control of a mobile actor from any node (design §2.4, §3.5): `stop`, `kill`,
//! `watch`, `unwatch`, `link`, `unlink`, a linked actor's failure, and `migrate_to`.
//!
//! # How a control op travels
//! A control op is a [`Control`] item, encoded as a [`QueuedMessage`] named
//! [`CONTROL`] and sent through the node's entry exactly like a message: numbered
//! along the actor's route, held while it is frozen, shipped in the commit, and
//! delivered where it runs. So it keeps per-sender order with messages, and reaches
//! the actor after any number of moves. The host applies it instead of queueing it
//! (`NodeInner::apply_control`).
//!
//! - **Stop**: a forwarded stop joins the actor's mailbox
//!   ([`odeon::remote::stop_in_order`]): the messages its node sent before it are
//!   handled first, then the actor stops (a local [`ActorRef::stop`](odeon::ActorRef::stop)
//!   drops queued messages; a forwarded one cannot tell them from those it must let
//!   pass). A kill is applied as soon as it reaches the host (it does not wait
//!   for the mailbox, as a local kill does not); a stale local ref's kill also leaves
//!   the stub at once, ahead of what the stub has not forwarded yet. A remote ref has
//!   no kill on the wire (the core sends `stop`): only a stale local ref on a node
//!   the actor left sends `Kill`.
//! - **Watches**: the watcher's node keeps the callback under (actor, key)
//!   ([`ControlState::watches`]); the host keeps the watcher as (node, key)
//!   ([`ControlState::watchers`]) and watches its own cell. The watcher list travels
//!   in `MigrateOffer.watchers`; when the actor stops, its host sends
//!   `Terminated { id: birth id, key }` to each watcher node (or calls it, if local):
//!   exactly once, since the callback is taken from the table. The host reports
//!   itself with `WatchAt { confirmed: true, hops: epoch }` on receiving a watch and
//!   on arrival; a watch bound to a node declared lost ends with `NodeLost`. The
//!   `Watch` item is an ask (`rewatch.rs`, `NodeInner::await_watch`): the host
//!   answers it, a host whose actor stopped sends `Terminated` first
//!   (`watch_of_stopped`, in `rewatch.rs`), and a path that cannot take it fails it back, which ends
//!   the watch with `NodeLost`: the watcher is always told.
//! - **Links** are a watch each way (as for any remote actor: `Context::link`): the
//!   linker watches the actor, and `Link`/`LinkFailed` make the actor stop with
//!   `LinkFailed` when the linker fails. The host keeps (node, linker) in
//!   [`ControlState::links`]; they travel in `MigrateOffer.links`.
//! - **`migrate_to`** travels as an ask: the host starts the move and replies with
//!   the postcard-encoded [`MigrateResult`].

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Weak};

use odeon::{ActorId, StopReason, Terminated};
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;

use super::api::{MigrateFailure, MigrateResult, Migration};
use super::binding::Binding;
use super::driver::{Driver, Mobile};
use crate::interface::ErasedRef;
use crate::node::{NodeInner, Pending};
use crate::wire::{NodeId, Outcome, QueuedMessage, Traffic, WireFailure, WireStopReason};

/// The wire name of a control item (never a user message's: user names are declared
/// in `remote_actor!`/`mobile_actor!` and `odeon.` is the runtime's prefix).
pub(crate) const CONTROL: &str = "odeon.control";

/// What a node asks of a mobile actor, wherever it runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Control {
    /// Stop after the messages queued before (`Some(id)`: its linked actor `id`
    /// failed, the reason is `LinkFailed(id)`).
    Stop {
        /// The failed linked actor, if that is why.
        link_failed: Option<u64>,
    },
    /// Kill it (a stale local ref's `kill`).
    Kill,
    /// Report its end to the sender's node under `key`.
    Watch {
        /// The watch's key on the sender's node.
        key: u64,
    },
    /// Cancel a `Watch`.
    Unwatch {
        /// The key given to `Watch`.
        key: u64,
    },
    /// Stop it if the sender's actor `from` fails.
    Link {
        /// The linked actor's id on the sender's node.
        from: u64,
    },
    /// Cancel a `Link`.
    Unlink {
        /// The linked actor's id on the sender's node.
        from: u64,
    },
    /// The sender's linked actor `from` failed.
    LinkFailed {
        /// The failed actor's id on the sender's node.
        from: u64,
    },
    /// Move to `node` (sent as an ask: the reply is the encoded [`MigrateResult`]).
    MigrateTo {
        /// The target.
        node: NodeId,
    },
}

type Notify = Box<dyn FnOnce(Terminated) + Send>;

/// A watch this node made of the actor: its callback and where it is bound.
pub(crate) struct WatchRecord {
    notify: Notify,
    /// The nodes that may host the actor, as `WatchAt` reports say (hops: the epoch).
    pub(super) at: Binding,
}

/// The per-actor control state of one node (beside its entry, own locks: callbacks
/// run without the entry's lock).
#[derive(Default)]
pub(crate) struct ControlState {
    /// Watches made on this node, by key.
    pub(crate) watches: Mutex<HashMap<u64, WatchRecord>>,
    /// While this node hosts the actor: its watchers (node, key)...
    pub(crate) watchers: Mutex<BTreeSet<(NodeId, u64)>>,
    /// ...and its remote links (node, linked actor id).
    pub(crate) links: Mutex<BTreeSet<(NodeId, u64)>>,
    /// The host's own watch of its cell (its key), while hosting.
    pub(crate) armed: Mutex<Option<ActorId>>,
    /// Controls waiting for the entry's lock (sent from under it, e.g. at commit),
    /// each with its request id if it is an ask (a watch: `rewatch.rs`).
    pub(crate) deferred: Mutex<Vec<(Control, Option<u64>)>>,
    /// While this node hosts the actor, once it stopped: why, if the host watched its
    /// cell (`arm`). A watch that reaches the host after the stop is told this.
    pub(crate) ended: Mutex<Option<WireStopReason>>,
    /// Watchers and links shipped by an offer, until it commits: (move, both).
    pub(crate) incoming: Mutex<Option<(u64, Attached)>>,
    /// The epoch this node hosts the actor at (its `WatchAt` hop count).
    pub(crate) epoch: AtomicU32,
    /// Links made on this node (the linked actors' ids): sent again with their watch
    /// half after a loss (`rewatch.rs`).
    pub(crate) linked: Mutex<BTreeSet<u64>>,
}

impl ControlState {
    /// Whether nothing here still needs this node's entry: no watch made here waits
    /// for the actor's end (its `Terminated` finds the watch through the entry), no
    /// watcher or link is kept for the actor hosted here, and no control waits for
    /// the entry's lock. An entry that is not idle is not forgotten (`collect.rs`).
    pub(crate) fn idle(&self) -> bool {
        self.watches.lock().is_empty()
            && self.watchers.lock().is_empty()
            && self.links.lock().is_empty()
            && self.armed.lock().is_none()
            && self.deferred.lock().is_empty()
    }
}

/// Watchers and links as they travel in an offer.
pub(crate) type Attached = (Vec<(NodeId, u64)>, Vec<(NodeId, u64)>);

fn wire_reason(r: &StopReason) -> WireStopReason {
    crate::node::dispatch::wire_stop_reason(r)
}

/// The reason a `Terminated` frame carries, as the watcher's callback gets it.
pub(crate) fn stop_reason(r: WireStopReason) -> StopReason {
    crate::node::dispatch::stop_reason_from_wire(r)
}

impl NodeInner {
    /// Sends `control` to the actor through this node's entry. Never waits for the
    /// entry's lock on this thread (a stub's callbacks run under it at commit): if it
    /// is taken, the item waits in `deferred` for whoever holds it or a task.
    pub(crate) fn mobile_control(self: &Arc<Self>, mobile: &Arc<Mobile>, control: Control) {
        self.mobile_control_ask(mobile, control, None);
    }

    /// [`Self::mobile_control`], as an ask when `request` is given (its answer goes to
    /// the node-level table `mobile_asks`, where the caller put a pending entry).
    pub(crate) fn mobile_control_ask(
        self: &Arc<Self>,
        mobile: &Arc<Mobile>,
        control: Control,
        request: Option<u64>,
    ) {
        mobile.control.deferred.lock().push((control, request));
        if let Some(mut d) = mobile.state.try_lock() {
            self.drain_controls(mobile, &mut d);
            return;
        }
        let (node, mobile) = (Arc::downgrade(self), Arc::downgrade(mobile));
        self.io.spawn(async move {
            if let (Some(node), Some(mobile)) = (node.upgrade(), mobile.upgrade()) {
                let mut d = mobile.state.lock();
                node.drain_controls(&mobile, &mut d);
            }
        });
    }

    /// Sends the deferred controls, in order (under the entry's lock).
    pub(crate) fn drain_controls(self: &Arc<Self>, mobile: &Arc<Mobile>, d: &mut Driver) {
        let items = std::mem::take(&mut *mobile.control.deferred.lock());
        for (control, request) in items {
            self.send_control(mobile, d, &control, request);
        }
    }

    /// One control item through the entry; `request` makes it an ask.
    pub(super) fn send_control(
        self: &Arc<Self>,
        mobile: &Arc<Mobile>,
        d: &mut Driver,
        control: &Control,
        request: Option<u64>,
    ) {
        match control {
            Control::Link { from } => _ = mobile.control.linked.lock().insert(*from),
            Control::Unlink { from } => _ = mobile.control.linked.lock().remove(from),
            _ => {}
        }
        let payload = match postcard::to_stdvec(control) {
            Ok(p) => p,
            Err(e) => {
                tracing::error!(error = %e, "a control item did not encode");
                return;
            }
        };
        match d.entry.send(CONTROL.to_string(), payload, request) {
            Ok(outs) => self.perform(mobile, d, outs),
            Err(_) => {
                tracing::debug!(?control, "control of a lost actor");
                if let Some(r) = request {
                    self.fail_bound_ask(r);
                }
                if let Control::Watch { key } = control {
                    self.end_watch(mobile, *key, StopReason::NodeLost);
                }
            }
        }
    }

    /// `watch` of the actor from this node: `notify` runs once when it stops.
    pub(crate) fn mobile_watch(
        self: &Arc<Self>,
        mobile: &Arc<Mobile>,
        key: ActorId,
        notify: Notify,
    ) {
        let key = key.as_u64();
        let record = WatchRecord {
            notify,
            at: Binding::default(),
        };
        mobile.control.watches.lock().insert(key, record);
        // An ask, so that the watcher is always told: attached (the host answers), the
        // actor's end (a host whose actor stopped sends `Terminated`), or `NodeLost`
        // (the item was dropped or failed back: no actor that way). `rewatch.rs`.
        let request = self.await_watch(mobile, key, 0);
        self.mobile_control_ask(mobile, Control::Watch { key }, Some(request));
    }

    /// `unwatch` from this node.
    pub(crate) fn mobile_unwatch(self: &Arc<Self>, mobile: &Arc<Mobile>, key: ActorId) {
        let key = key.as_u64();
        if mobile.control.watches.lock().remove(&key).is_some() {
            self.mobile_control(mobile, Control::Unwatch { key });
        }
    }

    /// `migrate_to` of the actor from a node it does not run on: an ask to its host.
    pub(crate) fn mobile_migrate(self: &Arc<Self>, mobile: &Arc<Mobile>, to: &NodeId) -> Migration {
        let (tx, rx) = oneshot::channel();
        let (raw_tx, raw_rx) = oneshot::channel();
        let request = self.next_request();
        self.mobile_asks
            .lock()
            .insert(request, Pending::Raw(raw_tx));
        {
            let mut d = mobile.state.lock();
            self.drain_controls(mobile, &mut d);
            let control = Control::MigrateTo { node: to.clone() };
            self.send_control(mobile, &mut d, &control, Some(request));
        }
        let timeout = self.settings.request_timeout;
        self.io.spawn(async move {
            let result = match tokio::time::timeout(timeout.saturating_mul(2), raw_rx).await {
                Ok(Ok(Ok(bytes))) => postcard::from_bytes::<MigrateResult>(&bytes)
                    .unwrap_or_else(|e| Err(MigrateFailure::Decode(e.to_string()).into())),
                Ok(Ok(Err(_))) | Ok(Err(_)) => Err(MigrateFailure::SourceLost.into()),
                Err(_) => Err(MigrateFailure::Timeout(timeout.saturating_mul(2)).into()),
            };
            let _ = tx.send(result);
        });
        Migration::waiting(rx)
    }

    /// The host applies a control item that reached the actor (instead of queueing it).
    pub(crate) fn apply_control(
        self: &Arc<Self>,
        mobile: &Arc<Mobile>,
        local: &Arc<ErasedRef>,
        msg: QueuedMessage,
    ) {
        let control: Control = match postcard::from_bytes(&msg.payload) {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(error = %e, "a malformed control item dropped");
                return;
            }
        };
        let origin = msg.origin.clone();
        let ops = &mobile.interface.ops;
        match control {
            Control::Stop { link_failed } => {
                let reason = match link_failed {
                    Some(id) => StopReason::LinkFailed(ActorId::from_u64(id)),
                    None => StopReason::Normal,
                };
                (mobile.mobility.stop_in_order)(&**local, reason);
            }
            Control::Kill => (mobile.mobility.kill)(&**local),
            Control::Watch { key } => {
                mobile.control.watchers.lock().insert((origin.clone(), key));
                self.arm(mobile, local);
                let hops = self.hosted_epoch(mobile);
                self.report_watch(mobile, &origin, key, &self.me.clone(), hops, true);
                // A re-sent watch is an ask (`rewatch.rs`): its watcher learns it
                // arrived, after the `WatchAt` above on the same link.
                if let Some((origin, request)) = msg.reply {
                    self.mobile_reply_route(&origin, request)(Outcome::Ok(Vec::new().into()));
                }
            }
            Control::Unwatch { key } => {
                mobile.control.watchers.lock().remove(&(origin, key));
            }
            Control::Link { from } => {
                mobile.control.links.lock().insert((origin, from));
            }
            Control::Unlink { from } => {
                mobile.control.links.lock().remove(&(origin, from));
            }
            Control::LinkFailed { from } => {
                if mobile.control.links.lock().remove(&(origin, from)) {
                    (ops.stop_linked)(&**local, ActorId::from_u64(from));
                }
            }
            Control::MigrateTo { node } => {
                let Some((origin, request)) = msg.reply else {
                    return;
                };
                let reply = self.mobile_reply_route(&origin, request);
                let Some(migration) = (mobile.mobility.migrate)(&**local, &node) else {
                    return reply(Outcome::Failed(WireFailure::Stopped));
                };
                self.io.spawn(async move {
                    let result = migration.await;
                    match postcard::to_stdvec(&result) {
                        Ok(bytes) => reply(Outcome::Ok(bytes.into())),
                        Err(_) => reply(Outcome::Failed(WireFailure::Stopped)),
                    }
                });
            }
        }
    }

    /// The epoch this node hosts the actor at: the hop count of its `WatchAt`s (a
    /// byte, compared in serial-number order, so it keeps ordering past 255 moves).
    fn hosted_epoch(&self, mobile: &Mobile) -> u8 {
        mobile.control.epoch.load(Ordering::Acquire) as u8
    }

    /// Tells the watcher node `to` where its watch `key` is: received by `at` (this
    /// node, `confirmed`), or sent to `at` by this node (a commit).
    fn report_watch(
        &self,
        mobile: &Mobile,
        to: &NodeId,
        key: u64,
        at: &NodeId,
        hops: u8,
        confirmed: bool,
    ) {
        if *to == self.me {
            return self.bind_watch(mobile, key, &self.me, at, hops, confirmed);
        }
        if let Some(peer) = self.known_peer(to) {
            let _ = peer.send(&Traffic::WatchAt {
                actor: mobile.wire.id,
                key,
                at: at.clone(),
                hops,
                confirmed,
            });
        }
    }

    /// A report about a watch made here. A watch bound to a node already lost ends
    /// with `NodeLost`.
    fn bind_watch(
        &self,
        mobile: &Mobile,
        key: u64,
        reporter: &NodeId,
        at: &NodeId,
        hops: u8,
        confirmed: bool,
    ) {
        let lost = {
            let mut watches = mobile.control.watches.lock();
            let Some(w) = watches.get_mut(&key) else {
                return;
            };
            if !w.at.report(&self.me, reporter, at, hops, confirmed) {
                return;
            }
            w.at.nodes.iter().any(|n| self.is_lost_node(n))
        };
        if lost {
            self.end_watch(mobile, key, StopReason::NodeLost);
        }
    }

    /// The source committed a move to `to` at `epoch`: every watcher learns that its
    /// watch was sent there (design §3.5; the target confirms on arrival).
    pub(crate) fn watches_sent(&self, mobile: &Mobile, to: &NodeId, epoch: u32) {
        let watchers: Vec<(NodeId, u64)> = mobile.control.watchers.lock().iter().cloned().collect();
        for (node, key) in watchers {
            self.report_watch(mobile, &node, key, to, epoch as u8, false);
        }
    }

    /// The host watches its own cell once, to tell the actor's watchers when it stops.
    ///
    /// The watch of a cell that has already stopped fires at once, on this thread,
    /// before its key is returned: that key must not be kept as `armed`, or every
    /// later watcher would wait for a watch that has already fired, forever (issue 14:
    /// a `wait_stopped` started after the actor stopped never ended). `fired` is set
    /// before the callback takes `armed`, and read here under `armed`'s lock, so a
    /// callback on another thread either sees the key stored or finds it not stored.
    pub(crate) fn arm(self: &Arc<Self>, mobile: &Arc<Mobile>, local: &Arc<ErasedRef>) {
        if mobile.control.armed.lock().is_some() {
            return;
        }
        let fired = Arc::new(AtomicBool::new(false));
        let (node, weak): (Weak<NodeInner>, Weak<Mobile>) =
            (Arc::downgrade(self), Arc::downgrade(mobile));
        let notify: Notify = {
            let fired = Arc::clone(&fired);
            Box::new(move |t: Terminated| {
                fired.store(true, Ordering::Release);
                if let (Some(node), Some(mobile)) = (node.upgrade(), weak.upgrade()) {
                    node.host_terminated(&mobile, &t.reason);
                }
            })
        };
        let key = (mobile.interface.ops.watch)(&**local, notify);
        let mut armed = mobile.control.armed.lock();
        if armed.is_none() && !fired.load(Ordering::Acquire) {
            *armed = key;
        }
    }

    /// The source is about to commit: its own watch of the cell must not travel with
    /// the cell's watchers (the target arms its own); the watchers and links travel in
    /// the offer, so this node keeps none.
    pub(crate) fn disarm(&self, mobile: &Mobile) {
        let key = mobile.control.armed.lock().take();
        if let (Some(key), Some(local)) = (key, mobile.local()) {
            (mobile.interface.ops.unwatch)(&*local, key);
        }
        mobile.control.watchers.lock().clear();
        mobile.control.links.lock().clear();
    }

    /// What an offer from here carries: the watchers and links.
    pub(crate) fn attached(&self, mobile: &Mobile) -> Attached {
        let watchers = mobile.control.watchers.lock().iter().cloned().collect();
        let links = mobile.control.links.lock().iter().cloned().collect();
        (watchers, links)
    }

    /// The target took over the actor: it keeps the shipped watchers and links,
    /// watches its cell, and tells every watcher node where the actor is now.
    pub(crate) fn adopt_attached(
        self: &Arc<Self>,
        mobile: &Arc<Mobile>,
        migration: u64,
        epoch: u32,
    ) {
        mobile.control.epoch.store(epoch, Ordering::Release);
        let incoming = mobile
            .control
            .incoming
            .lock()
            .take_if(|(m, _)| *m == migration);
        let Some((_, (watchers, links))) = incoming else {
            return;
        };
        mobile.control.links.lock().extend(links);
        mobile
            .control
            .watchers
            .lock()
            .extend(watchers.iter().cloned());
        if let Some(local) = mobile.local() {
            self.arm(mobile, &local);
        }
        let (me, hops) = (self.me.clone(), self.hosted_epoch(mobile));
        for (node, key) in watchers {
            self.report_watch(mobile, &node, key, &me, hops, true);
        }
    }

    /// The actor stopped here: every watcher learns it, once.
    fn host_terminated(self: &Arc<Self>, mobile: &Arc<Mobile>, reason: &StopReason) {
        mobile.control.armed.lock().take();
        *mobile.control.ended.lock() = Some(wire_reason(reason));
        let watchers = std::mem::take(&mut *mobile.control.watchers.lock());
        mobile.control.links.lock().clear();
        let wire = wire_reason(reason);
        for (node, key) in watchers {
            if node == self.me {
                self.end_watch(mobile, key, reason.clone());
            } else if let Some(peer) = self.known_peer(&node) {
                let _ = peer.send(&Traffic::Terminated {
                    id: mobile.wire.id,
                    key,
                    reason: wire.clone(),
                });
            }
        }
    }

    /// Ends the watch `key` made here: its callback runs, once.
    pub(super) fn end_watch(&self, mobile: &Mobile, key: u64, reason: StopReason) {
        let record = mobile.control.watches.lock().remove(&key);
        // A link's watch half has the linked actor's id as its key.
        mobile.control.linked.lock().remove(&key);
        if let Some(w) = record {
            (w.notify)(Terminated {
                id: ActorId::from_u64(mobile.wire.id),
                reason,
            });
        }
    }

    /// The mobile actors here with a watch `key` of an actor whose birth id is `id`.
    fn watched(&self, id: u64, key: u64) -> Option<Arc<Mobile>> {
        let all: Vec<Arc<Mobile>> = self.mobile.lock().values().cloned().collect();
        all.into_iter()
            .find(|m| m.wire.id == id && m.control.watches.lock().contains_key(&key))
    }

    /// A `Terminated` frame that no per-peer watch claimed: a watch of a mobile actor
    /// (its host sends it from wherever the actor stopped). Returns whether one ended.
    pub(crate) fn mobile_terminated(&self, id: u64, key: u64, reason: WireStopReason) -> bool {
        let Some(mobile) = self.watched(id, key) else {
            return false;
        };
        self.end_watch(&mobile, key, stop_reason(reason));
        true
    }

    /// A `WatchAt` from `from`: where a watch made here is now.
    pub(crate) fn receive_watch_at(
        &self,
        from: &NodeId,
        actor: u64,
        key: u64,
        at: &NodeId,
        hops: u8,
        confirmed: bool,
    ) {
        if let Some(mobile) = self.watched(actor, key) {
            self.bind_watch(&mobile, key, from, at, hops, confirmed);
        }
    }

    /// `lost` was declared lost: watches that may have been there are sent again,
    /// and end with `NodeLost` only if the actor is not found (`rewatch.rs`); an actor
    /// hosted here linked with an actor there stops (as for any remote link).
    pub(crate) fn control_node_lost(self: &Arc<Self>, mobile: &Arc<Mobile>, lost: &NodeId) {
        for key in self.watches_through(mobile, lost) {
            self.rewatch(mobile, key, 0);
        }
        mobile.control.watchers.lock().retain(|(n, _)| n != lost);
        let broken: Vec<u64> = {
            let mut links = mobile.control.links.lock();
            let broken = links
                .iter()
                .filter(|(n, _)| n == lost)
                .map(|(_, f)| *f)
                .collect();
            links.retain(|(n, _)| n != lost);
            broken
        };
        if let Some(local) = mobile.local() {
            for from in broken {
                (mobile.interface.ops.stop_linked)(&*local, ActorId::from_u64(from));
            }
        }
    }
}
