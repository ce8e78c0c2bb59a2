//! How refs reach a mobile actor through this node's entry: the source's stub cell
//! ([`Stub`], the core's `Forward`) and a remote ref's [`MobileEndpoint`].

use std::any::{Any, TypeId};
use std::fmt;
use std::sync::{Arc, Weak};

use odeon::remote::{BirthId, Endpoint, Forward, Outgoing, Refusal};
use odeon::{ActorId, AskError, StopReason, SystemHandle, Terminated};

use super::driver::Mobile;
use crate::interface::Interface;
use crate::node::NodeInner;
use crate::wire::NodeId;

/// The route of a stub cell: what local refs on the source push after the actor left
/// goes, in push order, through the node's entry.
pub(crate) struct Stub {
    pub(crate) node: Weak<NodeInner>,
    pub(crate) mobile: Weak<Mobile>,
    pub(crate) interface: &'static Interface,
    /// The actor's identity, for `==` with the cell it may come back to here.
    pub(crate) birth: BirthId,
}

impl Drop for Stub {
    fn drop(&mut self) {
        if let (Some(node), Some(mobile)) = (self.node.upgrade(), self.mobile.upgrade()) {
            node.mobile_unused(&mobile);
        }
    }
}

impl Forward for Stub {
    fn accepts(&self, type_id: TypeId) -> bool {
        self.interface.by_type(type_id).is_some()
    }

    fn forward(&self, msg: Outgoing) {
        let (Some(node), Some(mobile)) = (self.node.upgrade(), self.mobile.upgrade()) else {
            refuse(msg, "the node has stopped");
            return;
        };
        if let Err((why, msg)) = node.mobile_send(&mobile, msg) {
            refuse(msg, &format!("{why:?}"));
        }
    }

    // Stopping a moved actor from a node it left is not wired yet (design §2.4: a
    // `Stop` frame along the route).
    fn stop(&self, reason: StopReason) {
        tracing::warn!(
            ?reason,
            "stop of a moved actor from a node it left: not forwarded yet"
        );
    }

    fn kill(&self, reason: StopReason) {
        tracing::warn!(
            ?reason,
            "kill of a moved actor from a node it left: not forwarded yet"
        );
    }

    fn identity(&self) -> Option<BirthId> {
        Some(self.birth.clone())
    }
}

/// A message the route did not take: an ask fails (a tell is dropped with a warning,
/// as a stub cannot give it back to its sender).
fn refuse(msg: Outgoing, why: &str) {
    tracing::warn!(
        message = msg.type_name,
        why,
        "a stub could not forward a message"
    );
    if let Some(slot) = msg.reply {
        slot.fail(AskError::Unreachable);
    }
}

/// A ref's view of a mobile actor that does not run on this node: every send goes
/// through the node's entry for it (numbered, along its route).
pub(crate) struct MobileEndpoint {
    pub(crate) node: Arc<NodeInner>,
    pub(crate) mobile: Arc<Mobile>,
    /// The birth node (with the id, the actor's identity everywhere).
    pub(crate) birth: NodeId,
    pub(crate) id: u64,
}

impl fmt::Debug for MobileEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{} (mobile)", self.id, self.birth)
    }
}

impl Drop for MobileEndpoint {
    fn drop(&mut self) {
        self.node.mobile_unused(&self.mobile);
    }
}

impl Endpoint for MobileEndpoint {
    fn id(&self) -> ActorId {
        ActorId::from_u64(self.id)
    }

    /// The birth identity: unchanged by moves, so equality and hashing are too.
    fn address(&self) -> (&str, u64, u64) {
        (&self.birth.name, self.birth.incarnation, self.id)
    }

    fn is_alive(&self) -> bool {
        true
    }

    fn send(&self, out: Outgoing) -> Result<(), (Refusal, Outgoing)> {
        self.node.mobile_send(&self.mobile, out)
    }

    fn room(&self) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + '_>> {
        Box::pin(std::future::ready(()))
    }

    // Stop, watches and links of a mobile actor from another node are design §2.4 and
    // §3.5, not wired yet: they are logged and have no effect.
    fn stop(&self) {
        tracing::warn!(actor = ?self, "remote stop of a mobile actor: not wired yet");
    }

    fn watch(&self, _key: ActorId, _notify: Box<dyn FnOnce(Terminated) + Send>) {
        tracing::warn!(actor = ?self, "remote watch of a mobile actor: not wired yet");
    }

    fn unwatch(&self, _key: ActorId) {}

    fn link(&self, _from: ActorId) {
        tracing::warn!(actor = ?self, "remote link to a mobile actor: not wired yet");
    }

    fn unlink(&self, _from: ActorId) {}

    fn link_failed(&self, _from: ActorId) {}

    fn system(&self) -> &SystemHandle {
        &self.node.system
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
