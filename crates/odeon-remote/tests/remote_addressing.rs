//! Who a node reaches and how: a node bound to every interface with an advertised
//! address, refs to nodes the receiver does not know, forged export ids, and lookups
//! right after a node restarts under the same name.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use common::*;
use odeon::{ActorRef, AskError};
use odeon_remote::transport::{self, LinkConfig};
use odeon_remote::wire::{self, NodeId, Outcome, Traffic};
use odeon_remote::{Node, NodeBuilder, NodeError};

const LONG: Duration = Duration::from_secs(10);

fn counter(m: &Member) -> ActorRef<Counter> {
    m.system.spawn(Counter {
        total: 0,
        seen: Vec::new(),
    })
}

/// A member built like `Member::start` (but slower to lose a peer: none of these tests
/// is about loss, and handshakes take long on a loaded machine), with `tune` applied to
/// its builder.
fn start_with(
    name: &str,
    seeds: &[SocketAddr],
    tune: impl FnOnce(NodeBuilder) -> NodeBuilder,
) -> Result<Member, NodeError> {
    let system = odeon::System::new();
    let mut b = Node::builder(name)
        .secret(secret())
        .lost_after(Duration::from_secs(5))
        .gossip_interval(Duration::from_millis(100))
        .spawnable::<Counter>();
    for s in seeds {
        b = b.seed(*s);
    }
    let node = system.block_on(tune(b).start(&system.handle()))?;
    Ok(Member {
        system,
        node: Some(node),
    })
}

fn member(name: &str, seeds: &[SocketAddr]) -> Member {
    start_with(name, seeds, |b| b).expect("node starts")
}

/// `name` looked up from `m`, waiting for gossip or links to bring it.
fn find(m: &Member, name: &str) -> ActorRef<Counter> {
    eventually(LONG, || {
        m.system.block_on(m.node().lookup::<Counter>(name)).ok()
    })
    .unwrap_or_else(|| panic!("{name} is found"))
}

#[test]
fn a_node_bound_to_every_interface_advertises_its_address_joins_and_serves() {
    let a = member("a", &[]);
    let w = start_with("w", &[a.addr()], |b| {
        b.listen("0.0.0.0:0".parse().unwrap())
            // Port 0: the bound port.
            .advertise("127.0.0.1:0".parse().unwrap())
    })
    .expect("a node bound to 0.0.0.0 with an advertised address starts");
    let bound = w.node().bound_addr();
    assert!(bound.ip().is_unspecified(), "{bound}");
    assert_eq!(
        w.addr(),
        SocketAddr::from(([127, 0, 0, 1], bound.port())),
        "listen_addr is the advertised address"
    );
    let on_w = counter(&w);
    w.node().register("on-w", &on_w).unwrap();
    // w linked to its seed `a`, telling it the advertised address.
    let found = eventually(LONG, || {
        a.system.block_on(a.node().lookup::<Counter>("on-w")).ok()
    })
    .expect("a finds the counter on w");
    assert_eq!(a.system.block_on(found.ask(Add(2))), Ok(2));

    // A node that was only given `a` learns of `w` through gossip, which must carry an
    // address it can dial, and reaches w's actor.
    let c = member("c", &[a.addr()]);
    let from_c = eventually(LONG, || {
        c.system.block_on(c.node().lookup::<Counter>("on-w")).ok()
    })
    .expect("the registration on w reaches c by gossip");
    assert_eq!(c.system.block_on(from_c.ask(Add(3))), Ok(5));
    assert!(c.node().peers().contains(w.node().id()));

    // And w, seeded with nothing but `a`, serves asks from a node seeded with w only.
    let d = member("d", &[w.addr()]);
    let from_d = find(&d, "on-w");
    assert_eq!(d.system.block_on(from_d.ask(Add(4))), Ok(9));
}

#[test]
fn binding_every_interface_without_an_advertised_address_is_a_typed_error() {
    let res = start_with("w", &[], |b| b.listen("0.0.0.0:0".parse().unwrap()));
    assert!(
        matches!(&res, Err(NodeError::NoAdvertise { bind }) if bind.ip().is_unspecified()),
        "{:?}",
        res.err()
    );
    let res = start_with("w", &[], |b| {
        b.listen("127.0.0.1:0".parse().unwrap())
            .advertise("0.0.0.0:7400".parse().unwrap())
    });
    assert!(matches!(res, Err(NodeError::Config(_))), "{:?}", res.err());
}

