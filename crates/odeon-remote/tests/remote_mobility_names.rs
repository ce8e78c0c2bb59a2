//! Names of a mobile actor after it moves (design §3.8; README "Mobility"): a name
//! registered on the actor's birth node, in the cluster registry or in the system's
//! own registry, keeps finding it wherever it went; so does a name registered on a
//! node the actor moved to (issue 14).

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]

mod common;
mod mobile_util;

use mobile_util::*;

#[test]
fn a_name_registered_on_the_birth_node_finds_the_actor_after_it_moves() {
    let nodes = cluster(&["h", "a", "b"], |b| b);
    let (h, a, b) = (&nodes[0], &nodes[1], &nodes[2]);
    let tally = h.system.spawn(Tally::default());
    h.node().register("tally", &tally).unwrap();
    h.system.handle().register("local-tally", &tally).unwrap();
    // h → a → b, then back to a: the name stays on h, and each lookup resolves to
    // the actor through h's entry (its directory), wherever it runs.
    let mut sent = 0;
    for (i, next) in [a, b, a].into_iter().enumerate() {
        move_to(&tally, next);
        for (s, m) in nodes.iter().enumerate() {
            let found = lookup(m, "tally");
            let at = m.system.block_on(found.ask(Where)).unwrap();
            assert_eq!(at, next.node().id().name, "move {i}, looked up on {s}");
            send_numbered(&found, s as u32, sent..sent + 10);
        }
        // The system's registry on h holds a local ref: the stub the actor left,
        // which forwards.
        let local = h
            .system
            .handle()
            .lookup::<Tally>("local-tally")
            .expect("the local name is kept after the move");
        assert_eq!(
            h.system.block_on(local.ask(Where)).unwrap(),
            next.node().id().name
        );
        send_numbered(&local, 9, sent..sent + 10);
        sent += 10;
    }
    // Tells from other nodes may still be on their way when a's ask arrives.
    let from_a = lookup(a, "tally");
    let log = common::eventually(WAIT, || {
        let log = a.system.block_on(from_a.ask(Log)).ok()?;
        (log.len() as u64 == 4 * sent).then_some(log)
    })
    .unwrap_or_else(|| a.system.block_on(from_a.ask(Log)).unwrap());
    assert_each_once_in_order(&log, &[(0, sent), (1, sent), (2, sent), (9, sent)]);
}

/// Issue 14: a name registered on a node the actor moved to (not its birth node)
/// stands for the actor's birth identity: found on every node, the registering one
/// included, and still reaching the actor after it moved on, each message once and in
/// order.
#[test]
fn a_name_registered_where_the_actor_moved_to_follows_it_on() {
    let nodes = cluster(&["h", "a", "b"], |b| b);
    let (h, a, b) = (&nodes[0], &nodes[1], &nodes[2]);
    let tally = h.system.spawn(Tally::default());
    h.node().register("tally", &tally).unwrap();
    move_to(&tally, a);
    // The local ref on a, where the actor runs now.
    let here = lookup(a, "tally");
    assert!(here.is_local(), "a lookup where the actor runs is local");
    a.node().register("roamer", &here).unwrap();
    assert!(matches!(
        a.node().register("roamer", &here),
        Err(odeon_remote::RegistryError::Taken(_))
    ));
    // Refs found before the actor moves on are kept and used after each move too.
    let early: Vec<_> = nodes.iter().map(|m| lookup(m, "roamer")).collect();
    let mut sent = 0;
    for (i, next) in [a, b, h, a].into_iter().enumerate() {
        if i > 0 {
            move_to(&tally, next);
        }
        for (s, m) in nodes.iter().enumerate() {
            let found = lookup(m, "roamer");
            let at = m.system.block_on(found.ask(Where)).unwrap();
            assert_eq!(at, next.node().id().name, "move {i}, looked up on {s}");
            assert_eq!(
                found.id(),
                tally.id(),
                "move {i}, looked up on {s}: the birth identity"
            );
            send_numbered(&found, s as u32, sent..sent + 10);
            let at = m.system.block_on(early[s].ask(Where)).unwrap();
            assert_eq!(at, next.node().id().name, "move {i}, early ref on {s}");
            send_numbered(&early[s], 10 + s as u32, sent..sent + 10);
        }
        sent += 10;
    }
    let senders: Vec<_> = (0..3).chain(10..13).map(|s| (s, sent)).collect();
    let from_b = lookup(b, "roamer");
    let log = common::eventually(WAIT, || {
        let log = b.system.block_on(from_b.ask(Log)).ok()?;
        (log.len() as u64 == 6 * sent).then_some(log)
    })
    .unwrap_or_else(|| b.system.block_on(from_b.ask(Log)).unwrap());
    assert_each_once_in_order(&log, &senders);
    // Unregistered on a: the name is gone everywhere.
    assert!(a.node().unregister("roamer"));
    for m in &nodes {
        let gone = common::eventually(WAIT, || {
            matches!(
                m.system.block_on(m.node().lookup::<Tally>("roamer")),
                Err(odeon_remote::RegistryError::NotFound(_))
            )
            .then_some(())
        });
        assert!(gone.is_some(), "{} still finds the name", m.node().id());
    }
}

