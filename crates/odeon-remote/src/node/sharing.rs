//! Sharing across nodes (issue 16): atomic batches and reservations of remote refs.
//!
//! # Batches
//! The sender encodes every message of the batch and sends them as one
//! [`Traffic::Batch`] frame (one outbox place). The actor's node decodes them all
//! into one local batch (`odeon::remote::DetachedBatch`) before pushing anything, then
//! pushes it with the one atomic swap a local batch uses. So the batch is all or
//! nothing *at the receiving node*: a frame arrives whole or not at all (a lost link
//! drops whole frames), a message that does not decode fails the whole batch before
//! anything is pushed, and the push itself is one operation. What the sender cannot
//! know is whether a frame lost with its link arrived: its asks then fail with
//! `Unreachable` (outcome unknown, as for any remote ask), but the batch was then
//! handled whole or not at all.
//!
//! # Reservations
//! `reserve()` sends [`Traffic::Reserve`] (no outbox place, like a signal) and waits
//! for its reply: the actor's node reserves the actor locally with the lease the
//! holder asked for and answers once granted (one round trip). The session is named
//! by the request id. Messages through the holder's `Reservation` travel as
//! `SessionTell`/`SessionAsk` frames on the pair's one link, in order, and the
//! actor's node hands them to its local reservation. Dropping the holder's
//! `Reservation` sends `Release`, which arrives after those messages. The lease is
//! kept at the actor's node (the holder cannot extend it by being slow); losing the
//! holder's node drops its sessions there, which releases them.

use std::any::Any;
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use odeon::remote::{OpenSession, Outgoing, Refusal, RemoteSession};
use odeon::{AskError, Ended, ReserveError};

use super::NodeInner;
use super::endpoint::RemoteEndpoint;
use super::peer::{Peer, Pending, Refused};
use crate::interface::{Interface, WireReply, WireUse};
use crate::wire::{BatchItem, Outcome, Traffic, WireFailure};

