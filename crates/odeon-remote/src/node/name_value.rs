//! The value a node gossips for one of its registered names (key `reg/{name}`).
//!
//! Two formats:
//! - `{id}/{token}/{type}`: an actor exported by the registering node itself (every
//!   actor that is not mobile, and a mobile actor registered on its birth node). The
//!   ref names the registering node. This is the only format older nodes write.
//! - `mob/{len}/{birth name}/{incarnation}/{id}/{token}/{type}`: a mobile actor
//!   registered on a node it moved to (design `mobility.md` §3.8). The ref names the
//!   actor's birth node, so that a lookup resolves to its location-independent
//!   identity, wherever it runs. `len` is the byte length of the birth node's name
//!   (which may contain `/`); `incarnation` is in hex, as `NodeId` displays it.
//!
//! An older node reading the `mob/` format finds no number where it expects the id and
//! skips the value; its lookups then ask the registering node, whose answer is the
//! same birth `WireRef`. Values this node cannot read are rejected with an error that
//! says why (never a panic): gossip comes from other nodes and may be garbage.

use crate::wire::{NodeId, WireRef};

/// The prefix of the mobile format.
const MOBILE: &str = "mob/";

/// What `registrar` gossips for a registration of `wire`.
pub(super) fn encode(registrar: &NodeId, wire: &WireRef) -> String {
    if wire.node == *registrar {
        format!("{}/{}/{}", wire.id, wire.token, wire.actor_type)
    } else {
        format!(
            "{MOBILE}{}/{}/{:x}/{}/{}/{}",
            wire.node.name.len(),
            wire.node.name,
            wire.node.incarnation,
            wire.id,
            wire.token,
            wire.actor_type
        )
    }
}

/// The ref a registration gossiped by `registrar` names.
///
/// # Errors
/// A sentence saying what is wrong with `value`.
pub(super) fn decode(registrar: &NodeId, value: &str) -> Result<WireRef, String> {
    let Some(rest) = value.strip_prefix(MOBILE) else {
        return ids(registrar.clone(), value);
    };
    let (len, rest) = rest
        .split_once('/')
        .ok_or("a mobile registration without the length of its birth node's name")?;
    let len: usize = len
        .parse()
        .map_err(|_| format!("a birth node name length of {len:?} is not a number"))?;
    let name = rest
        .get(..len)
        .ok_or_else(|| format!("a birth node name of {len} bytes in a shorter value"))?;
    let rest = rest[len..]
        .strip_prefix('/')
        .ok_or("no '/' after the birth node's name")?;
    let (incarnation, rest) = rest
        .split_once('/')
        .ok_or("a mobile registration without the birth node's incarnation")?;
    let birth = NodeId {
        name: name.to_string(),
        incarnation: u64::from_str_radix(incarnation, 16)
            .map_err(|_| format!("a birth incarnation of {incarnation:?} is not hex"))?,
    };
    birth.validate().map_err(|e| e.to_string())?;
    ids(birth, rest)
}

/// `{id}/{token}/{type}` of an actor born on `node`.
fn ids(node: NodeId, value: &str) -> Result<WireRef, String> {
    let mut parts = value.splitn(3, '/');
    let (Some(id), Some(token), Some(actor_type)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(format!(
            "{value:?} is neither `id/token/type` nor `{MOBILE}…`"
        ));
    };
    if actor_type.is_empty() {
        return Err("a registration without an actor type".into());
    }
    Ok(WireRef {
        node,
        id: id
            .parse()
            .map_err(|_| format!("an actor id of {id:?} is not a number"))?,
        token: token
            .parse()
            .map_err(|_| format!("a token of {token:?} is not a number"))?,
        actor_type: actor_type.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, incarnation: u64) -> NodeId {
        NodeId {
            name: name.into(),
            incarnation,
        }
    }

    fn wire(at: NodeId) -> WireRef {
        WireRef {
            node: at,
            id: 42,
            token: u64::MAX - 3,
            actor_type: "util.Tally/v2".into(),
        }
    }

    #[test]
    fn a_registration_of_the_registrars_own_actor_keeps_the_old_format() {
        let me = node("a", 7);
        let value = encode(&me, &wire(me.clone()));
        assert_eq!(value, format!("42/{}/util.Tally/v2", u64::MAX - 3));
        assert_eq!(decode(&me, &value).unwrap(), wire(me));
    }

    #[test]
    fn a_moved_in_actor_is_gossiped_with_its_birth_node() {
        let me = node("a", 7);
        let birth = node("h/odd#name", 0xdead_beef_0001);
        let value = encode(&me, &wire(birth.clone()));
        assert!(
            value.starts_with("mob/10/h/odd#name/deadbeef0001/42/"),
            "{value}"
        );
        assert_eq!(decode(&me, &value).unwrap(), wire(birth));
    }

    #[test]
    fn an_old_value_from_an_older_peer_names_that_peer() {
        let peer = node("old", 1);
        assert_eq!(
            decode(&peer, "5/6/some.Type").unwrap(),
            WireRef {
                node: peer,
                id: 5,
                token: 6,
                actor_type: "some.Type".into()
            }
        );
    }

    #[test]
    fn garbage_is_rejected_with_a_reason() {
        let me = node("a", 1);
        for bad in [
            "",
            "x",
            "1/2",
            "1/2/",
            "x/2/t",
            "1/y/t",
            "-1/2/t",
            "mob/",
            "mob/x/h/1/1/2/t",
            "mob/99/h/1/1/2/t",
            "mob/1/h1/1/2/t",
            "mob/1/h/zz/1/2/t",
            "mob/1/h/1/1/2",
            "mob/0//1/1/2/t",
            "mob/1/é/1/1/2/t",
            "mob/18446744073709551616/h/1/1/2/t",
        ] {
            let e = decode(&me, bad).expect_err(bad);
            assert!(!e.is_empty(), "{bad:?}");
        }
    }
}
