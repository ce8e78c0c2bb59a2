//! Nodes with mutual TLS on: they link and talk when their certificates share the
//! cluster CA, and a node with a certificate from another CA cannot join.
#![cfg(feature = "tls")]
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]

mod common;

use common::certs::Ca;
use common::*;

#[test]
fn nodes_with_tls_talk_and_a_node_from_another_ca_cannot_join() {
    let ca = Ca::new("cluster");
    let a = Member::start_tls("a", &[], ca.tls("a", &ca)).unwrap();
    let b = Member::start_tls("b", &[a.addr()], ca.tls("b", &ca)).unwrap();
    let c = a.system.spawn(Counter {
        total: 0,
        seen: Vec::new(),
    });
    a.node().register("c", &c).unwrap();
    let remote = b.system.block_on(b.node().lookup::<Counter>("c")).unwrap();
    assert_eq!(b.system.block_on(remote.ask(Add(5))), Ok(5));

    let rogue = Ca::new("rogue");
    let err = Member::start_tls("m", &[a.addr()], rogue.tls("m", &rogue))
        .err()
        .expect("a node whose certificate another CA signed is refused");
    assert!(matches!(err, odeon_remote::NodeError::Link { .. }), "{err}");
    // A node without TLS is refused by TLS nodes too.
    let system = odeon::System::new();
    let plain = system.block_on(
        odeon_remote::Node::builder("p")
            .secret(secret())
            .seed(a.addr())
            .start(&system.handle()),
    );
    assert!(matches!(plain, Err(odeon_remote::NodeError::Link { .. })));
    // The cluster is unharmed.
    assert_eq!(b.system.block_on(remote.ask(Add(1))), Ok(6));
    assert_eq!(a.node().peers(), vec![b.node().id().clone()]);
}

/// Issue 13, item 14: a node configured for plaintext that dials a TLS node (or the
/// reverse) is told so, not "frame of 352518912 bytes exceeds the limit" (a TLS
/// alert's header read as a frame's length prefix).
#[test]
fn a_tls_mismatch_between_nodes_is_named_in_the_error() {
    let ca = Ca::new("cluster");
    let tls_node = Member::start_tls("t", &[], ca.tls("t", &ca)).unwrap();
    let plain_node = Member::start("p", &[]);

    let system = odeon::System::new();
    let plain = system.block_on(
        odeon_remote::Node::builder("p2")
            .secret(secret())
            .seed(tls_node.addr())
            .start(&system.handle()),
    );
    let err = plain.expect_err("a plaintext node cannot join a TLS node");
    let text = err.to_string();
    assert!(
        text.contains("the peer speaks TLS; this node is configured for plaintext"),
        "{text}"
    );
    assert!(!text.contains("exceeds the limit"), "{text}");

    let err = Member::start_tls("t2", &[plain_node.addr()], ca.tls("t2", &ca))
        .err()
        .expect("a TLS node cannot join a plaintext node");
    let text = err.to_string();
    assert!(
        text.contains("the peer speaks plaintext; this node is configured for TLS"),
        "{text}"
    );
}