/// A reservation this node keeps for a peer's holder.
pub(crate) enum ServedSession {
    /// Requested; waiting for the actor to grant it.
    Opening(tokio::task::AbortHandle),
    /// Granted: the local `Reservation<A>`, erased, and its actor's interface.
    Held(Arc<dyn Any + Send + Sync>, &'static Interface),
}

impl ServedSession {
    /// Ends it: a request still waiting for its grant is given up (its `Reserve`
    /// future is dropped, which frees the actor); a held one is released.
    pub(crate) fn end(self) {
        if let ServedSession::Opening(h) = &self {
            h.abort();
        }
    }
}

fn refusal(why: Refused, what: &str) -> Refusal {
    match why {
        Refused::Full => Refusal::Full,
        Refused::Unreachable => Refusal::Unreachable,
        Refused::Rejected(e) => {
            tracing::error!(what, error = %e, "frame did not encode");
            Refusal::NotRemote
        }
    }
}

/// Encodes `out` (a message whose wire name, encoder and reply decoder are `wire`) and
/// sends it to `peer` in the frame `frame` builds: a tell for `None`, an ask for
/// `Some(request)`, whose reply slot then waits under that fresh request id. A frame
/// the link refuses gives the message back with its slot. Shared by the holder's end
/// of a reservation and a handle to a bestowed object on another node.
pub(crate) fn send_use(
    node: &NodeInner,
    peer: &Peer,
    mut out: Outgoing,
    (wire_name, encode, decode_reply): WireUse,
    frame: impl FnOnce(Option<u64>, Cow<'static, str>, Cow<'static, [u8]>) -> Traffic<'static>,
) -> Result<(), (Refusal, Outgoing)> {
    let payload = match encode(&*out.message, &*node.codec()) {
        Ok(p) => p,
        Err(e) => {
            tracing::error!(message = wire_name, error = %e, "message did not encode");
            return Err((Refusal::NotRemote, out));
        }
    };
    let request = out.reply.take().map(|slot| {
        let r = node.next_request();
        peer.state.lock().pending.insert(
            r,
            Pending::Ask {
                slot,
                decode: decode_reply,
            },
        );
        r
    });
    let traffic = frame(request, Cow::Borrowed(wire_name), Cow::Owned(payload));
    peer.send_message(&traffic).map_err(|why| {
        if let Some(Pending::Ask { slot, .. }) =
            request.and_then(|r| peer.state.lock().pending.remove(&r))
        {
            out.reply = Some(slot);
        }
        (refusal(why, wire_name), out)
    })
}

impl RemoteEndpoint {
    /// `Endpoint::send_batch`: one frame, one outbox place.
    pub(crate) fn batch(&self, mut msgs: Vec<Outgoing>) -> Result<(), (Refusal, Vec<Outgoing>)> {
        if self.peer.is_lost() {
            return Err((Refusal::Unreachable, msgs));
        }
        if self.stopped.load(Ordering::Acquire) {
            return Err((Refusal::Stopped, msgs));
        }
        let codec = self.node.codec();
        let mut items = Vec::with_capacity(msgs.len());
        for out in &msgs {
            let Some(entry) = self.interface.by_type(out.type_id) else {
                return Err((Refusal::NotRemote, msgs));
            };
            match (entry.encode)(&*out.message, &*codec) {
                Ok(p) => items.push((entry, p)),
                Err(e) => {
                    tracing::error!(message = entry.wire_name, error = %e, "message did not encode");
                    return Err((Refusal::NotRemote, msgs));
                }
            }
        }
        let mut requests = Vec::new();
        let mut wire = Vec::with_capacity(items.len());
        for (out, (entry, payload)) in msgs.iter_mut().zip(items) {
            let request = out.reply.take().map(|slot| {
                let request = self.node.next_request();
                self.peer.state.lock().pending.insert(
                    request,
                    Pending::Ask {
                        slot,
                        decode: entry.decode_reply,
                    },
                );
                request
            });
            requests.push(request);
            wire.push(BatchItem {
                request,
                message: Cow::Borrowed(entry.wire_name),
                payload: Cow::Owned(payload),
            });
        }
        let traffic = Traffic::Batch {
            to: self.token,
            items: wire,
        };
        match self.peer.send_message(&traffic) {
            Ok(()) => Ok(()),
            Err(why) => {
                // Give the reply slots back, so that the caller fails them precisely.
                let mut st = self.peer.state.lock();
                for (out, request) in msgs.iter_mut().zip(requests) {
                    if let Some(Pending::Ask { slot, .. }) =
                        request.and_then(|r| st.pending.remove(&r))
                    {
                        out.reply = Some(slot);
                    }
                }
                drop(st);
                Err((refusal(why, "batch"), msgs))
            }
        }
    }

    /// `Endpoint::reserve`: one round trip to the actor's node.
    pub(crate) fn open(&self, lease: Duration) -> OpenSession {
        let node = self.node.clone();
        let peer = self.peer.clone();
        let (token, interface) = (self.token, self.interface);
        let stopped = self.stopped.load(Ordering::Acquire);
        Box::pin(async move {
            if peer.is_lost() {
                return Err(ReserveError::Unreachable);
            }
            if stopped {
                return Err(ReserveError::Stopped);
            }
            let request = node.next_request();
            let (tx, rx) = tokio::sync::oneshot::channel();
            peer.state.lock().pending.insert(request, Pending::Raw(tx));
            // Given up before the grant (the future dropped): the actor's node ends
            // the session, granted or not.
            let mut guard = Session {
                node,
                peer: peer.clone(),
                session: request,
                interface,
                deadline: Instant::now() + lease,
                released: AtomicBool::new(false),
            };
            let lease_ms = u64::try_from(lease.as_millis()).unwrap_or(u64::MAX);
            let frame = Traffic::Reserve {
                to: token,
                request,
                lease_ms,
            };
            if peer.send(&frame).is_err() {
                peer.state.lock().pending.remove(&request);
                guard.released.store(true, Ordering::Release);
                return Err(ReserveError::Unreachable);
            }
            let granted = rx.await;
            match granted {
                Ok(Ok(_)) => {
                    // The holder's count of the lease starts now, after the owner's.
                    guard.deadline = Instant::now() + lease;
                    Ok(Box::new(guard) as Box<dyn RemoteSession>)
                }
                Ok(Err(AskError::Stopped)) => Err(ReserveError::Stopped),
                Ok(Err(_)) | Err(_) => Err(ReserveError::Unreachable),
            }
        })
    }
}

/// The holder's end of a reservation of an actor on `peer`.
struct Session {
    node: Arc<NodeInner>,
    peer: Arc<Peer>,
    session: u64,
    interface: &'static Interface,
    /// The holder's view of the lease's end (the actor's node keeps the real one).
    deadline: Instant,
    released: AtomicBool,
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteSession")
            .field("peer", &self.peer.id)
            .field("session", &self.session)
            .finish()
    }
}