/// A registration gossiped in a format this node cannot read (garbage, or a newer
/// format) is rejected with an error that says who sent what, never a panic; the
/// nodes keep serving other names. (The old `id/token/type` format, which every node
/// still writes for its own actors, is read by the test above: "tally" on h.)
#[test]
fn a_malformed_gossiped_registration_is_rejected_with_a_clear_error() {
    use odeon_remote::RegistryError;
    use odeon_remote::membership::{Membership, MembershipConfig};

    let nodes = cluster(&["h", "a"], |b| b);
    let h = &nodes[0];
    let tally = h.system.spawn(Tally::default());
    h.node().register("tally", &tally).unwrap();
    // A gossip member with the cluster secret that writes garbage (its link address
    // is never served: it is not a node).
    let rt = tokio::runtime::Runtime::new().unwrap();
    let config = MembershipConfig {
        seeds: vec![h.addr()],
        gossip_interval: std::time::Duration::from_millis(100),
        ..MembershipConfig::new(
            odeon_remote::NodeId {
                name: "scribbler".into(),
                incarnation: 1,
            },
            "127.0.0.1:0".parse().unwrap(),
            "127.0.0.1:9".parse().unwrap(),
            common::secret(),
        )
    };
    let scribbler = rt.block_on(Membership::start(config)).unwrap();
    let values = [
        ("junk", "not a registration"),
        ("half", "mob/1/h"),
        ("bad-id", "x/2/util.Tally"),
        ("long-name", "mob/999/h/1/1/2/util.Tally"),
    ];
    for (name, value) in values {
        scribbler.set(&format!("reg/{name}"), value).unwrap();
    }
    for m in &nodes {
        for (name, value) in values {
            let e = common::eventually(WAIT, || {
                match m.system.block_on(m.node().lookup::<Tally>(name)) {
                    Err(RegistryError::Failed(e)) => Some(e),
                    _ => None,
                }
            })
            .unwrap_or_else(|| panic!("{} never rejected {name:?}", m.node().id()));
            assert!(
                e.contains("scribbler") && e.contains(value),
                "the error names the sender and the value: {e}"
            );
        }
        // The node still serves a well-formed name.
        let found = lookup(m, "tally");
        assert_eq!(m.system.block_on(found.ask(Where)).unwrap(), "h");
    }
    rt.block_on(scribbler.leave());
}

/// Waits until a lookup of `name` on every node answers `NotFound`.
fn assert_withdrawn(nodes: &[common::Member], name: &str) {
    for m in nodes {
        let gone = common::eventually(WAIT, || {
            matches!(
                m.system.block_on(m.node().lookup::<Tally>(name)),
                Err(odeon_remote::RegistryError::NotFound(_))
            )
            .then_some(())
        });
        assert!(gone.is_some(), "{} still finds {name:?}", m.node().id());
    }
}

/// Issue 14: names go when the actor stops, as for an actor that never moved: a name
/// registered where the actor moved to, and the one on its birth node, are withdrawn
/// on every node when it stops (here: after it moved on, stopped through the stale
/// ref on the node that registered the name).
#[test]
fn names_of_a_moved_actor_go_when_it_stops_after_moving_on() {
    let nodes = cluster(&["h", "a", "b"], |b| b);
    let (h, a, b) = (&nodes[0], &nodes[1], &nodes[2]);
    let tally = h.system.spawn(Tally::default());
    h.node().register("tally", &tally).unwrap();
    move_to(&tally, a);
    let here = lookup(a, "tally");
    a.node().register("roamer", &here).unwrap();
    for m in &nodes {
        lookup(m, "roamer");
    }
    move_to(&tally, b);
    here.stop();
    assert_withdrawn(&nodes, "roamer");
    assert_withdrawn(&nodes, "tally");
    // The name can be given to another actor, and that registration stays.
    let other = a.system.spawn(Tally::default());
    a.node().register("roamer", &other).unwrap();
    let found = lookup(b, "roamer");
    assert_eq!(
        b.system.block_on(found.ask(Where)).unwrap(),
        a.node().id().name
    );
}

/// The same when the actor stops on the node that registered the name.
#[test]
fn a_name_registered_where_the_actor_moved_to_goes_when_it_stops_there() {
    let nodes = cluster(&["h", "a", "b"], |b| b);
    let (h, a) = (&nodes[0], &nodes[1]);
    let tally = h.system.spawn(Tally::default());
    h.node().register("tally", &tally).unwrap();
    move_to(&tally, a);
    let here = lookup(a, "tally");
    a.node().register("roamer", &here).unwrap();
    for m in &nodes {
        lookup(m, "roamer");
    }
    here.stop();
    assert_withdrawn(&nodes, "roamer");
    assert_withdrawn(&nodes, "tally");
}
