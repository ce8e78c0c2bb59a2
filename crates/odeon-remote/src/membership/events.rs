//! From chitchat's successive sets of live nodes to [`MemberEvent`]s.
//!
//! Chitchat publishes, on a `watch` channel, the live nodes (by its phi-accrual
//! failure detector) with their state, whenever that set or a node's state changes.
//! [`Tracker`] compares each snapshot with the members it knows:
//! - a live, well-formed node it did not know is `Up`;
//! - a member that carries the leaving mark is `Left` (seen while it still gossips,
//!   during its leave grace period);
//! - a member missing from the live set is `Down`: chitchat stopped hearing from it.
//!   A node that left is never reported `Down` afterwards.
//!
//! A node that comes back after a false suspicion is `Up` again; a restarted node has
//! a new incarnation and is another member.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::{Arc, Mutex};

use chitchat::{ChitchatId, NodeState};
use tokio::sync::{broadcast, watch};

use super::codec::{self, Observed, Peer};
use super::{Member, MemberEvent};
use crate::wire::NodeId;

/// The members known so far, and the nodes seen leaving.
#[derive(Debug)]
pub(crate) struct Tracker {
    me: ChitchatId,
    up: BTreeMap<NodeId, Member>,
    /// Nodes seen leaving and still live: never `Up` again, never `Down`.
    leaving: BTreeSet<NodeId>,
    /// Nodes whose malformed state was logged, so each is logged once while live.
    warned: HashSet<ChitchatId>,
}

impl Tracker {
    pub(crate) fn new(me: ChitchatId) -> Self {
        Self {
            me,
            up: BTreeMap::new(),
            leaving: BTreeSet::new(),
            warned: HashSet::new(),
        }
    }

    /// The live members, self excluded, by node id.
    pub(crate) fn members(&self) -> Vec<Member> {
        self.up.values().cloned().collect()
    }

    /// Takes a snapshot of the live nodes and returns what changed, in order: `Left`
    /// and `Down` first, then `Up`.
    pub(crate) fn update<'a>(
        &mut self,
        live: impl IntoIterator<Item = Observed<'a>>,
    ) -> Vec<MemberEvent> {
        let mut live_now: BTreeMap<NodeId, Member> = BTreeMap::new();
        let mut leaving_now: BTreeSet<NodeId> = BTreeSet::new();
        let mut seen: HashSet<ChitchatId> = HashSet::new();
        for observed in live {
            if *observed.id == self.me {
                continue;
            }
            seen.insert(observed.id.clone());
            match codec::classify(&observed) {
                Ok(Peer::Live(member)) => {
                    live_now.insert(member.node.clone(), member);
                }
                Ok(Peer::Leaving(node)) => {
                    leaving_now.insert(node);
                }
                Ok(Peer::Pending) => {}
                Err(e) => {
                    if self.warned.insert(observed.id.clone()) {
                        tracing::warn!(node = ?observed.id, error = %e, "peer gossips a malformed state; ignored");
                    }
                }
            }
        }
        self.warned.retain(|id| seen.contains(id));

        let mut events = Vec::new();
        let gone: Vec<NodeId> = self
            .up
            .keys()
            .filter(|node| !live_now.contains_key(*node))
            .cloned()
            .collect();
        for node in gone {
            self.up.remove(&node);
            if leaving_now.contains(&node) {
                events.push(MemberEvent::Left(node));
            } else {
                events.push(MemberEvent::Down(node));
            }
        }
        for (node, member) in &live_now {
            // Leaving is final for an incarnation, whatever a stale view says.
            if self.leaving.contains(node) || self.up.contains_key(node) {
                continue;
            }
            self.up.insert(node.clone(), member.clone());
            events.push(MemberEvent::Up(member.clone()));
        }
        // Forget leaving nodes once chitchat stops reporting them live at all.
        self.leaving
            .retain(|node| leaving_now.contains(node) || live_now.contains_key(node));
        self.leaving.extend(leaving_now);
        events
    }
}

/// Follows chitchat's live-node snapshots until chitchat stops.
pub(crate) async fn run(
    mut live: watch::Receiver<BTreeMap<ChitchatId, NodeState>>,
    tracker: Arc<Mutex<Tracker>>,
    events: broadcast::Sender<MemberEvent>,
) {
    loop {
        let changes = {
            let snapshot = live.borrow_and_update();
            let mut tracker = tracker.lock().unwrap_or_else(|p| p.into_inner());
            tracker.update(snapshot.iter().map(|(id, state)| Observed::of(id, state)))
        };
        for event in changes {
            tracing::info!(?event, "membership");
            // No subscriber is not an error.
            let _ = events.send(event);
        }
        if live.changed().await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(name: &str, incarnation: u64) -> ChitchatId {
        ChitchatId::new(name, incarnation, "127.0.0.1:9000".parse().unwrap())
    }

    fn node(name: &str, incarnation: u64) -> NodeId {
        NodeId {
            name: name.into(),
            incarnation,
        }
    }

    fn member(name: &str, incarnation: u64) -> Member {
        Member {
            node: node(name, incarnation),
            link_addr: "127.0.0.1:4000".parse().unwrap(),
        }
    }

    fn live<'a>(id: &'a ChitchatId) -> Observed<'a> {
        Observed {
            id,
            link: Some("127.0.0.1:4000"),
            leaving: None,
        }
    }

    #[test]
    fn up_then_down() {
        let me = id("me", 1);
        let a = id("a", 1);
        let mut t = Tracker::new(me.clone());
        assert_eq!(
            t.update([live(&me), live(&a)]),
            vec![MemberEvent::Up(member("a", 1))]
        );
        assert_eq!(t.update([live(&me), live(&a)]), vec![]);
        assert_eq!(t.members(), vec![member("a", 1)]);
        assert_eq!(t.update([live(&me)]), vec![MemberEvent::Down(node("a", 1))]);
        assert!(t.members().is_empty());
    }

    #[test]
    fn leaving_is_left_and_never_down() {
        let me = id("me", 1);
        let a = id("a", 1);
        let mut t = Tracker::new(me.clone());
        t.update([live(&a)]);
        let mut leaving = live(&a);
        leaving.leaving = Some("1");
        assert_eq!(
            t.update([leaving.clone()]),
            vec![MemberEvent::Left(node("a", 1))]
        );
        // A stale view without the mark does not bring it back.
        assert_eq!(t.update([live(&a)]), vec![]);
        assert_eq!(t.update([live(&a)]), vec![]);
        assert_eq!(t.update([leaving]), vec![]);
        assert_eq!(t.update([]), vec![]);
    }

    #[test]
    fn a_new_incarnation_is_another_member() {
        let mut t = Tracker::new(id("me", 1));
        let (old, new) = (id("a", 1), id("a", 2));
        t.update([live(&old)]);
        assert_eq!(
            t.update([live(&new)]),
            vec![
                MemberEvent::Down(node("a", 1)),
                MemberEvent::Up(member("a", 2))
            ]
        );
    }

    #[test]
    fn pending_and_malformed_peers_are_not_members() {
        let mut t = Tracker::new(id("me", 1));
        let a = id("a", 1);
        let b = id("b", 1);
        let pending = Observed {
            id: &a,
            link: None,
            leaving: None,
        };
        let malformed = Observed {
            id: &b,
            link: Some("not an address"),
            leaving: None,
        };
        assert_eq!(t.update([pending, malformed.clone()]), vec![]);
        assert_eq!(t.update([malformed]), vec![]);
        assert!(t.members().is_empty());
        assert_eq!(t.update([live(&a)]), vec![MemberEvent::Up(member("a", 1))]);
    }
}
