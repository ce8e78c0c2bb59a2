//! Watches sent as asks, and re-bound after a node loss (design §3.5, §4; issue 14).
//!
//! Every `Watch` item is an ask ([`NodeInner::await_watch`]), the first one too: a
//! path that cannot take it fails it back instead of dropping it, so the watcher is
//! always told (attached, the actor's end, or `NodeLost`).
//!
//! A watch made on this node is bound to the nodes that may host the actor
//! (`WatchRecord::at`), as `WatchAt` reports say. When
//! one of them is declared lost the actor may still live: the node lost may be one it
//! left (the source's "sent to target" report came, the target's confirmation not
//! yet), or the watch's own `Watch` item may have been on its way through the lost
//! node (no report yet: the binding is empty) and died with it. Ending the watch with
//! `NodeLost` then would report an actor's end while it runs on.
//!
//! Instead the watch is sent again, as an ask: a `Watch` control item with a reply
//! route, through this node's entry (so along its route, which relocates if it went
//! through the lost node, step 11). A watch is idempotent at the host (its watchers
//! are a set of (node, key)), so a second copy is harmless. The host adds the
//! watcher, confirms with `WatchAt` and answers the ask; the watch then reports the
//! actor's real stop reason when it stops, wherever it runs. The watch ends with
//! `NodeLost` only when the re-sent watch cannot reach the actor:
//! - the route is dead (relocation found no copy): the send fails, or the item is
//!   dropped and fails back (`Stopped`);
//! - the re-sent watch itself was bound to a node declared lost (`Unreachable`): it is
//!   sent once more, up to [`MAX_ATTEMPTS`] times (each attempt ends only with a
//!   loss or a failed route, so this is a guard, not a timer).
//!
//! A watch that is the watch half of a link made here (`Context::link`: its key is
//! the linked actor's id) is preceded by the link's `Link` item, sent again too, so
//! that the linked actor's failure still stops the moved actor.
//!
//! An answer that does not come within twice the request timeout leaves the watch in
//! place (logged): a host of an older version answers nothing, and the actor's end
//! still reaches the watcher if the host has it.

use std::sync::Arc;

use odeon::{AskError, StopReason};
use tokio::sync::oneshot;

use super::control::{Control, stop_reason};
use super::driver::Mobile;
use crate::node::{NodeInner, Pending};
use crate::wire::{NodeId, Outcome, QueuedMessage, Traffic, WireStopReason};

/// How many times one loss re-sends a watch before it gives up with `NodeLost`.
pub(crate) const MAX_ATTEMPTS: u32 = 8;

impl NodeInner {
    /// The watches made here that `lost` may have held: those bound to it, and those
    /// not bound yet (their `Watch` item may have been on its way through it).
    pub(crate) fn watches_through(&self, mobile: &Mobile, lost: &NodeId) -> Vec<u64> {
        mobile
            .control
            .watches
            .lock()
            .iter()
            .filter(|(_, w)| w.at.hops.is_none() || w.at.nodes.contains(lost))
            .map(|(k, _)| *k)
            .collect()
    }

    /// Sends the watch `key` again, as an ask through the entry (module docs).
    /// `attempt` counts the re-sends after one loss.
    pub(crate) fn rewatch(self: &Arc<Self>, mobile: &Arc<Mobile>, key: u64, attempt: u32) {
        if !mobile.control.watches.lock().contains_key(&key) {
            return; // ended or unwatched meanwhile
        }
        if attempt >= MAX_ATTEMPTS {
            tracing::debug!(key, "a watch could not be re-sent; it ends with NodeLost");
            return self.end_watch(mobile, key, StopReason::NodeLost);
        }
        let request = self.await_watch(mobile, key, attempt);
        let (node, weak) = (Arc::downgrade(self), Arc::downgrade(mobile));
        // The caller may hold locks a send takes (a loss is handled on a link's
        // thread): the item goes out from a task, behind the controls already waiting.
        self.io.spawn(async move {
            let (Some(node), Some(mobile)) = (node.upgrade(), weak.upgrade()) else {
                return;
            };
            let mut d = mobile.state.lock();
            node.drain_controls(&mobile, &mut d);
            // The watch half of a link made here: its `Link` half may have died
            // with the node too (the host's links are a set as well).
            if mobile.control.linked.lock().contains(&key) {
                node.send_control(&mobile, &mut d, &Control::Link { from: key }, None);
            }
            node.send_control(&mobile, &mut d, &Control::Watch { key }, Some(request));
        });
    }

