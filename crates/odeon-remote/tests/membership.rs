//! Membership over loopback: several nodes in one process, gossiping every 100 ms.
//! Every wait is a polling loop under a generous deadline; nothing asserts speed.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use odeon_remote::membership::{Member, MemberEvent, Membership, MembershipConfig};
use odeon_remote::transport::Secret;
use odeon_remote::wire::NodeId;
use tokio::net::UdpSocket;
use tokio::sync::broadcast;

const SECRET: &str = "the right cluster secret";
const DEADLINE: Duration = Duration::from_secs(20);

static INCARNATION: AtomicU64 = AtomicU64::new(1);
static LINK_PORT: AtomicU64 = AtomicU64::new(20_000);

fn init() {
    let _ = tracing_subscriber::fmt()
        .with_test_writer()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .try_init();
}

fn node(name: &str) -> NodeId {
    NodeId {
        name: name.into(),
        incarnation: INCARNATION.fetch_add(1, Ordering::Relaxed),
    }
}

fn config(node: NodeId, secret: &str, seeds: Vec<SocketAddr>) -> MembershipConfig {
    // Link addresses are only published, never dialed here: any distinct port will do.
    let port = LINK_PORT.fetch_add(1, Ordering::Relaxed) as u16;
    MembershipConfig {
        seeds,
        gossip_interval: Duration::from_millis(100),
        leave_grace: Duration::from_millis(800),
        ..MembershipConfig::new(
            node,
            "127.0.0.1:0".parse().unwrap(),
            SocketAddr::from(([127, 0, 0, 1], port)),
            Secret::new(secret).unwrap(),
        )
    }
}

async fn start(name: &str, seeds: Vec<SocketAddr>) -> (Membership, MembershipConfig) {
    let c = config(node(name), SECRET, seeds);
    (Membership::start(c.clone()).await.unwrap(), c)
}

fn member(c: &MembershipConfig) -> Member {
    Member {
        node: c.node.clone(),
        link_addr: c.link_addr,
    }
}

