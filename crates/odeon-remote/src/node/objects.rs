//! Bestowed objects across nodes (issue 16).
//!
//! A `Bestowed<T>` written into a remote message on its owner's node is *exported*:
//! the handle is kept in this node's table under a random token, and the wire form
//! is an [`ObjectRef`] (this node, the token, the owner's id). Read on another node it
//! becomes a handle whose uses travel as `ObjectTell`/`ObjectAsk` frames on the link
//! to this node; here each becomes an ordinary local use of the kept handle, so it
//! runs inside the owner's turn, between the owner's own messages. Read back on this
//! node it is the local handle again.
//!
//! The table keeps a handle while it may be used: entries whose owner stopped are
//! dropped at the next export (a use then finds no entry and reads `OwnerStopped`,
//! as a local use would). A revoked handle is kept (its object is already gone), so
//! that uses keep reading `Revoked`, until the node stops; that is the cost of a
//! revoked handle that was sent to another node.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use odeon::ActorId;
use odeon::remote::{ImportedObject, ObjectEndpoint, Outgoing, Refusal};

use super::NodeInner;
use super::peer::Peer;
use super::sharing::send_use;
use crate::interface::ObjectInterface;
use crate::wire::{ObjectRef, Outcome, Traffic, WireFailure};

/// A bestowed handle this node lent to other nodes.
pub(crate) struct ObjectExport {
    /// The `Bestowed<T>`, erased.
    handle: Arc<dyn Any + Send + Sync>,
    interface: &'static ObjectInterface,
}

/// A handle to an object whose owner is on another node.
pub(crate) struct RemoteObjectEndpoint {
    node: Arc<NodeInner>,
    peer: Arc<Peer>,
    pub(crate) wire: ObjectRef,
    interface: &'static ObjectInterface,
}

impl fmt::Debug for RemoteObjectEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.wire.object_type, self.peer.id)
    }
}

impl ObjectEndpoint for RemoteObjectEndpoint {
    fn owner(&self) -> ActorId {
        ActorId::from_u64(self.wire.owner)
    }

    fn is_usable(&self) -> bool {
        !self.peer.is_lost()
    }

    fn send(&self, out: Outgoing) -> Result<(), (Refusal, Outgoing)> {
        let Some(entry) = self.interface.by_type(out.type_id) else {
            return Err((Refusal::NotRemote, out));
        };
        if self.peer.is_lost() {
            return Err((Refusal::Unreachable, out));
        }
        let object = self.wire.token;
        send_use(
            &self.node,
            &self.peer,
            out,
            entry.wire(),
            |request, message, payload| match request {
                None => Traffic::ObjectTell {
                    object,
                    message,
                    payload,
                },
                Some(request) => Traffic::ObjectAsk {
                    object,
                    request,
                    message,
                    payload,
                },
            },
        )
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl NodeInner {
    /// Exports a local `Bestowed<T>` (boxed) and returns its wire form.
    pub(crate) fn export_object(
        &self,
        interface: &'static ObjectInterface,
        handle: Box<dyn Any + Send + Sync>,
    ) -> Result<ObjectRef, String> {
        let owner = (interface.owner)(&*handle).ok_or("the handle does not match its interface")?;
        let mut objects = self.objects.lock();
        // Forget the handles whose owner stopped.
        objects.retain(|_, e| (e.interface.usable)(&*e.handle));
        let token = loop {
            let mut b = [0u8; 8];
            getrandom::fill(&mut b).map_err(|e| format!("no randomness for a token: {e}"))?;
            let t = u64::from_le_bytes(b);
            if t != 0 && !objects.contains_key(&t) {
                break t;
            }
        };
        objects.insert(
            token,
            ObjectExport {
                handle: handle.into(),
                interface,
            },
        );
        Ok(ObjectRef {
            node: self.me.clone(),
            token,
            owner,
            object_type: interface.type_name.to_string(),
        })
    }

    /// A handle read from a message: the local one if the object lives here, else one
    /// that reaches its owner's node (dead if that node is not known here).
    pub(crate) fn import_object(
        self: &Arc<Self>,
        interface: &'static ObjectInterface,
        wire: ObjectRef,
    ) -> ImportedObject {
        if wire.node == self.me {
            let local = self
                .objects
                .lock()
                .get(&wire.token)
                .and_then(|e| (e.interface.clone_local)(&*e.handle));
            if let Some(local) = local {
                return ImportedObject::Local(local);
            }
        }
        let peer = self
            .known_peer(&wire.node)
            .filter(|_| wire.node != self.me)
            .unwrap_or_else(|| Peer::detached(wire.node.clone()));
        ImportedObject::Remote(Arc::new(RemoteObjectEndpoint {
            node: self.clone(),
            peer,
            wire,
            interface,
        }))
    }

    /// A use of our exported object `object` from `peer`.
    pub(crate) fn object_use(
        self: &Arc<Self>,
        peer: &Arc<Peer>,
        object: u64,
        request: Option<u64>,
        (message, payload): (&str, &[u8]),
    ) {
        let fail = |f: WireFailure| {
            tracing::debug!(peer = %peer.id, %message, failure = ?f, "use of a bestowed object not delivered");
            if let Some(r) = request {
                (self.route(peer, r, None))(Outcome::Failed(f));
            }
        };
        let found = self
            .objects
            .lock()
            .get(&object)
            .map(|e| (e.handle.clone(), e.interface));
        let Some((handle, interface)) = found else {
            return fail(WireFailure::Stopped);
        };
        let Some(entry) = interface.by_name(message) else {
            return fail(WireFailure::Rejected(format!(
                "{} serves no remote message named {message:?}",
                interface.type_name
            )));
        };
        let route = request.map(|r| self.route(peer, r, None));
        if let Err(f) = (entry.serve)(&*handle, payload, route, &self.codec) {
            fail(f);
        }
    }
}