    /// Makes a request id for a `Watch` item sent as an ask (the first one, attempt
    /// 0, or one re-sent after a loss), and a task that acts on its answer:
    /// - answered: the host added the watcher (or, if the actor had stopped there, it
    ///   sent `Terminated` first, which ended the watch);
    /// - `Unreachable` (bound to a node declared lost): sent again ([`Self::rewatch`]);
    /// - any other failure (the item was dropped: a dead route, a node that forgot the
    ///   actor): no actor that way, the watch ends with `NodeLost`;
    /// - no answer within twice the request timeout: the watch stays (logged).
    pub(crate) fn await_watch(
        self: &Arc<Self>,
        mobile: &Arc<Mobile>,
        key: u64,
        attempt: u32,
    ) -> u64 {
        let (tx, rx) = oneshot::channel();
        let request = self.next_request();
        self.mobile_asks.lock().insert(request, Pending::Raw(tx));
        let timeout = self.settings.request_timeout.saturating_mul(2);
        let (node, weak) = (Arc::downgrade(self), Arc::downgrade(mobile));
        self.io.spawn(async move {
            let got = tokio::time::timeout(timeout, rx).await;
            let (Some(node), Some(mobile)) = (node.upgrade(), weak.upgrade()) else {
                return;
            };
            match got {
                Ok(Ok(Ok(_))) => tracing::debug!(key, attempt, "a watch is attached"),
                Ok(Ok(Err(AskError::Unreachable))) => node.rewatch(&mobile, key, attempt + 1),
                Ok(Ok(Err(error))) => {
                    tracing::debug!(key, %error, "a watch found no actor");
                    node.end_watch(&mobile, key, StopReason::NodeLost);
                }
                Ok(Err(_)) => {} // the node is shutting down
                Err(_) => {
                    node.mobile_asks.lock().remove(&request);
                    node.ask_bindings.lock().remove(&request);
                    tracing::warn!(key, "a watch was not answered; the watch stays");
                }
            }
        });
        request
    }

    /// A `Watch` item that reached the host after its actor stopped (no cell here):
    /// the watcher is told the end at once, with the reason the host recorded (if it
    /// watched its cell), else `Normal` (what a watch of a stopped non-mobile actor is
    /// told), and the ask is answered. Returns whether `msg` was such a watch.
    pub(crate) fn watch_of_stopped(
        self: &Arc<Self>,
        mobile: &Arc<Mobile>,
        msg: &QueuedMessage,
    ) -> bool {
        let Ok(Control::Watch { key }) = postcard::from_bytes::<Control>(&msg.payload) else {
            return false;
        };
        let reason = (mobile.control.ended.lock().clone()).unwrap_or(WireStopReason::Normal);
        if msg.origin == self.me {
            self.end_watch(mobile, key, stop_reason(reason));
        } else if let Some(peer) = self.known_peer(&msg.origin) {
            let _ = peer.send(&Traffic::Terminated {
                id: mobile.wire.id,
                key,
                reason,
            });
        }
        // After the `Terminated` on the same link: the watcher's answer finds the
        // watch already ended.
        if let Some((origin, request)) = &msg.reply {
            self.mobile_reply_route(origin, *request)(Outcome::Ok(Vec::new().into()));
        }
        true
    }
}

#[cfg(test)]
mod tests {
    //! The two windows in which a node loss used to end a watch of a live actor, put
    //! in place by hand (a real crash hits them only by chance): the source's "sent to
    //! target" report came and the target's confirmation not yet, and a `Watch` item
    //! that died on its way through the lost node.

    use std::sync::Arc;
    use std::time::Duration;

    use odeon::{Actor, ActorRef, Context, Handler, Message, StopReason, System, Terminated};
    use parking_lot::Mutex;

    use super::super::binding::Binding;
    use super::super::driver::Mobile;
    use super::super::tests::fixture::{Ping, Spot, entries, eventually, find, linked};
    use crate::wire::NodeId;
    use crate::{MigrateExt, Node};

    /// Links with a `Spot` on request; fails on `Boom`.
    struct Linker;
    impl Actor for Linker {}
    struct LinkIt(ActorRef<Spot>);
    impl Message for LinkIt {
        type Reply = ();
    }
    impl Handler<LinkIt> for Linker {
        fn handle(&mut self, m: LinkIt, cx: &mut Context<Self>) {
            cx.link(&m.0);
        }
    }
    struct Boom;
    impl Message for Boom {
        type Reply = ();
    }
    impl Handler<Boom> for Linker {
        fn handle(&mut self, _: Boom, _: &mut Context<Self>) {
            panic!("the linker fails on request");
        }
    }