async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + DEADLINE;
    while !done() {
        assert!(tokio::time::Instant::now() < deadline, "timed out: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn next_event(
    rx: &mut broadcast::Receiver<MemberEvent>,
    what: &str,
    wanted: impl Fn(&MemberEvent) -> bool,
) -> MemberEvent {
    let wait = async {
        loop {
            match rx.recv().await {
                Ok(e) if wanted(&e) => return e,
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => panic!("events closed: {what}"),
            }
        }
    };
    tokio::time::timeout(DEADLINE, wait)
        .await
        .unwrap_or_else(|_| panic!("timed out: {what}"))
}

fn about(e: &MemberEvent) -> &NodeId {
    match e {
        MemberEvent::Up(m) => &m.node,
        MemberEvent::Down(n) | MemberEvent::Left(n) => n,
    }
}

/// Three nodes joined through `a`, each seeing the two others.
async fn cluster() -> [(Membership, MembershipConfig); 3] {
    let a = start("a", vec![]).await;
    let b = start("b", vec![a.0.gossip_addr()]).await;
    let c = start("c", vec![a.0.gossip_addr()]).await;
    let nodes = [a, b, c];
    for (i, (m, _)) in nodes.iter().enumerate() {
        let mut expected: Vec<Member> = nodes
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, (_, c))| member(c))
            .collect();
        expected.sort_by(|x, y| x.node.cmp(&y.node));
        until("the cluster forms", || m.members() == expected).await;
    }
    nodes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_nodes_with_one_seed_form_a_cluster() {
    init();
    let (a, ca) = start("a", vec![]).await;
    let mut events = a.subscribe();
    let (b, cb) = start("b", vec![a.gossip_addr()]).await;
    let (c, cc) = start("c", vec![a.gossip_addr()]).await;
    assert_ne!(a.gossip_addr().port(), 0, "the bound port is reported");
    let mut up = Vec::new();
    for _ in 0..2 {
        match next_event(&mut events, "two Up on a", |_| true).await {
            MemberEvent::Up(m) => up.push(m),
            other => panic!("unexpected {other:?}"),
        }
    }
    up.sort_by(|x, y| x.node.cmp(&y.node));
    assert_eq!(up, vec![member(&cb), member(&cc)]);
    // b and c know each other only through a's gossip.
    until("b sees a and c", || {
        b.members() == vec![member(&ca), member(&cc)]
    })
    .await;
    until("c sees a and b", || {
        c.members() == vec![member(&ca), member(&cb)]
    })
    .await;
    assert_eq!(a.members(), vec![member(&cb), member(&cc)]);
    for m in [&a, &b, &c] {
        assert_eq!(m.stats().rejected(), 0);
        assert!(m.stats().accepted() > 0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn key_values_replicate_and_deletions_propagate() {
    init();
    let [(a, ca), (b, cb), (c, _)] = cluster().await;
    b.set("registry/x", "1").unwrap();
    b.set("other", "2").unwrap();
    a.set("registry/y", "3").unwrap();
    let want = vec![
        (ca.node.clone(), "registry/y".to_owned(), "3".to_owned()),
        (cb.node.clone(), "registry/x".to_owned(), "1".to_owned()),
    ];
    // Self's own entries are visible at once.
    assert_eq!(b.entries("registry/"), want[1..].to_vec());
    until("c sees a's and b's entries", || {
        c.entries("registry/") == want
    })
    .await;
    until("a sees b's entry", || a.entries("registry/") == want).await;
    assert_eq!(c.entries("oth").len(), 1);

    b.set("registry/x", "changed").unwrap();
    until("an update propagates", || {
        c.entries("registry/x") == vec![(cb.node.clone(), "registry/x".into(), "changed".into())]
    })
    .await;

    b.delete("registry/x");
    until("a deletion propagates to a", || {
        a.entries("registry/") == want[..1].to_vec()
    })
    .await;
    until("a deletion propagates to c", || {
        c.entries("registry/") == want[..1].to_vec()
    })
    .await;
    assert!(b.set("", "v").is_err(), "empty keys are refused");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_stopped_without_leave_is_reported_down() {
    init();
    let [(a, _), (b, cb), (c, _)] = cluster().await;
    let mut on_a = a.subscribe();
    let mut on_c = c.subscribe();
    drop(b);
    for (rx, who) in [(&mut on_a, "a"), (&mut on_c, "c")] {
        let e = next_event(rx, &format!("{who} reports b"), |e| about(e) == &cb.node).await;
        assert_eq!(e, MemberEvent::Down(cb.node.clone()), "on {who}");
    }
    assert!(a.members().iter().all(|m| m.node != cb.node));

    // The same name restarted is a new incarnation, hence a new member.
    let (b2, cb2) = start("b", vec![a.gossip_addr()]).await;
    assert_ne!(cb2.node, cb.node);
    let e = next_event(&mut on_c, "c sees b's new life", |e| about(e) == &cb2.node).await;
    assert_eq!(e, MemberEvent::Up(member(&cb2)));
    until("a sees b's new life", || {
        a.members().contains(&member(&cb2))
    })
    .await;
    drop(b2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_that_leaves_is_reported_left_not_down() {
    init();
    let [(a, _), (b, cb), (c, _)] = cluster().await;
    let mut on_a = a.subscribe();
    let mut on_c = c.subscribe();
    b.leave().await;
    for (rx, who) in [(&mut on_a, "a"), (&mut on_c, "c")] {
        let e = next_event(rx, &format!("{who} reports b"), |e| about(e) == &cb.node).await;
        assert_eq!(e, MemberEvent::Left(cb.node.clone()), "on {who}");
    }
    assert!(a.members().iter().all(|m| m.node != cb.node));
    // b is silent now: long enough for the failure detector to have fired (about
    // 8 rounds of 100 ms), and it must not turn the departure into a crash.
    tokio::time::sleep(Duration::from_secs(3)).await;
    while let Ok(e) = on_a.try_recv() {
        assert_ne!(about(&e), &cb.node, "{e:?} after b left");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_with_the_wrong_secret_never_joins() {
    init();
    let [(a, _), (b, _), (_c, _)] = cluster().await;
    let intruder = config(
        node("intruder"),
        "a wrong cluster secret",
        vec![a.gossip_addr()],
    );
    let intruder_id = intruder.node.clone();
    let intruder = Membership::start(intruder).await.unwrap();
    intruder.set("registry/evil", "1").unwrap();
    until("a rejects the intruder's datagrams", || {
        a.stats().rejected() >= 5
    })
    .await;
    // Time for many rounds of its gossip to have been tried.
    tokio::time::sleep(Duration::from_secs(1)).await;
    for m in [&a, &b] {
        assert!(m.members().iter().all(|x| x.node != intruder_id));
        assert!(m.entries("").iter().all(|(n, _, _)| n != &intruder_id));
    }
    assert!(intruder.members().is_empty());
    assert_eq!(intruder.stats().accepted(), 0);
    assert_eq!(a.stats().malformed(), 0);
}

/// A small deterministic generator: the test needs junk, not cryptographic randomness.
fn junk(seed: &mut u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|_| {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            *seed as u8
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_and_truncated_datagrams_are_dropped_and_the_node_keeps_working() {
    init();
    let (a, ca) = start("a", vec![]).await;
    // An authentic datagram to truncate and alter: what a node sends its seed.
    let trap = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let (p, _) = start("p", vec![trap.local_addr().unwrap()]).await;
    let mut authentic = vec![0; 70_000];
    let (len, _) = tokio::time::timeout(DEADLINE, trap.recv_from(&mut authentic))
        .await
        .unwrap()
        .unwrap();
    authentic.truncate(len);
    drop(p);

    let raw = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let to = a.gossip_addr();
    let mut seed = 0x9e37_79b9_7f4a_7c15;
    let mut sent = 0;
    for n in [0, 1, 2, 3, 4, 16, 33, 34, 100, 1_500, 65_507] {
        raw.send_to(&junk(&mut seed, n), to).await.unwrap();
        sent += 1;
    }
    for cut in [1, 4, len / 2, len - 32, len - 1] {
        raw.send_to(&authentic[..cut], to).await.unwrap();
        sent += 1;
    }
    for i in [0, len / 2, len - 1] {
        let mut altered = authentic.clone();
        altered[i] ^= 0x80;
        raw.send_to(&altered, to).await.unwrap();
        sent += 1;
    }
    until("every bad datagram is rejected", || {
        a.stats().rejected() >= sent
    })
    .await;
    assert_eq!(a.stats().accepted(), 0, "nothing bad was accepted");
    assert!(a.members().is_empty());

    // a still gossips: a cluster forms through it.
    let (b, cb) = start("b", vec![to]).await;
    let (c, cc) = start("c", vec![to]).await;
    until("a sees b and c", || {
        a.members() == vec![member(&cb), member(&cc)]
    })
    .await;
    until("b sees a and c", || {
        b.members() == vec![member(&ca), member(&cc)]
    })
    .await;
    until("c sees a and b", || {
        c.members() == vec![member(&ca), member(&cb)]
    })
    .await;
}