impl RemoteSession for Session {
    fn send(&self, out: Outgoing) -> Result<(), (Refusal, Outgoing)> {
        let Some(entry) = self.interface.by_type(out.type_id) else {
            return Err((Refusal::NotRemote, out));
        };
        if self.peer.is_lost() {
            return Err((Refusal::Unreachable, out));
        }
        if self.ended().is_some() {
            return Err((Refusal::Stopped, out));
        }
        let session = self.session;
        send_use(
            &self.node,
            &self.peer,
            out,
            entry.wire(),
            |request, message, payload| match request {
                None => Traffic::SessionTell {
                    session,
                    message,
                    payload,
                },
                Some(request) => Traffic::SessionAsk {
                    session,
                    request,
                    message,
                    payload,
                },
            },
        )
    }

    fn ended(&self) -> Option<Ended> {
        if self.released.load(Ordering::Acquire) {
            Some(Ended::Released)
        } else if self.peer.is_lost() {
            Some(Ended::NodeLost)
        } else if Instant::now() >= self.deadline {
            Some(Ended::LeaseExpired)
        } else {
            None
        }
    }

    fn release(&self) {
        if !self.released.swap(true, Ordering::AcqRel) {
            let _ = self.peer.send(&Traffic::Release {
                session: self.session,
            });
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.release();
    }
}

impl NodeInner {
    /// A batch from `peer` for our actor `to`: decoded whole, then pushed as one run.
    pub(crate) fn serve_batch(self: &Arc<Self>, peer: &Arc<Peer>, to: u64, items: &[BatchItem]) {
        let fail_all = |f: WireFailure| {
            tracing::warn!(peer = %peer.id, to, failure = ?f, "remote batch not delivered");
            for r in items.iter().filter_map(|i| i.request) {
                (self.route(peer, r, None))(Outcome::Failed(f.clone()));
            }
        };
        let Some(export) = self.export(to) else {
            return fail_all(WireFailure::Stopped);
        };
        let sharing = &export.interface.ops.sharing;
        let Some(mut batch) = (sharing.new_batch)(&*export.target) else {
            return fail_all(WireFailure::Rejected("not a local actor".into()));
        };
        let mut replies: Vec<(u64, WireReply)> = Vec::new();
        for item in items {
            let Some(entry) = export.interface.by_name(&item.message) else {
                drop(batch);
                return fail_all(WireFailure::Rejected(format!(
                    "{} has no remote message named {:?}",
                    export.interface.actor_type, item.message
                )));
            };
            match (entry.batch_add)(
                &mut *batch,
                &item.payload,
                item.request.is_some(),
                &self.codec,
            ) {
                Ok(Some(reply)) => {
                    if let Some(r) = item.request {
                        replies.push((r, reply));
                    }
                }
                Ok(None) => {}
                Err(f) => {
                    // Nothing was pushed: the whole batch fails.
                    drop(batch);
                    drop(replies);
                    return fail_all(f);
                }
            }
        }
        match (sharing.send_batch)(batch) {
            Ok(()) => {
                for (request, reply) in replies {
                    reply(self.route(peer, request, None));
                }
            }
            Err(f) => {
                drop(replies);
                fail_all(f);
            }
        }
    }