/// A ref to an actor on a node the receiver never heard of: no dial to that node, and
/// sends through the ref fail as unreachable.
#[test]
fn a_ref_to_a_node_this_node_does_not_know_is_dead_and_nothing_is_dialed() {
    let victim = member("victim", &[]);
    let on_victim = counter(&victim);
    victim.node().register("v", &on_victim).unwrap();
    let mallory = member("mallory", &[victim.addr()]);
    // A node outside the cluster the victim knows: no seeds, it gossips to no one and
    // dials no one. Mallory links to it on her own.
    let ghost = member("ghost", &[]);
    let on_ghost = counter(&ghost);
    ghost.node().register("g", &on_ghost).unwrap();
    mallory
        .system
        .block_on(mallory.node().connect(ghost.addr()))
        .unwrap();
    let ghost_ref = find(&mallory, "g");
    assert_eq!(mallory.system.block_on(ghost_ref.ask(Add(0))), Ok(0));

    // Mallory hands the victim's counter a ref to the ghost's actor.
    let v = find(&mallory, "v");
    let answer = mallory.system.block_on(v.ask(Forward {
        other: ghost_ref,
        n: 7,
    }));
    // The victim's ask through that ref failed (the handler maps failure to MAX).
    assert_eq!(answer, Ok(u64::MAX));
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        !ghost.node().peers().contains(victim.node().id()),
        "the victim linked to a node it only saw in a message: {:?}",
        ghost.node().peers()
    );
    assert!(!victim.node().peers().contains(ghost.node().id()));
    assert_eq!(
        ghost.system.block_on(on_ghost.ask(History)),
        Ok(vec![0]),
        "nothing from the victim reached the ghost"
    );
}

/// An authenticated peer (a raw link, as an attacker would open one) addresses frames
/// to ids it guesses: actor ids are sequential, so it tries every id around the one it
/// was legitimately given (`ActorRef::id` of a looked-up ref).
#[test]
fn forged_export_ids_reach_no_actor() {
    let a = member("a", &[]);
    let targets: Vec<_> = (0..5).map(|_| counter(&a)).collect();
    for (i, t) in targets.iter().enumerate() {
        a.node().register(&format!("t{i}"), t).unwrap();
    }
    let ids: Vec<u64> = targets.iter().map(|t| t.id().as_u64()).collect();
    let guesses = ids.iter().min().unwrap().saturating_sub(200)..ids.iter().max().unwrap() + 200;
    let addr = a.addr();
    let tell = |to: u64| Traffic::Tell {
        to,
        message: "test.Add".into(),
        payload: postcard_u64(1000).into(),
    };
    a.system.block_on(async {
        let me = NodeId {
            name: "mallory".into(),
            incarnation: 1,
        };
        let mut link = transport::connect(addr, &me, &LinkConfig::new(secret()))
            .await
            .unwrap();
        let attach = wire::encode(&Traffic::Attach {
            listen: "127.0.0.1:9".parse().unwrap(),
            session: 1,
            known: None,
            quiet_ms: 1_000,
        })
        .unwrap();
        link.writer.send(&attach).await.unwrap();
        let answer = link.reader.next().await.unwrap().unwrap();
        assert!(matches!(
            wire::decode::<Traffic>(&answer),
            Ok(Traffic::Attached { .. })
        ));
        // The id a looked-up ref reports is the actor's identity, not its address.
        let ask = Traffic::Ask {
            to: ids[0],
            request: 2,
            message: "test.Add".into(),
            payload: postcard_u64(1000).into(),
        };
        link.writer
            .send(&wire::encode(&ask).unwrap())
            .await
            .unwrap();
        for guess in guesses {
            link.writer
                .send(&wire::encode(&tell(guess)).unwrap())
                .await
                .unwrap();
            link.writer
                .send(&wire::encode(&Traffic::Stop { to: guess }).unwrap())
                .await
                .unwrap();
        }
        // Frames on one link are handled in order: once this is answered, every guess
        // above has been handled.
        let probe = wire::encode(&Traffic::Lookup {
            request: 1,
            name: "t0".into(),
        })
        .unwrap();
        link.writer.send(&probe).await.unwrap();
        let mut forged_ask = None;
        loop {
            let frame = tokio::time::timeout(LONG, link.reader.next())
                .await
                .expect("an answer to the lookup")
                .unwrap()
                .expect("the link stays open");
            match wire::decode::<Traffic>(&frame) {
                Ok(Traffic::Reply {
                    request: 2,
                    outcome,
                }) => forged_ask = Some(outcome.into_owned()),
                Ok(Traffic::Reply { request: 1, .. }) => break,
                _ => {}
            }
        }
        assert!(
            matches!(forged_ask, Some(Outcome::Failed(_))),
            "an ask to a forged id is answered with a failure: {forged_ask:?}"
        );
    });
    for t in &targets {
        assert!(t.is_alive(), "a forged id stopped an exported actor");
        assert_eq!(
            a.system.block_on(t.ask(History)),
            Ok(vec![]),
            "a forged id delivered a message"
        );
    }
}

