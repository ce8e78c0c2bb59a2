//! How refs reach a mobile actor through this node's entry: the source's stub cell
//! ([`Stub`], the core's `Forward`) and a remote ref's [`MobileEndpoint`].

use std::any::{Any, TypeId};
use std::fmt;
use std::sync::{Arc, Weak};

use odeon::remote::{BirthId, Endpoint, Forward, Outgoing, Refusal};
use odeon::{ActorId, AskError, StopReason, SystemHandle, Terminated};

use super::control::Control;
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
    /// The actor's id (its birth id), for a `Terminated` made here.
    pub(crate) id: ActorId,
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

    // Control of the moved actor from the node it left travels its route as numbered
    // control items (`control.rs`), after what this stub forwarded before.
    fn stop(&self, reason: StopReason) {
        let link_failed = match reason {
            StopReason::LinkFailed(id) => Some(id.as_u64()),
            _ => None,
        };
        self.control(Control::Stop { link_failed });
    }

    fn kill(&self, _reason: StopReason) {
        self.control(Control::Kill);
    }

    fn watch(&self, key: ActorId, notify: Box<dyn FnOnce(Terminated) + Send>) {
        match (self.node.upgrade(), self.mobile.upgrade()) {
            (Some(node), Some(mobile)) => node.mobile_watch(&mobile, key, notify),
            // The node is gone: nothing will ever report the actor's end.
            _ => notify(Terminated {
                id: self.id,
                reason: StopReason::NodeLost,
            }),
        }
    }

    fn unwatch(&self, key: ActorId) {
        if let (Some(node), Some(mobile)) = (self.node.upgrade(), self.mobile.upgrade()) {
            node.mobile_unwatch(&mobile, key);
        }
    }

    fn identity(&self) -> Option<BirthId> {
        Some(self.birth.clone())
    }
}

impl Stub {
    fn control(&self, control: Control) {
        if let (Some(node), Some(mobile)) = (self.node.upgrade(), self.mobile.upgrade()) {
            node.mobile_control(&mobile, control);
        }
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

    // Stop, watches and links travel the actor's route as control items, wherever
    // it runs (design §2.4, §3.5; `control.rs`).
    fn stop(&self) {
        let stop = Control::Stop { link_failed: None };
        self.node.mobile_control(&self.mobile, stop);
    }

    fn watch(&self, key: ActorId, notify: Box<dyn FnOnce(Terminated) + Send>) {
        self.node.mobile_watch(&self.mobile, key, notify);
    }

    fn unwatch(&self, key: ActorId) {
        self.node.mobile_unwatch(&self.mobile, key);
    }

    fn link(&self, from: ActorId) {
        let from = from.as_u64();
        self.node
            .mobile_control(&self.mobile, Control::Link { from });
    }

    fn unlink(&self, from: ActorId) {
        let from = from.as_u64();
        self.node
            .mobile_control(&self.mobile, Control::Unlink { from });
    }

    fn link_failed(&self, from: ActorId) {
        let from = from.as_u64();
        self.node
            .mobile_control(&self.mobile, Control::LinkFailed { from });
    }

    fn system(&self) -> &SystemHandle {
        &self.node.system
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
