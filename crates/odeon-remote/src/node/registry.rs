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
use std::sync::Arc;

use odeon::{ActorRef, RemoteActor, Terminated};

use super::api::{Node, RegistryError};
use super::name_value;
use crate::interface::{ErasedRef, Interface};
use crate::wire::{self, Outcome, Traffic, WireRef};

fn registry_key(name: &str) -> String {
    format!("reg/{name}")
}

impl Node {
    /// Makes `actor` findable across the cluster as `name`. The registration keeps the
    /// actor alive until [`Node::unregister`] or until it stops; when it stops, the
    /// name is withdrawn (here at once, on other nodes once gossip carries it), so
    /// lookups answer [`RegistryError::NotFound`] rather than a ref to a stopped actor.
    ///
    /// A mobile actor (see [`mobile_actor!`](crate::mobile_actor)) may be registered
    /// on any node that holds it: its birth node, or a node it moved to (then
    /// `actor` is the local ref there, for example `cx.myself()` or a lookup made on
    /// that node). The name always stands for the actor's birth identity, so a
    /// lookup of it, on any node, reaches the actor wherever it runs later, not the
    /// node it ran on when it was registered. The name stays on this node (it does
    /// not travel with the actor) until [`Node::unregister`] or until the actor
    /// stops, wherever it runs then (a watch of the actor withdraws it; if the node
    /// it runs on is lost and it is not found again, that counts as its stop).
    ///
    /// # Errors
    /// [`RegistryError::Taken`] if the name is registered on this node;
    /// [`RegistryError::NotLocal`] for a ref to another node's actor.
    ///
    /// # Examples
    /// ```no_run
    /// # use odeon::{Actor, Context, Handler, Message};
    /// # use odeon_remote::Node;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Default, Serialize, Deserialize)]
    /// # struct Counter(u64);
    /// # impl Actor for Counter {}
    /// # #[derive(Serialize, Deserialize)]
    /// # struct Get;
    /// # impl Message for Get { type Reply = u64; }
    /// # impl Handler<Get> for Counter {
    /// #     fn handle(&mut self, _: Get, _: &mut Context<Self>) -> u64 { self.0 }
    /// # }
    /// # odeon_remote::remote_actor!(Counter = "doc.Counter" { Get = "doc.Get" });
    /// # async fn run(node: &Node, system: &odeon::SystemHandle) -> Result<(), Box<dyn std::error::Error>> {
    /// let counter = system.spawn(Counter::default());
    /// node.register("counter", &counter)?;
    /// // On this node or any other:
    /// let found = node.lookup::<Counter>("counter").await?;
    /// assert_eq!(found.ask(Get).await?, 0);
    /// # Ok(())
    /// # }
    /// ```
    pub fn register<A: RemoteActor>(
        &self,
        name: &str,
        actor: &ActorRef<A>,
    ) -> Result<(), RegistryError> {
        if !actor.is_local() {
            return Err(RegistryError::NotLocal);
        }
        let interface = Interface::of(A::interface()).ok_or(RegistryError::NotLocal)?;
        // For a mobile actor this is its birth `WireRef` (which names another node if
        // it moved here): the name must resolve to the actor wherever it goes next.
        let wire = self
            .inner
            .export_local(interface, Box::new(actor.clone()))
            .map_err(RegistryError::Failed)?;
        let value = name_value::encode(&self.inner.me, &wire);
        {
            let mut names = self.inner.names.lock();
            if names.contains_key(name) {
                return Err(RegistryError::Taken(name.to_string()));
            }
            names.insert(name.to_string(), wire.clone());
        }
        // Published in gossip, so that lookups elsewhere need no round trip.
        if let Some(m) = self.membership.lock().as_ref()
            && let Err(e) = m.set(&registry_key(name), &value)
        {
            tracing::warn!(name, error = %e, "registration not gossiped; lookups will ask");
        }
        self.withdraw_when_stopped(interface, name, actor, wire);
        Ok(())
    }

    /// Withdraws the registration `name` = `wire` when the actor stops (unless the
    /// name was given to another actor meanwhile). For an actor born here, the
    /// export's own watch also drops the name here (`NodeInner::export_local`); this
    /// one withdraws it from gossip too, and covers a mobile actor that moved here,
    /// whose name stands for its birth identity (another node's `WireRef`). For a
    /// mobile actor the watch follows it through later moves.
    fn withdraw_when_stopped<A: RemoteActor>(
        &self,
        interface: &'static Interface,
        name: &str,
        actor: &ActorRef<A>,
        wire: WireRef,
    ) {
        let (node, gossip) = (
            Arc::downgrade(&self.inner),
            Arc::downgrade(&self.membership),
        );
        let name = name.to_string();
        let target: &ErasedRef = actor;
        let notify = Box::new(move |_: Terminated| {
            let Some(node) = node.upgrade() else {
                return;
            };
            // Under the names lock, so that a registration of the name made after
            // this check is not withdrawn from gossip by it.
            let mut names = node.names.lock();
            if names.get(&name) != Some(&wire) {
                return;
            }
            names.remove(&name);
            if let Some(m) = gossip.upgrade()
                && let Some(m) = m.lock().as_ref()
            {
                m.delete(&registry_key(&name));
            }
            tracing::debug!(name, "a registered actor stopped; its name is withdrawn");
        });
        let _ = (interface.ops.watch)(target, notify);
    }