    /// `peer` asks to reserve our actor `to`; the session is named `request`.
    pub(crate) fn serve_reserve(
        self: &Arc<Self>,
        peer: &Arc<Peer>,
        to: u64,
        request: u64,
        lease_ms: u64,
    ) {
        let answer = self.route(peer, request, None);
        let Some(export) = self.export(to) else {
            return answer(Outcome::Failed(WireFailure::Stopped));
        };
        let lease = Duration::from_millis(lease_ms);
        let Some(opening) = (export.interface.ops.sharing.reserve)(&*export.target, lease) else {
            return answer(Outcome::Failed(WireFailure::Rejected(
                "not a local actor".into(),
            )));
        };
        let interface = export.interface;
        let session = request;
        let p = peer.clone();
        let mut st = peer.state.lock();
        if st.sessions.contains_key(&session) {
            // Request ids are unique per asking node: only a confused peer repeats one.
            drop(st);
            return answer(Outcome::Failed(WireFailure::Rejected(
                "a reservation with this id is already open".into(),
            )));
        }
        // Registered before the task can finish (it takes this lock to grant).
        let task = self.io.spawn(async move {
            let held = opening.await;
            let granted = match held {
                Ok(held) => {
                    let mut st = p.state.lock();
                    let wanted = !p.is_lost()
                        && matches!(st.sessions.get(&session), Some(ServedSession::Opening(_)));
                    if wanted {
                        // Replaces the placeholder, whose task is this one.
                        st.sessions
                            .insert(session, ServedSession::Held(held, interface));
                        drop(st);
                        Ok(())
                    } else {
                        drop(st);
                        drop(held);
                        return;
                    }
                }
                Err(e) => {
                    p.state.lock().sessions.remove(&session);
                    Err(e)
                }
            };
            answer(match granted {
                Ok(()) => Outcome::Ok(Cow::Owned(Vec::new())),
                Err(_) => Outcome::Failed(WireFailure::Stopped),
            });
        });
        st.sessions
            .insert(session, ServedSession::Opening(task.abort_handle()));
    }

    /// A message inside session `session` of `peer`.
    pub(crate) fn session_message(
        self: &Arc<Self>,
        peer: &Arc<Peer>,
        session: u64,
        request: Option<u64>,
        (message, payload): (&str, &[u8]),
    ) {
        let held = match peer.state.lock().sessions.get(&session) {
            Some(ServedSession::Held(r, i)) => Some((r.clone(), *i)),
            _ => None,
        };
        let fail = |f: WireFailure| {
            tracing::debug!(peer = %peer.id, session, %message, failure = ?f, "message in a remote reservation not delivered");
            if let Some(r) = request {
                (self.route(peer, r, None))(Outcome::Failed(f));
            }
        };
        let Some((reservation, interface)) = held else {
            return fail(WireFailure::Stopped);
        };
        let Some(entry) = interface.by_name(message) else {
            return fail(WireFailure::Rejected(format!(
                "{} has no remote message named {message:?}",
                interface.actor_type
            )));
        };
        let route = request.map(|r| self.route(peer, r, None));
        if let Err(f) = (entry.deliver_reserved)(&*reservation, payload, route, &self.codec) {
            // An ask's route was consumed only on success.
            fail(f);
        }
    }

    /// The holder ended session `session` (or gave it up before the grant).
    pub(crate) fn session_release(&self, peer: &Arc<Peer>, session: u64) {
        let gone = peer.state.lock().sessions.remove(&session);
        if let Some(s) = gone {
            s.end();
        }
    }
}