    /// Watches a `Spot` and records the reasons it is told.
    struct Observer(Arc<Mutex<Vec<StopReason>>>);
    impl Actor for Observer {}
    impl Handler<Terminated> for Observer {
        fn handle(&mut self, t: Terminated, _: &mut Context<Self>) {
            self.0.lock().push(t.reason);
        }
    }
    struct WatchIt(ActorRef<Spot>);
    impl Message for WatchIt {
        type Reply = ();
    }
    impl Handler<WatchIt> for Observer {
        fn handle(&mut self, m: WatchIt, cx: &mut Context<Self>) {
            cx.watch(&m.0);
        }
    }

    /// Nodes h (the birth node), t and x, linked, each declaring a peer lost after
    /// 1.5 s of silence.
    fn three_nodes(names: [&str; 3]) -> (Vec<System>, [Node; 3]) {
        linked(names, |b| {
            b.lost_after(Duration::from_millis(1_500)).mobile::<Spot>()
        })
    }

    /// Waits until the observer is told of an end, then checks that it was told
    /// `reason`, and once (a second notice would have come within the pause).
    fn told_once(seen: &Mutex<Vec<StopReason>>, reason: StopReason) {
        let got = eventually(|| {
            let s = seen.lock().clone();
            (!s.is_empty()).then_some(s)
        })
        .expect("the watcher is told");
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(got, std::slice::from_ref(&reason));
        assert_eq!(*seen.lock(), [reason], "told once");
    }

    /// The entry on `n` that has a watch made there.
    fn watched(n: &Node) -> Option<Arc<Mobile>> {
        entries(n)
            .into_iter()
            .find(|m| !m.control.watches.lock().is_empty())
    }

    /// The nodes the one watch made on `n` is bound to (`None`: no watch, or not bound).
    fn bound(n: &Node) -> Option<Vec<NodeId>> {
        let m = watched(n)?;
        let watches = m.control.watches.lock();
        let w = watches.values().next()?;
        w.at.hops.map(|_| w.at.nodes.iter().cloned().collect())
    }

    /// Nodes h (the birth node), t and x; a `Spot` born on h moved to t, watched from
    /// x; `window` puts x's watch (and t's watcher list) in the state a crash of h
    /// might leave; then h is lost. The watch must stay, re-bound to t, and report
    /// the actor's real end.
    fn watch_survives_the_loss_of_h(window: impl FnOnce(&Node, &Node, &Node)) {
        let (systems, [h, t, x]) = three_nodes(["rw-h", "rw-t", "rw-x"]);
        let spot = systems[0].spawn(Spot);
        h.register("spot", &spot).unwrap();
        let from_x = find::<Spot>(&systems[2], &x, "spot");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let observer = systems[2].spawn(Observer(seen.clone()));
        systems[2]
            .block_on(observer.ask(WatchIt(from_x.clone())))
            .unwrap();
        eventually(|| (bound(&x)? == [h.id().clone()]).then_some(()))
            .expect("x's watch is bound to h");
        let moved = systems[0].block_on(spot.migrate_to(t.id()));
        assert!(moved.is_ok(), "{moved:?}");
        eventually(|| (bound(&x)? == [t.id().clone()]).then_some(()))
            .expect("x's watch is bound to t");
        window(&h, &t, &x);
        let h_id = h.id().clone();
        drop(spot);
        drop(h);
        eventually(|| (!x.peers().contains(&h_id)).then_some(())).expect("x declares h lost");
        eventually(|| (bound(&x)? == [t.id().clone()]).then_some(()))
            .expect("the watch stays, re-bound to t");
        assert!(seen.lock().is_empty(), "no end reported: {:?}", seen.lock());
        let pong = systems[2].block_on(from_x.ask(Ping).timeout(Duration::from_secs(20)));
        assert_eq!(pong, Ok(7), "the actor lives on t");
        from_x.stop();
        told_once(&seen, StopReason::Normal);
    }