    /// Removes a registration made on this node. Returns whether there was one.
    pub fn unregister(&self, name: &str) -> bool {
        if let Some(m) = self.membership.lock().as_ref() {
            m.delete(&registry_key(name));
        }
        self.inner.names.lock().remove(name).is_some()
    }

    /// Where gossip says `name` is registered: the refs live members offer, each
    /// member (and a mobile actor's birth node, if it is a member) started as a peer
    /// at the address membership gives, so that the ref resolves. Also the reason a
    /// value was rejected, if one was (gossip may carry garbage).
    fn gossiped(&self, name: &str) -> (Vec<WireRef>, Option<String>) {
        let guard = self.membership.lock();
        let Some(m) = guard.as_ref() else {
            return (Vec::new(), None);
        };
        let key = registry_key(name);
        let members = m.members();
        let mut rejected = None;
        let found: Vec<_> = m
            .entries(&key)
            .into_iter()
            .filter(|(_, k, _)| *k == key)
            .filter_map(|(registrar, _, value)| {
                let wire = match name_value::decode(&registrar, &value) {
                    Ok(w) => w,
                    Err(e) => {
                        tracing::warn!(name, from = %registrar, error = %e, "malformed registration ignored");
                        rejected = Some(format!("{registrar} gossips {name:?} as {value:?}: {e}"));
                        return None;
                    }
                };
                let addr_of = |id: &wire::NodeId| {
                    members.iter().find(|mb| mb.node == *id).map(|mb| mb.link_addr)
                };
                let link_addr = addr_of(&registrar)?;
                let birth_addr = addr_of(&wire.node);
                Some((registrar, link_addr, wire, birth_addr))
            })
            .collect();
        drop(guard);
        let peers = self.inner.live_peers();
        // Gossip may list a restarted node's previous life next to it: keep the newest.
        let newest = newest_incarnations(
            std::iter::once(&self.inner.me)
                .chain(peers.iter().map(|p| &p.id))
                .chain(members.iter().map(|m| &m.node))
                .chain(found.iter().map(|(r, ..)| r)),
        );
        let wires = found
            .into_iter()
            .filter(|(r, ..)| newest.get(r.name.as_str()) == Some(&r.incarnation))
            .filter(|(r, addr, wire, birth_addr)| {
                // This node's own registrations are answered by `lookup_here`.
                if *r == self.inner.me || !self.inner.supersede(r) {
                    return false;
                }
                self.inner.peer(r, Some(*addr));
                if let Some(b) = birth_addr
                    && wire.node != *r
                    && wire.node != self.inner.me
                    && self.inner.supersede(&wire.node)
                {
                    self.inner.peer(&wire.node, Some(*b));
                }
                true
            })
            .map(|(.., w, _)| w)
            .collect();
        (wires, rejected)
    }

    /// Finds the actor registered as `name` on this node or on any linked node. When
    /// several nodes offer the name, a restarted node's newest incarnation is preferred
    /// and its previous lives are never returned.
    ///
    /// For a mobile actor the ref returned is its location-independent identity (the
    /// one its birth node gave it), whichever node registered the name: it follows
    /// the actor through later moves, and a tell sent through it is delivered once,
    /// in order with the caller's other sends through that ref.
    ///
    /// # Errors
    /// [`RegistryError::NotFound`]; [`RegistryError::WrongType`] if the name
    /// belongs to an actor of another type; [`RegistryError::Failed`] if the only
    /// registration of the name found is one this node cannot read (a malformed
    /// gossip value: the error says which node sent it and why it was rejected).
    pub async fn lookup<A: RemoteActor>(&self, name: &str) -> Result<ActorRef<A>, RegistryError> {
        let interface = Interface::of(A::interface())
            .ok_or_else(|| RegistryError::Failed(format!("{} has no interface", A::TYPE_NAME)))?;
        let mut candidates = Vec::new();
        let mut rejected = None;
        if let Outcome::Ok(bytes) = self.inner.lookup_here(name) {
            candidates.push(
                wire::decode::<WireRef>(&bytes)
                    .map_err(|e| RegistryError::Failed(e.to_string()))?,
            );
        } else {
            (candidates, rejected) = self.gossiped(name);
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
        Err(match (wrong, rejected) {
            (Some(found), _) => RegistryError::WrongType {
                name: name.to_string(),
                expected: A::TYPE_NAME,
                found,
            },
            (None, Some(why)) => RegistryError::Failed(why),
            (None, None) => RegistryError::NotFound(name.to_string()),
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
