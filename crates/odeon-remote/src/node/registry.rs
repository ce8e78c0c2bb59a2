//! The cluster-wide name registry: names registered on a node are gossiped, and a
//! lookup reads gossip first, then asks the live peers.
//!
//! # Restarted nodes
//! A node restarted under the same name is a new incarnation (a larger one: see
//! `incarnation.rs`). A lookup never returns a ref on an incarnation older than
//! one known here, even while gossip still lists the old one as a member (its failure
//! detector needs a few seconds): of the nodes offering a name, the newest incarnation
//! of each node name wins, and the older one is lost as soon as the newer one is seen.

use std::collections::HashMap;

use odeon::{ActorRef, RemoteActor};

use super::api::{Node, RegistryError};
use crate::interface::Interface;
use crate::wire::{self, Outcome, Traffic, WireRef};

fn registry_key(name: &str) -> String {
    format!("reg/{name}")
}

/// What a node gossips for one of its registrations: `id/token/actor_type`.
fn gossip_value(wire: &WireRef) -> String {
    format!("{}/{}/{}", wire.id, wire.token, wire.actor_type)
}

impl Node {
    /// Makes `actor` findable across the cluster as `name`. The registration keeps the
    /// actor alive until [`Node::unregister`] or until it stops.
    ///
    /// # Errors
    /// [`RegistryError::Taken`] if the name is registered on this node;
    /// [`RegistryError::NotLocal`] for a ref to another node's actor.
    pub fn register<A: RemoteActor>(
        &self,
        name: &str,
        actor: &ActorRef<A>,
    ) -> Result<(), RegistryError> {
        if !actor.is_local() {
            return Err(RegistryError::NotLocal);
        }
        let interface = Interface::of(A::interface()).ok_or(RegistryError::NotLocal)?;
        let wire = self
            .inner
            .export_local(interface, Box::new(actor.clone()))
            .map_err(RegistryError::Failed)?;
        {
            let mut names = self.inner.names.lock();
            if names.contains_key(name) {
                return Err(RegistryError::Taken(name.to_string()));
            }
            names.insert(name.to_string(), wire.token);
        }
        // Published in gossip, so that lookups elsewhere need no round trip.
        if let Some(m) = self.membership.lock().as_ref()
            && let Err(e) = m.set(&registry_key(name), &gossip_value(&wire))
        {
            tracing::warn!(name, error = %e, "registration not gossiped; lookups will ask");
        }
        Ok(())
    }

    /// Removes a registration made on this node. Returns whether there was one.
    pub fn unregister(&self, name: &str) -> bool {
        if let Some(m) = self.membership.lock().as_ref() {
            m.delete(&registry_key(name));
        }
        self.inner.names.lock().remove(name).is_some()
    }

    /// Where gossip says `name` is registered: refs on live members, each member
    /// started as a peer (at the address membership gives) so that the ref resolves.
    fn gossiped(&self, name: &str) -> Vec<WireRef> {
        let guard = self.membership.lock();
        let Some(m) = guard.as_ref() else {
            return Vec::new();
        };
        let key = registry_key(name);
        let members = m.members();
        let found: Vec<_> = m
            .entries(&key)
            .into_iter()
            .filter(|(_, k, _)| *k == key)
            .filter_map(|(node, _, value)| {
                let mut parts = value.splitn(3, '/');
                let (id, token, actor_type) = (parts.next()?, parts.next()?, parts.next()?);
                let link_addr = members.iter().find(|mb| mb.node == node)?.link_addr;
                let wire = WireRef {
                    node,
                    id: id.parse().ok()?,
                    token: token.parse().ok()?,
                    actor_type: actor_type.to_string(),
                };
                Some((wire, link_addr))
            })
            .collect();
        drop(guard);
        let peers = self.inner.live_peers();
        // Gossip may list a restarted node's previous life next to it: keep the newest.
        let newest = newest_incarnations(
            std::iter::once(&self.inner.me)
                .chain(peers.iter().map(|p| &p.id))
                .chain(members.iter().map(|m| &m.node))
                .chain(found.iter().map(|(w, _)| &w.node)),
        );
        found
            .into_iter()
            .filter(|(w, _)| newest.get(w.node.name.as_str()) == Some(&w.node.incarnation))
            .filter(|(w, addr)| {
                if w.node == self.inner.me {
                    return false;
                }
                if !self.inner.supersede(&w.node) {
                    return false;
                }
                self.inner.peer(&w.node, Some(*addr));
                true
            })
            .map(|(w, _)| w)
            .collect()
    }

    /// Finds the actor registered as `name` on this node or on any linked node. When
    /// several nodes offer the name, a restarted node's newest incarnation is preferred
    /// and its previous lives are never returned.
    ///
    /// # Errors
    /// [`RegistryError::NotFound`], or [`RegistryError::WrongType`] if the name
    /// belongs to an actor of another type.
    pub async fn lookup<A: RemoteActor>(&self, name: &str) -> Result<ActorRef<A>, RegistryError> {
        let interface = Interface::of(A::interface())
            .ok_or_else(|| RegistryError::Failed(format!("{} has no interface", A::TYPE_NAME)))?;
        let mut candidates = Vec::new();
        if let Outcome::Ok(bytes) = self.inner.lookup_here(name) {
            candidates.push(
                wire::decode::<WireRef>(&bytes)
                    .map_err(|e| RegistryError::Failed(e.to_string()))?,
            );
        } else {
            candidates = self.gossiped(name);
        }
        if candidates.is_empty() {
            let asks: Vec<_> = self
                .inner
                .live_peers()
                .into_iter()
                .map(|p| {
                    self.inner.request(p, |request| Traffic::Lookup {
                        request,
                        name: name.to_string(),
                    })
                })
                .collect();
            for ask in asks {
                if let Ok(bytes) = ask.await {
                    match wire::decode::<WireRef>(&bytes) {
                        Ok(w) => candidates.push(w),
                        Err(e) => tracing::warn!(name, error = %e, "malformed lookup reply"),
                    }
                }
            }
            // Peers may have answered for two lives of one node name: the newest wins.
            candidates.sort_by_key(|w| std::cmp::Reverse(w.node.incarnation));
        }
        let mut wrong = None;
        for wire in candidates {
            if wire.actor_type != A::TYPE_NAME {
                wrong = Some(wire.actor_type);
                continue;
            }
            if wire.node != self.inner.me && !self.inner.supersede(&wire.node) {
                continue;
            }
            let any = self.inner.resolve(interface, &wire);
            return any
                .downcast::<ActorRef<A>>()
                .map(|r| *r)
                .map_err(|_| RegistryError::Failed("interface mismatch".into()));
        }
        Err(match wrong {
            Some(found) => RegistryError::WrongType {
                name: name.to_string(),
                expected: A::TYPE_NAME,
                found,
            },
            None => RegistryError::NotFound(name.to_string()),
        })
    }
}

/// The largest incarnation of each node name among `ids`.
fn newest_incarnations<'a>(ids: impl Iterator<Item = &'a wire::NodeId>) -> HashMap<String, u64> {
    let mut newest: HashMap<String, u64> = HashMap::new();
    for id in ids {
        let n = newest.entry(id.name.clone()).or_insert(id.incarnation);
        *n = (*n).max(id.incarnation);
    }
    newest
}
