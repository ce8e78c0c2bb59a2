//! Frames that arrive from a peer, handled in arrival order on the link's reader task
//! (so messages from one node to one actor keep their order).

use std::sync::Arc;

use odeon::{ActorId, StopReason, Terminated};

use super::peer::{Peer, Pending, Served};
use super::{Export, NodeInner};
use crate::interface::{ReplyRoute, ask_error};
use crate::wire::{Outcome, Traffic, WireFailure, WireStopReason, WireTrace};

/// What a link's reader keeps between frames.
#[derive(Default)]
pub(crate) struct Inbound {
    /// The actor the last message went to. A stream of messages to one actor looks
    /// its export up once, not once per frame (the table's lock and hash were 4% of
    /// the remote throughput benchmark's profile). An entry outlives its export only
    /// when the actor has stopped, and then delivery fails as the lookup would have
    /// (`Stopped`).
    last: Option<(u64, Export)>,
}

impl NodeInner {
    pub(crate) fn dispatch(
        self: &Arc<Self>,
        peer: &Arc<Peer>,
        traffic: Traffic<'_>,
        inbound: &mut Inbound,
    ) {
        match traffic {
            Traffic::Tell {
                to,
                message,
                payload,
            } => self.remote_tell(peer, inbound, to, &message, &payload),
            Traffic::TracedTell {
                to,
                message,
                payload,
                trace,
            } => crate::observe::in_trace(trace, |_| {
                self.remote_tell(peer, inbound, to, &message, &payload);
            }),
            Traffic::Ask {
                to,
                request,
                message,
                payload,
            } => self.remote_ask(peer, inbound, to, request, (&message, &payload), None),
            Traffic::TracedAsk {
                to,
                request,
                message,
                payload,
                trace,
            } => crate::observe::in_trace(trace, |span| {
                self.remote_ask(peer, inbound, to, request, (&message, &payload), span);
            }),
            Traffic::Reply { request, outcome } => self.complete(peer, request, outcome),
            Traffic::TracedReply {
                request,
                outcome,
                trace,
            } => {
                crate::observe::replied(&peer.id, request, trace);
                self.complete(peer, request, outcome);
            }
            Traffic::Stop { to } => {
                if let Some(e) = self.export(to) {
                    (e.interface.ops.stop)(&*e.target);
                }
            }
            Traffic::Watch { to, key } => self.serve_watch(peer, to, key),
            Traffic::Unwatch { to, key } => {
                if let Some(s) = peer.state.lock().served.remove(&(to, key)) {
                    (s.interface.ops.unwatch)(&*s.target, s.key);
                }
            }
            Traffic::Terminated { id, key, reason } => {
                let notify = peer.state.lock().watches.remove(&(id, key));
                if notify.is_none() {
                    // A watch of a mobile actor: its host sends this from anywhere.
                    self.mobile_terminated(id, key, reason);
                } else if let Some(notify) = notify {
                    notify(Terminated {
                        id: ActorId::from_u64(id),
                        reason: stop_reason_from_wire(reason),
                    });
                }
            }
            // An actor that is gone needs no link: the linker's watch of it (sent just
            // before) already reports that it stopped.
            Traffic::Link { to, from } => {
                if self.export(to).is_some() {
                    peer.state.lock().links.insert((to, from));
                }
            }
            Traffic::Unlink { to, from } => {
                peer.state.lock().links.remove(&(to, from));
            }
            Traffic::LinkFailed { to, from } => {
                if peer.state.lock().links.remove(&(to, from)) {
                    self.break_link(to, from);
                }
            }
            Traffic::Spawn {
                request,
                actor_type,
                args,
            } => {
                let outcome = self.spawn_here(&actor_type, &args);
                (self.route(peer, request, None))(outcome);
            }
            Traffic::Lookup { request, name } => {
                let outcome = self.lookup_here(&name);
                (self.route(peer, request, None))(outcome);
            }
            Traffic::Leaving => self.forget_leaving(peer),
            Traffic::Lost => self.forget_peer(peer, "it declared this node lost"),
            Traffic::Heartbeat => {}
            // Sharing across nodes (issue 16, `sharing.rs`).
            Traffic::Batch { to, items } => self.serve_batch(peer, to, &items),
            Traffic::Reserve {
                to,
                request,
                lease_ms,
            } => self.serve_reserve(peer, to, request, lease_ms),
            Traffic::SessionTell {
                session,
                message,
                payload,
            } => self.session_message(peer, session, None, (&message, &payload)),
            Traffic::SessionAsk {
                session,
                request,
                message,
                payload,
            } => self.session_message(peer, session, Some(request), (&message, &payload)),
            Traffic::Release { session } => self.session_release(peer, session),
            Traffic::ObjectTell {
                object,
                message,
                payload,
            } => self.object_use(peer, object, None, (&message, &payload)),
            Traffic::ObjectAsk {
                object,
                request,
                message,
                payload,
            } => self.object_use(peer, object, Some(request), (&message, &payload)),
            // Protocol version 3's mobility frames, for the node's mobile entries
            // (`crate::migration`).
            other @ (Traffic::MTell { .. }
            | Traffic::MAsk { .. }
            | Traffic::Relay { .. }
            | Traffic::Notice { .. }
            | Traffic::MigrateOffer { .. }
            | Traffic::MigrateChunk { .. }
            | Traffic::MigrateReady { .. }
            | Traffic::MigrateRefused { .. }
            | Traffic::MigrateCommit { .. }
            | Traffic::MigrateAbort { .. }
            | Traffic::Hint { .. }
            | Traffic::Flush { .. }
            | Traffic::FlushAck { .. }
            | Traffic::Gone { .. }
            | Traffic::Unpin { .. }
            | Traffic::Reflush { .. }
            | Traffic::Locate { .. }
            | Traffic::Located { .. }
            | Traffic::AskAt { .. }
            | Traffic::WatchAt { .. }
            | Traffic::ChildFailed { .. }
            | Traffic::Restart { .. }) => self.dispatch_mobile(peer, other),
            other @ (Traffic::Attach { .. }
            | Traffic::Attached { .. }
            | Traffic::Duplicate
            | Traffic::Reset) => {
                tracing::warn!(peer = %peer.id, frame = ?other, "attach frame on an open link; ignored");
            }
        }
    }

