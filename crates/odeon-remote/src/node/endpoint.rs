//! A ref's view of an actor on another node: the core's `Endpoint`, implemented over
//! the peer's link.

use std::any::Any;
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use odeon::remote::{Endpoint, Outgoing, Refusal};
use odeon::{ActorId, StopReason, SystemHandle, Terminated};

use super::NodeInner;
use super::peer::{Peer, Pending, Refused};
use crate::interface::Interface;
use crate::wire::{Traffic, WireRef};

pub(crate) struct RemoteEndpoint {
    pub(crate) node: Arc<NodeInner>,
    pub(crate) peer: Arc<Peer>,
    /// The actor's id on its node: what `ActorRef::id` and `Terminated::id` say.
    pub(crate) id: u64,
    /// Its export token there: what frames address (see [`WireRef::token`]).
    pub(crate) token: u64,
    pub(crate) interface: &'static Interface,
    /// Set once a watch through this endpoint reported the actor's stop: from then on
    /// it is known to have stopped (`is_alive` is false, sends fail with `Stopped`).
    pub(crate) stopped: Arc<AtomicBool>,
}

impl RemoteEndpoint {
    pub(crate) fn wire_ref(&self) -> WireRef {
        WireRef {
            node: self.peer.id.clone(),
            id: self.id,
            token: self.token,
            actor_type: self.interface.actor_type.to_string(),
        }
    }
}

impl fmt::Debug for RemoteEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.id, self.peer.id)
    }
}

impl Endpoint for RemoteEndpoint {
    fn id(&self) -> ActorId {
        ActorId::from_u64(self.id)
    }

    fn address(&self) -> (&str, u64, u64) {
        (&self.peer.id.name, self.peer.id.incarnation, self.id)
    }

    fn is_alive(&self) -> bool {
        !self.peer.is_lost() && !self.stopped.load(Ordering::Acquire)
    }

    fn send(&self, mut out: Outgoing) -> Result<(), (Refusal, Outgoing)> {
        let Some(entry) = self.interface.by_type(out.type_id) else {
            return Err((Refusal::NotRemote, out));
        };
        if self.peer.is_lost() {
            return Err((Refusal::Unreachable, out));
        }
        if self.stopped.load(Ordering::Acquire) {
            return Err((Refusal::Stopped, out));
        }
        let payload = match (entry.encode)(&*out.message, &*self.node.codec()) {
            Ok(p) => p,
            Err(e) => {
                tracing::error!(message = entry.wire_name, error = %e, "message did not encode");
                return Err((Refusal::NotRemote, out));
            }
        };
        let (message, payload) = (Cow::Borrowed(entry.wire_name), Cow::Owned(payload));
        // The sender's trace context, when this node observes (`observe/`).
        let trace = crate::observe::outgoing();
        let traffic = match (out.reply.take(), trace) {
            (None, None) => Traffic::Tell {
                to: self.token,
                message,
                payload,
            },
            (None, Some(trace)) => Traffic::TracedTell {
                to: self.token,
                message,
                payload,
                trace,
            },
            (Some(slot), trace) => {
                let request = self.node.next_request();
                self.peer.state.lock().pending.insert(
                    request,
                    Pending::Ask {
                        slot,
                        decode: entry.decode_reply,
                    },
                );
                match trace {
                    None => Traffic::Ask {
                        to: self.token,
                        request,
                        message,
                        payload,
                    },
                    Some(trace) => Traffic::TracedAsk {
                        to: self.token,
                        request,
                        message,
                        payload,
                        trace,
                    },
                }
            }
        };
        match self.peer.send_message(&traffic) {
            Ok(()) => Ok(()),
            Err(why) => {
                if let Traffic::Ask { request, .. } | Traffic::TracedAsk { request, .. } = traffic
                    && let Some(Pending::Ask { slot, .. }) =
                        self.peer.state.lock().pending.remove(&request)
                {
                    out.reply = Some(slot);
                }
                let refusal = match why {
                    Refused::Full => Refusal::Full,
                    Refused::Unreachable => Refusal::Unreachable,
                    Refused::Rejected(e) => {
                        tracing::error!(message = entry.wire_name, error = %e, "frame did not encode");
                        Refusal::NotRemote
                    }
                };
                Err((refusal, out))
            }
        }
    }

    fn send_batch(&self, msgs: Vec<Outgoing>) -> Result<(), (Refusal, Vec<Outgoing>)> {
        self.batch(msgs)
    }

    fn reserve(&self, lease: std::time::Duration) -> odeon::remote::OpenSession {
        self.open(lease)
    }

    fn room(&self) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + '_>> {
        Box::pin(self.peer.room())
    }

    fn stop(&self) {
        let _ = self.peer.send(&Traffic::Stop { to: self.token });
    }

    fn watch(&self, key: ActorId, notify: Box<dyn FnOnce(Terminated) + Send>) {
        // Frames and the peer's tables name the actor by its token; the notice names it
        // by its id, as a local watch would.
        let id = self.id();
        let stopped = self.stopped.clone();
        let notify: Box<dyn FnOnce(Terminated) + Send> = Box::new(move |t: Terminated| {
            stopped.store(true, Ordering::Release);
            notify(Terminated { id, ..t })
        });
        let k = (self.token, key.as_u64());
        if self.peer.is_lost() {
            notify(Terminated {
                id: self.id(),
                reason: StopReason::NodeLost,
            });
            return;
        }
        self.peer.state.lock().watches.insert(k, notify);
        if self
            .peer
            .send(&Traffic::Watch {
                to: self.token,
                key: key.as_u64(),
            })
            .is_err()
            && let Some(notify) = self.peer.state.lock().watches.remove(&k)
        {
            notify(Terminated {
                id: self.id(),
                reason: StopReason::NodeLost,
            });
        }
    }

    fn unwatch(&self, key: ActorId) {
        self.peer
            .state
            .lock()
            .watches
            .remove(&(self.token, key.as_u64()));
        let _ = self.peer.send(&Traffic::Unwatch {
            to: self.token,
            key: key.as_u64(),
        });
    }

    fn link(&self, from: ActorId) {
        let _ = self.peer.send(&Traffic::Link {
            to: self.token,
            from: from.as_u64(),
        });
    }

    fn unlink(&self, from: ActorId) {
        let _ = self.peer.send(&Traffic::Unlink {
            to: self.token,
            from: from.as_u64(),
        });
    }

    fn link_failed(&self, from: ActorId) {
        let _ = self.peer.send(&Traffic::LinkFailed {
            to: self.token,
            from: from.as_u64(),
        });
    }

    fn system(&self) -> &SystemHandle {
        &self.node.system
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