/// `Add(n)` as postcard puts it on the wire: the varint of `n`.
fn postcard_u64(n: u64) -> Vec<u8> {
    let (mut out, mut n) = (Vec::new(), n);
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return out;
        }
        out.push(byte | 0x80);
    }
}

/// The node a remote ref points to, as (name, incarnation).
fn home(r: &ActorRef<Counter>) -> (String, u64) {
    let (name, incarnation, _) = r.endpoint().expect("a remote ref").address();
    (name.to_string(), incarnation)
}

#[test]
fn a_lookup_right_after_a_restart_returns_the_new_incarnation() {
    // Slow gossip and a long `lost_after`: the crashed incarnation stays a member in
    // gossip (and a peer) for seconds after its restart.
    let slow = |b: NodeBuilder| {
        b.gossip_interval(Duration::from_millis(300))
            .lost_after(Duration::from_secs(20))
    };
    let a = start_with("a", &[], slow).unwrap();
    let b1 = start_with("b", &[a.addr()], slow).unwrap();
    let c1 = counter(&b1);
    c1.tell(Add(100)).unwrap();
    b1.node().register("counter", &c1).unwrap();
    let old = eventually(LONG, || {
        a.system
            .block_on(a.node().lookup::<Counter>("counter"))
            .ok()
    })
    .expect("a finds b's counter");
    assert_eq!(home(&old), ("b".to_string(), b1.node().id().incarnation));
    let old_id = b1.node().id().clone();

    // Time for gossip to carry the registration to `a` (the test fails to test, not
    // spuriously, if that takes longer on a loaded machine).
    std::thread::sleep(Duration::from_millis(1500));

    // b crashes and comes back under the same name.
    drop(b1);
    let b2 = start_with("b", &[a.addr()], slow).unwrap();
    let new_id = b2.node().id().clone();
    assert!(
        new_id.incarnation > old_id.incarnation,
        "a later start is a larger incarnation"
    );
    eventually(LONG, || a.node().peers().contains(&new_id).then_some(()))
        .expect("a hears of the new incarnation");
    // Gossip on `a` still lists the old incarnation and its registration.
    let c2 = counter(&b2);
    b2.node().register("counter", &c2).unwrap();
    for _ in 0..5 {
        let found = a
            .system
            .block_on(a.node().lookup::<Counter>("counter"))
            .expect("the name is registered on the new incarnation");
        assert_eq!(home(&found), ("b".to_string(), new_id.incarnation));
        assert_eq!(a.system.block_on(found.ask(Add(0))), Ok(0));
    }
    assert!(
        !a.node().peers().contains(&old_id),
        "the superseded incarnation is no longer a peer"
    );
    // The old ref fails at once rather than at the failure detector's verdict.
    assert_eq!(
        a.system.block_on(old.ask(Add(1))),
        Err(AskError::Unreachable)
    );
    drop(b2);
}

/// A TCP forwarder on loopback to whatever address `target` holds when a connection
/// comes in: a stand-in for a TCP proxy or port mapping in front of a node.
fn tcp_proxy(
    rt: &tokio::runtime::Runtime,
    target: std::sync::Arc<std::sync::OnceLock<SocketAddr>>,
) -> SocketAddr {
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    rt.spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            let Some(to) = target.get().copied() else {
                continue;
            };
            tokio::spawn(async move {
                if let Ok(mut outbound) = tokio::net::TcpStream::connect(to).await {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
        }
    });
    addr
}

#[test]
fn behind_a_tcp_proxy_a_node_is_reached_at_its_advertised_address() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let target = std::sync::Arc::new(std::sync::OnceLock::new());
    let proxy = tcp_proxy(&rt, target.clone());
    let a = member("a", &[]);
    let w = start_with("w", &[a.addr()], |b| b.advertise(proxy)).unwrap();
    target.set(w.node().bound_addr()).unwrap();
    assert_eq!(w.addr(), proxy);
    let on_w = counter(&w);
    w.node().register("on-w", &on_w).unwrap();
    // c learns of w by gossip (UDP, straight to w's bound port: the proxy carries only
    // TCP) and links to it through the proxy.
    let c = member("c", &[a.addr()]);
    let from_c = eventually(LONG, || {
        c.system.block_on(c.node().lookup::<Counter>("on-w")).ok()
    })
    .expect("the registration on w reaches c by gossip");
    assert_eq!(c.system.block_on(from_c.ask(Add(1))), Ok(1));
}