    fn remote_tell(
        self: &Arc<Self>,
        peer: &Arc<Peer>,
        inbound: &mut Inbound,
        to: u64,
        message: &str,
        payload: &[u8],
    ) {
        if let Err(f) = self.deliver(inbound, to, message, payload, None) {
            tracing::warn!(peer = %peer.id, to, %message, failure = ?f, "remote tell not delivered");
        }
    }

    fn remote_ask(
        self: &Arc<Self>,
        peer: &Arc<Peer>,
        inbound: &mut Inbound,
        to: u64,
        request: u64,
        (message, payload): (&str, &[u8]),
        span: Option<WireTrace>,
    ) {
        let route = self.route(peer, request, span);
        let reply_on_error = self.route(peer, request, span);
        if let Err(f) = self.deliver(inbound, to, message, payload, Some(route)) {
            tracing::warn!(peer = %peer.id, to, %message, failure = ?f, "remote ask refused");
            reply_on_error(Outcome::Failed(f));
        }
    }

    fn deliver(
        self: &Arc<Self>,
        inbound: &mut Inbound,
        to: u64,
        message: &str,
        payload: &[u8],
        reply: Option<ReplyRoute>,
    ) -> Result<(), WireFailure> {
        let export = match &inbound.last {
            Some((token, export)) if *token == to => export,
            _ => {
                let Some(export) = self.export(to) else {
                    return Err(WireFailure::Stopped);
                };
                &inbound.last.insert((to, export)).1
            }
        };
        let Some(entry) = export.interface.by_name(message) else {
            return Err(WireFailure::Rejected(format!(
                "{} has no remote message named {message:?}",
                export.interface.actor_type
            )));
        };
        (entry.deliver)(&*export.target, payload, reply, &self.codec)
    }

    /// Where the reply to `request` goes: back to `peer`, with `span` (the handling
    /// span of a traced ask, `observe/`) if there is one.
    pub(crate) fn route(
        &self,
        peer: &Arc<Peer>,
        request: u64,
        span: Option<WireTrace>,
    ) -> ReplyRoute {
        let peer = peer.clone();
        Box::new(move |outcome| {
            let reply = match span {
                None => Traffic::Reply { request, outcome },
                Some(trace) => Traffic::TracedReply {
                    request,
                    outcome,
                    trace,
                },
            };
            if let Err(e) = peer.send(&reply) {
                tracing::debug!(peer = %peer.id, request, error = %e, "reply not sent");
            }
        })
    }

