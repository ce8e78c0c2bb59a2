//! Nodes with mutual TLS on: they link and talk when their certificates share the
//! cluster CA, and a node with a certificate from another CA cannot join.

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
