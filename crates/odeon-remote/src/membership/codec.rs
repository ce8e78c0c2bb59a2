//! How odeon's notions live in chitchat's state, and the checks on what peers gossip.
//!
//! - A [`NodeId`] is chitchat's node id: `name` is `ChitchatId::node_id` and
//!   `incarnation` its `generation_id`. Chitchat keys its state by the whole id, so a
//!   restarted node (same name, new incarnation) is a different member.
//! - A node's key-values hold, under the reserved prefix `odeon:`, its link address
//!   ([`LINK_KEY`]) and, once it leaves, the mark [`LEAVING_KEY`]. The user's
//!   key-values are stored under [`USER_PREFIX`], so no user key can overwrite them.

use std::net::SocketAddr;

use chitchat::{ChitchatId, NodeState};

use crate::defaults;
use crate::wire::{NodeId, WireError};

use super::{Member, MembershipError};

/// The key of a node's TCP listen address.
pub(crate) const LINK_KEY: &str = "odeon:link";
/// The key a node sets just before it leaves.
pub(crate) const LEAVING_KEY: &str = "odeon:leaving";
/// The only valid value of [`LEAVING_KEY`].
pub(crate) const LEAVING_VALUE: &str = "1";
/// The prefix of the user's key-values in chitchat's state.
pub(crate) const USER_PREFIX: &str = "kv:";

pub(crate) fn chitchat_id(node: &NodeId, gossip_addr: SocketAddr) -> ChitchatId {
    ChitchatId::new(node.name.clone(), node.incarnation, gossip_addr)
}

/// Checks a user key-value before it is gossiped.
pub(crate) fn check_entry(key: &str, value: &str) -> Result<(), MembershipError> {
    if key.is_empty() || key.len() > defaults::MAX_KEY {
        return Err(MembershipError::InvalidKey {
            len: key.len(),
            max: defaults::MAX_KEY,
        });
    }
    if value.len() > defaults::MAX_VALUE {
        return Err(MembershipError::InvalidValue {
            len: value.len(),
            max: defaults::MAX_VALUE,
        });
    }
    Ok(())
}

/// What a peer's gossiped state says, when it is well-formed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Peer {
    /// A live member.
    Live(Member),
    /// It announced that it is leaving.
    Leaving(NodeId),
    /// Its link address has not reached us yet (a partial delta): not a member yet.
    Pending,
}

/// Why a peer's gossiped state was ignored.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Malformed {
    #[error("invalid node name: {0}")]
    Name(#[from] WireError),
    #[error("invalid link address {0:?}")]
    LinkAddr(String),
    #[error("invalid leaving mark {0:?}")]
    Leaving(String),
}

/// The parts of a chitchat node state that membership reads, so that the rules below
/// are testable without a running chitchat.
#[derive(Clone, Debug)]
pub(crate) struct Observed<'a> {
    pub(crate) id: &'a ChitchatId,
    pub(crate) link: Option<&'a str>,
    pub(crate) leaving: Option<&'a str>,
}

impl<'a> Observed<'a> {
    pub(crate) fn of(id: &'a ChitchatId, state: &'a NodeState) -> Self {
        Self {
            id,
            link: state.get(LINK_KEY),
            leaving: state.get(LEAVING_KEY),
        }
    }
}

/// Reads a peer's identity and status, validating everything it gossiped.
pub(crate) fn classify(observed: &Observed<'_>) -> Result<Peer, Malformed> {
    let node = NodeId {
        name: observed.id.node_id.to_string(),
        incarnation: observed.id.generation_id,
    };
    node.validate()?;
    match observed.leaving {
        None => {}
        Some(LEAVING_VALUE) => return Ok(Peer::Leaving(node)),
        Some(other) => return Err(Malformed::Leaving(truncated(other))),
    }
    let Some(link) = observed.link else {
        return Ok(Peer::Pending);
    };
    let link_addr = parse_link_addr(link)?;
    Ok(Peer::Live(Member { node, link_addr }))
}

fn parse_link_addr(text: &str) -> Result<SocketAddr, Malformed> {
    match text.parse::<SocketAddr>() {
        Ok(addr) if !addr.ip().is_unspecified() && addr.port() != 0 => Ok(addr),
        _ => Err(Malformed::LinkAddr(truncated(text))),
    }
}

/// A peer-controlled string, cut short for the logs.
fn truncated(text: &str) -> String {
    text.chars().take(64).collect()
}

/// The user key-values of a node state under `prefix`, validated like local ones.
pub(crate) fn user_entries<'a>(
    state: &'a NodeState,
    prefix: &'a str,
) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
    state.key_values().filter_map(move |(key, value)| {
        let key = key.strip_prefix(USER_PREFIX)?;
        if !key.starts_with(prefix) {
            return None;
        }
        if let Err(e) = check_entry(key, value) {
            tracing::warn!(node = ?state.chitchat_id(), error = %e, "gossiped key-value ignored");
            return None;
        }
        Some((key, value))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(name: &str) -> ChitchatId {
        ChitchatId::new(name, 7, "127.0.0.1:9000".parse().unwrap())
    }

    fn observe<'a>(
        id: &'a ChitchatId,
        link: Option<&'a str>,
        leaving: Option<&'a str>,
    ) -> Observed<'a> {
        Observed { id, link, leaving }
    }

    #[test]
    fn a_well_formed_peer_is_a_member() {
        let a = id("a");
        let peer = classify(&observe(&a, Some("127.0.0.1:4000"), None)).unwrap();
        assert_eq!(
            peer,
            Peer::Live(Member {
                node: NodeId {
                    name: "a".into(),
                    incarnation: 7
                },
                link_addr: "127.0.0.1:4000".parse().unwrap(),
            })
        );
    }

    #[test]
    fn leaving_and_pending_peers_are_not_members() {
        let a = id("a");
        assert!(matches!(
            classify(&observe(&a, Some("127.0.0.1:4000"), Some("1"))),
            Ok(Peer::Leaving(_))
        ));
        assert!(matches!(
            classify(&observe(&a, None, None)),
            Ok(Peer::Pending)
        ));
    }

    #[test]
    fn malformed_gossip_is_an_error_not_a_panic() {
        let a = id("a");
        for link in [
            "",
            "nonsense",
            "127.0.0.1",
            "0.0.0.0:4000",
            "127.0.0.1:0",
            "[::1]:99999",
        ] {
            assert!(
                matches!(
                    classify(&observe(&a, Some(link), None)),
                    Err(Malformed::LinkAddr(_))
                ),
                "{link:?}"
            );
        }
        assert!(matches!(
            classify(&observe(&a, Some("127.0.0.1:4000"), Some("yes"))),
            Err(Malformed::Leaving(_))
        ));
        let nameless = id("");
        assert!(matches!(
            classify(&observe(&nameless, Some("127.0.0.1:4000"), None)),
            Err(Malformed::Name(_))
        ));
        let long = id(&"x".repeat(crate::wire::MAX_NAME + 1));
        assert!(classify(&observe(&long, Some("127.0.0.1:4000"), None)).is_err());
    }

    #[test]
    fn entries_are_bounded() {
        assert!(check_entry("k", "v").is_ok());
        assert!(check_entry("", "v").is_err());
        assert!(check_entry(&"k".repeat(defaults::MAX_KEY + 1), "v").is_err());
        assert!(check_entry("k", &"v".repeat(defaults::MAX_VALUE + 1)).is_err());
    }
}