    fn complete(&self, peer: &Arc<Peer>, request: u64, outcome: Outcome<'_>) {
        let pending = peer.state.lock().pending.remove(&request);
        let Some(pending) = pending else {
            // Only on a miss: an ask to a mobile actor, answered by wherever it runs.
            if !self.complete_mobile(request, outcome) {
                tracing::debug!(peer = %peer.id, request, "reply to no pending request");
            }
            return;
        };
        self.finish(pending, request, outcome);
    }

    /// Completes a pending request with its reply.
    pub(crate) fn finish(&self, pending: Pending, request: u64, outcome: Outcome<'_>) {
        match pending {
            Pending::Raw(tx) => {
                let _ = tx.send(match outcome {
                    Outcome::Ok(bytes) => Ok(bytes.into_owned()),
                    Outcome::Failed(f) => Err(ask_error(f)),
                });
            }
            Pending::Ask { slot, decode } => match outcome {
                Outcome::Ok(bytes) => match decode(&bytes, &*self.codec()) {
                    Ok(value) => slot.reply(value),
                    Err(e) => {
                        tracing::warn!(request, error = %e, "malformed reply");
                        slot.fail(odeon::AskError::Rejected(format!("malformed reply: {e}")));
                    }
                },
                Outcome::Failed(f) => slot.fail(ask_error(f)),
            },
        }
    }

    fn serve_watch(self: &Arc<Self>, peer: &Arc<Peer>, to: u64, key: u64) {
        let reply_terminated = {
            let peer = peer.clone();
            move |t: Terminated| {
                peer.state.lock().served.remove(&(to, key));
                let reason = wire_stop_reason(&t.reason);
                let _ = peer.send(&Traffic::Terminated {
                    id: to,
                    key,
                    reason,
                });
            }
        };
        let Some(export) = self.export(to) else {
            reply_terminated(Terminated {
                id: ActorId::from_u64(to),
                reason: StopReason::Normal,
            });
            return;
        };
        let Some(local_key) =
            (export.interface.ops.watch)(&*export.target, Box::new(reply_terminated))
        else {
            return;
        };
        peer.state.lock().served.insert(
            (to, key),
            Served {
                key: local_key,
                target: export.target.clone(),
                interface: export.interface,
            },
        );
    }
}

/// A stop reason as a `Terminated` frame carries it: the reason itself (protocol 4),
/// so a remote watcher sees what a local one would.
pub(crate) fn wire_stop_reason(reason: &StopReason) -> WireStopReason {
    match reason {
        StopReason::Normal | StopReason::Restarting => WireStopReason::Normal,
        StopReason::Shutdown => WireStopReason::Shutdown,
        StopReason::Panicked(m) => WireStopReason::Panicked(m.clone()),
        StopReason::Failed(m) => WireStopReason::FailedWith(m.clone()),
        StopReason::LinkFailed(id) => WireStopReason::LinkFailed(id.as_u64()),
        StopReason::RestartLimit => WireStopReason::RestartLimit,
        StopReason::StartFailed(m) => WireStopReason::StartFailed(m.clone()),
        StopReason::NodeLost => WireStopReason::NodeLost,
        StopReason::Killed => WireStopReason::Killed,
        StopReason::Unreferenced => WireStopReason::Unreferenced,
        StopReason::ParentStopped => WireStopReason::ParentStopped,
        // A reason added to odeon later: its text, as a failure or a normal stop.
        other if other.is_failure() => WireStopReason::Failed(other.to_string()),
        _ => WireStopReason::Normal,
    }
}

/// The reason a `Terminated` frame carries, as the watcher gets it.
pub(crate) fn stop_reason_from_wire(reason: WireStopReason) -> StopReason {
    match reason {
        WireStopReason::Normal => StopReason::Normal,
        WireStopReason::Shutdown => StopReason::Shutdown,
        // Only for a failure the sender had no variant for: its text.
        WireStopReason::Failed(m) | WireStopReason::Panicked(m) => StopReason::Panicked(m),
        WireStopReason::FailedWith(m) => StopReason::Failed(m),
        WireStopReason::LinkFailed(id) => StopReason::LinkFailed(ActorId::from_u64(id)),
        WireStopReason::RestartLimit => StopReason::RestartLimit,
        WireStopReason::StartFailed(m) => StopReason::StartFailed(m),
        WireStopReason::NodeLost => StopReason::NodeLost,
        WireStopReason::Killed => StopReason::Killed,
        WireStopReason::Unreferenced => StopReason::Unreferenced,
        WireStopReason::ParentStopped => StopReason::ParentStopped,
    }
}