    #[test]
    fn a_watch_bound_to_the_node_the_actor_left_and_its_target_stays_when_that_node_is_lost() {
        // h reported "sent to t"; t's confirmation has not come yet.
        watch_survives_the_loss_of_h(|h, t, x| {
            let m = watched(x).expect("x's watch");
            let mut watches = m.control.watches.lock();
            let w = watches.values_mut().next().expect("one watch");
            let hops = w.at.hops;
            w.at = Binding {
                nodes: [h.id().clone(), t.id().clone()].into_iter().collect(),
                hops,
            };
        });
    }

    #[test]
    fn a_watch_whose_item_died_with_the_lost_node_is_sent_again() {
        // x's `Watch` item was on its way through h when h died: unbound on x, and t
        // does not know the watcher.
        watch_survives_the_loss_of_h(|_, t, x| {
            let m = watched(x).expect("x's watch");
            m.control
                .watches
                .lock()
                .values_mut()
                .next()
                .expect("one watch")
                .at = Binding::default();
            for m in entries(t) {
                m.control.watchers.lock().retain(|(n, _)| n != x.id());
            }
        });
    }

    #[test]
    fn a_link_whose_items_died_with_the_lost_node_is_sent_again_and_still_stops_the_actor() {
        // x's actor linked with the Spot while it ran on h; then, as if both `Link`
        // and `Watch` items had died with h, t knows neither and x's watch half is
        // unbound. After h's loss the linker's failure must still stop the Spot.
        let (systems, [h, t, x]) = three_nodes(["rl-h", "rl-t", "rl-x"]);
        let spot = systems[0].spawn(Spot);
        h.register("spot", &spot).unwrap();
        let from_x = find::<Spot>(&systems[2], &x, "spot");
        let linker = systems[2].spawn(Linker);
        systems[2]
            .block_on(linker.ask(LinkIt(from_x.clone())))
            .unwrap();
        let moved = systems[0].block_on(spot.migrate_to(t.id()));
        assert!(moved.is_ok(), "{moved:?}");
        eventually(|| (bound(&x)? == [t.id().clone()]).then_some(()))
            .expect("x's link is bound to t");
        let m = watched(&x).expect("x's watch half");
        m.control
            .watches
            .lock()
            .values_mut()
            .next()
            .expect("one")
            .at = Binding::default();
        for m in entries(&t) {
            m.control.watchers.lock().retain(|(n, _)| n != x.id());
            m.control.links.lock().retain(|(n, _)| n != x.id());
        }
        let h_id = h.id().clone();
        drop(spot);
        drop(h);
        eventually(|| (!x.peers().contains(&h_id)).then_some(())).expect("x declares h lost");
        eventually(|| (bound(&x)? == [t.id().clone()]).then_some(()))
            .expect("the link's watch half is re-bound to t");
        let pong = systems[2].block_on(from_x.ask(Ping).timeout(Duration::from_secs(20)));
        assert_eq!(pong, Ok(7), "the actor lives on t");
        linker.tell(Boom).unwrap();
        eventually(|| {
            systems[2]
                .block_on(from_x.ask(Ping).timeout(Duration::from_secs(2)))
                .is_err()
                .then_some(())
        })
        .expect("the linker's failure stopped the moved actor");
    }

    /// Issue 14: a first `Watch` used to be a one-way item, dropped quietly by a node
    /// that has no entry for the actor (or a dead route, or a straggler check), and
    /// the watcher was never told anything. It is an ask now: it fails back, and the
    /// watch ends with `NodeLost`. Put in place by hand: x's route leads to t, which
    /// never knew the actor (as if it had forgotten it).
    #[test]
    fn a_first_watch_dropped_by_a_node_with_no_entry_fails_back_and_ends_the_watch() {
        use super::super::entry::{Place, Route};
        let (systems, [h, t, x]) = three_nodes(["fw-h", "fw-t", "fw-x"]);
        let spot = systems[0].spawn(Spot);
        h.register("spot", &spot).unwrap();
        let from_x = find::<Spot>(&systems[2], &x, "spot");
        let on_x = entries(&x);
        assert_eq!(on_x.len(), 1, "x has one entry, for the Spot");
        on_x[0].state.lock().entry.place = Place::Away {
            route: Route::Direct(t.id().clone()),
        };
        let seen = Arc::new(Mutex::new(Vec::new()));
        let observer = systems[2].spawn(Observer(seen.clone()));
        systems[2]
            .block_on(observer.ask(WatchIt(from_x.clone())))
            .unwrap();
        told_once(&seen, StopReason::NodeLost);
        drop(spot);
    }
}
