//! How this node writes and reads actor refs inside messages.
//!
//! A local actor's ref is written as this node's identity, the actor's id and a random
//! export token, and the actor is *exported*: entered in the node's table under that
//! token so that frames can reach it (a peer cannot guess a token, so it reaches only
//! the actors it was given). A ref read back on the actor's own node resolves to the
//! direct local pointer; on any other node it becomes a remote ref through the link to
//! the actor's node, if that node is known here (a member, a seed, or a node linked to
//! us). A ref carries no address: a ref to an unknown node, or to an incarnation no
//! longer known, resolves to a dead ref (sends fail with `Unreachable`, watchers are
//! told `NodeLost`), and nothing is dialed.

use std::any::{Any, TypeId};
use std::sync::{Arc, Weak};

use odeon::remote::{Endpoint, ImportedObject, ObjectEndpoint, RefCodec};

use super::NodeInner;
use super::endpoint::RemoteEndpoint;
use crate::interface::Interface;
use crate::migration::stub::MobileEndpoint;
use crate::wire::{self, WireRef};

pub(crate) struct NodeCodec(pub(crate) Weak<NodeInner>);

impl RefCodec for NodeCodec {
    fn export(
        &self,
        type_name: &'static str,
        interface: &'static (dyn Any + Send + Sync),
        local: Option<Box<dyn Any + Send>>,
        remote: Option<&Arc<dyn Endpoint>>,
    ) -> Result<Vec<u8>, String> {
        let node = self.0.upgrade().ok_or("the node has stopped")?;
        let wire_ref = match (local, remote) {
            (Some(local), _) => {
                let interface = Interface::of(interface)
                    .ok_or_else(|| format!("{type_name} has no odeon-remote interface"))?;
                node.export_local(interface, local)?
            }
            (None, Some(ep)) => {
                let any = ep.as_any();
                match any.downcast_ref::<RemoteEndpoint>() {
                    Some(ep) => ep.wire_ref(),
                    // A mobile actor's ref is written with its birth identity and
                    // token, wherever the actor is now (design §2.1).
                    None => any
                        .downcast_ref::<MobileEndpoint>()
                        .map(|ep| ep.mobile.wire.clone())
                        .ok_or("a ref from another transport cannot be forwarded")?,
                }
            }
            (None, None) => return Err("nothing to export".into()),
        };
        wire::encode(&wire_ref).map_err(|e| e.to_string())
    }

    fn import(
        &self,
        bytes: &[u8],
        type_id: TypeId,
        type_name: &'static str,
        interface: &'static (dyn Any + Send + Sync),
    ) -> Result<Box<dyn Any + Send>, String> {
        let node = self.0.upgrade().ok_or("the node has stopped")?;
        let wire_ref: WireRef = wire::decode(bytes).map_err(|e| e.to_string())?;
        wire_ref.node.validate().map_err(|e| e.to_string())?;
        if wire_ref.actor_type != type_name {
            return Err(format!(
                "a ref to a {} where a {type_name} was expected",
                wire_ref.actor_type
            ));
        }
        let interface = Interface::of(interface)
            .filter(|i| i.type_id == type_id)
            .ok_or_else(|| format!("{type_name} has no odeon-remote interface"))?;
        Ok(node.resolve(interface, &wire_ref))
    }

    fn export_object(
        &self,
        type_name: &'static str,
        interface: &'static (dyn Any + Send + Sync),
        local: Option<Box<dyn Any + Send + Sync>>,
        remote: Option<&Arc<dyn ObjectEndpoint>>,
    ) -> Result<Vec<u8>, String> {
        let node = self.0.upgrade().ok_or("the node has stopped")?;
        let interface = crate::interface::ObjectInterface::of(interface)
            .ok_or_else(|| format!("{type_name} has no odeon-remote object interface"))?;
        let wire = match (local, remote) {
            (Some(local), _) => node.export_object(interface, local)?,
            (None, Some(ep)) => ep
                .as_any()
                .downcast_ref::<super::objects::RemoteObjectEndpoint>()
                .map(|ep| ep.wire.clone())
                .ok_or("a handle from another transport cannot be forwarded")?,
            (None, None) => return Err("nothing to export".into()),
        };
        wire::encode(&wire).map_err(|e| e.to_string())
    }

    fn import_object(
        &self,
        bytes: &[u8],
        type_name: &'static str,
        interface: &'static (dyn Any + Send + Sync),
    ) -> Result<ImportedObject, String> {
        let node = self.0.upgrade().ok_or("the node has stopped")?;
        let wire: wire::ObjectRef = wire::decode(bytes).map_err(|e| e.to_string())?;
        wire.node.validate().map_err(|e| e.to_string())?;
        if wire.object_type != type_name {
            return Err(format!(
                "a handle to a {} where a {type_name} was expected",
                wire.object_type
            ));
        }
        let interface = crate::interface::ObjectInterface::of(interface)
            .ok_or_else(|| format!("{type_name} has no odeon-remote object interface"))?;
        Ok(node.import_object(interface, wire))
    }
}
