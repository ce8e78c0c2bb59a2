//! Writes the seed corpora of the cargo-fuzz targets in `fuzz/`: small valid inputs of
//! every message kind, and a few edge cases. Gossip seeds are real chitchat messages,
//! captured from a running membership.
//!
//! ```text
//! cargo run -p odeon-remote --features fuzzing --example fuzz_seeds -- fuzz/corpus
//! ```

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chitchat::{ChitchatMessage, Serializable};
use odeon_remote::fuzzing;
use odeon_remote::membership::{Membership, MembershipConfig};
use odeon_remote::transport::Secret;
use odeon_remote::wire::{
    self, FrameWriter, Handshake, NodeId, Outcome, PROTOCOL_VERSION, QueuedMessage, Refusal,
    Traffic, WireFailure, WireMigrateRefusal, WireRef, WireStopReason,
};

fn id(name: &str) -> NodeId {
    NodeId {
        name: name.into(),
        incarnation: 0x1234_5678_9abc,
    }
}

fn enc<T: serde::Serialize>(v: &T) -> Vec<u8> {
    wire::encode(v).expect("schema values encode")
}

fn handshake() -> Vec<Vec<u8>> {
    let mut seeds: Vec<Vec<u8>> = [
        Handshake::Hello {
            version: PROTOCOL_VERSION,
            from: id("a"),
            spake: vec![0x53; 33],
        },
        Handshake::Reply {
            from: id("listener"),
            spake: vec![0x53; 33],
        },
        Handshake::Confirm { mac: [4; 32] },
        Handshake::Welcome { mac: [5; 32] },
        Handshake::Refused {
            reason: Refusal::NotAuthenticated,
        },
        Handshake::Refused {
            reason: Refusal::Version {
                ours: PROTOCOL_VERSION,
            },
        },
        Handshake::Refused {
            reason: Refusal::TlsRequired,
        },
        Handshake::Refused {
            reason: Refusal::Other("authentication failed".into()),
        },
        Handshake::Hello {
            version: PROTOCOL_VERSION + 1,
            from: id(""),
            spake: Vec::new(),
        },
    ]
    .iter()
    .map(enc)
    .collect();
    let mut trailing = enc(&Handshake::Welcome { mac: [0; 32] });
    trailing.push(0);
    seeds.extend([Vec::new(), trailing, vec![0xff; 8]]);
    seeds
}

fn traffic() -> Vec<Vec<u8>> {
    let listen: SocketAddr = "127.0.0.1:7400".parse().unwrap();
    let listen6: SocketAddr = "[::1]:7401".parse().unwrap();
    let mut seeds: Vec<Vec<u8>> = [
        Traffic::Attach {
            listen,
            session: 1,
            known: Some(2),
            quiet_ms: 250,
        },
        Traffic::Attached {
            listen: listen6,
            session: 2,
            quiet_ms: 1_000,
        },
        Traffic::Duplicate,
        Traffic::Reset,
        Traffic::Heartbeat,
        Traffic::Lost,
        Traffic::Tell {
            to: 3,
            message: "tally.Add".into(),
            payload: vec![7].into(),
        },
        Traffic::Ask {
            to: 3,
            request: 1,
            message: "tally.Total".into(),
            payload: Vec::new().into(),
        },
        Traffic::Reply {
            request: 1,
            outcome: Outcome::Ok(vec![55].into()),
        },
        Traffic::Reply {
            request: 2,
            outcome: Outcome::Failed(WireFailure::Rejected("unknown".into())),
        },
        Traffic::Reply {
            request: 3,
            outcome: Outcome::Failed(WireFailure::Full),
        },
        Traffic::Stop { to: 9 },
        Traffic::Watch { to: 3, key: 4 },
        Traffic::Unwatch { to: 3, key: 4 },
        Traffic::Terminated {
            id: 3,
            key: 4,
            reason: WireStopReason::Failed("panicked".into()),
        },
        Traffic::Link { to: 1, from: 2 },
        Traffic::Unlink { to: 1, from: 2 },
        Traffic::LinkFailed { to: 1, from: 2 },
        Traffic::Spawn {
            request: 5,
            actor_type: "tally.Tally".into(),
            args: vec![0],
        },
        Traffic::Lookup {
            request: 6,
            name: "tally".into(),
        },
        Traffic::Leaving,
    ]
    .iter()
    .map(enc)
    .collect();
    seeds.push(enc(&WireRef {
        node: id("b"),
        id: u64::MAX,
        token: 0x0123_4567_89ab_cdef,
        actor_type: "tally.Tally".into(),
    }));
    seeds.extend([Vec::new(), vec![3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]]);
    // Appended after the version-2 seeds so that their files keep their names.
    seeds.extend(mobility().iter().map(enc));
    // A commit whose `held` claims 2^32 - 1 messages in a few bytes.
    let mut lying = enc(&Traffic::MigrateCommit {
        migration: 1,
        epoch: 1,
        held: Vec::new(),
        high_water: Vec::new(),
    });
    lying.truncate(lying.len() - 2);
    lying.extend([0xff, 0xff, 0xff, 0xff, 0x0f]);
    seeds.push(lying);
    seeds
}

/// One frame of each mobility variant (protocol version 3).
fn mobility() -> Vec<Traffic<'static>> {
    let queued = |seq: u64, ask: bool| QueuedMessage {
        message: "tally.Add".into(),
        payload: vec![7],
        origin: id("c"),
        seq,
        reply: ask.then(|| (id("c"), 5)),
        hops: 1,
    };
    let mut frames = vec![
        Traffic::MTell {
            to: 3,
            seq: 1,
            message: "tally.Add".into(),
            payload: vec![7],
        },
        Traffic::MAsk {
            to: 3,
            seq: 2,
            request: 1,
            message: "tally.Total".into(),
            payload: Vec::new(),
        },
        Traffic::Relay {
            to: 3,
            msg: queued(3, true),
        },
        Traffic::Notice {
            to: 3,
            origin: id("a"),
            seq: 4,
            id: 8,
            reason: WireStopReason::Normal,
        },
        Traffic::MigrateOffer {
            migration: 1,
            actor: WireRef {
                node: id("a"),
                id: 1,
                token: 3,
                actor_type: "tally.Tally".into(),
            },
            epoch: 0,
            state: vec![0, 1],
            mailbox: vec![queued(0, false), queued(2, true)],
            high_water: vec![(id("c"), 2)],
            watchers: vec![(id("w"), 4)],
            links: vec![(id("l"), 6)],
            names: vec!["tally".into()],
            chunks: 1,
        },
        Traffic::MigrateChunk {
            migration: 1,
            index: 0,
            bytes: vec![1; 8],
        },
        Traffic::MigrateReady { migration: 1 },
        Traffic::MigrateCommit {
            migration: 1,
            epoch: 1,
            held: vec![queued(4, false)],
            high_water: vec![(id("c"), 4)],
        },
        Traffic::MigrateAbort { migration: 1 },
        Traffic::Hint {
            to: 3,
            at: id("b"),
            epoch: 1,
        },
        Traffic::Flush {
            to: 3,
            origin: id("c"),
            nonce: 1,
            via: None,
        },
        Traffic::Flush {
            to: 3,
            origin: id("c"),
            nonce: 2,
            via: Some(id("d")),
        },
        Traffic::FlushAck {
            to: 3,
            nonce: 1,
            epoch: 1,
            frozen_for: Some(1),
        },
        Traffic::Gone {
            to: 3,
            nonce: 2,
            via: id("d"),
        },
        Traffic::Unpin { to: 3 },
        Traffic::Reflush { to: 3, ttl: 3 },
        Traffic::Locate {
            to: 3,
            nonce: 2,
            again: false,
        },
        Traffic::Located { to: 3, epoch: 1 },
        Traffic::AskAt {
            request: 1,
            at: id("b"),
            hops: 2,
            confirmed: true,
        },
        Traffic::WatchAt {
            actor: 1,
            key: 4,
            at: id("b"),
            hops: 1,
            confirmed: false,
        },
        Traffic::ChildFailed {
            to: 3,
            reason: WireStopReason::Failed("panicked".into()),
        },
        Traffic::Restart {
            to: 3,
            state: vec![0],
        },
    ];
    frames.extend(
        [
            WireMigrateRefusal::UnknownType {
                actor_type: "tally.Tally".into(),
            },
            WireMigrateRefusal::Unreachable(id("x")),
            WireMigrateRefusal::NotMobile,
            WireMigrateRefusal::Busy,
            WireMigrateRefusal::LocalOnlyMail {
                message: "Local".into(),
            },
            WireMigrateRefusal::HasChildren,
            WireMigrateRefusal::Supervised,
            WireMigrateRefusal::AlreadyThere,
            WireMigrateRefusal::TokenClash,
            WireMigrateRefusal::Decode("eof".into()),
        ]
        .into_iter()
        .map(|why| Traffic::MigrateRefused { migration: 1, why }),
    );
    frames
}

fn frames() -> Vec<Vec<u8>> {
    let stream = |frames: &[&[u8]]| {
        let mut out = Vec::new();
        let mut w = FrameWriter::new(&mut out, usize::MAX);
        for f in frames {
            w.push(f).expect("no limit");
        }
        drop(w);
        out
    };
    let with = |chunk: u8, max: u8, bytes: Vec<u8>| {
        let mut seed = vec![chunk, max];
        seed.extend(bytes);
        seed
    };
    vec![
        with(63, 255, stream(&[b"hello", b"", b"world"])),
        with(0, 16, stream(&[&[7; 16], &[8; 3]])),
        with(2, 4, stream(&[b"too long"])),
        with(5, 255, vec![0xff, 0xff, 0xff, 0xff, 1, 2, 3]),
        with(3, 255, vec![0, 0, 0, 10, 1, 2, 3]),
        with(1, 255, vec![0, 0]),
        with(1, 0, stream(&[b"", b""])),
    ]
}

/// Real chitchat messages: a `Syn` that a membership sends to its seed (here a bare
/// socket), and the `SynAck` with its state that it returns to a `Syn` from us.
async fn gossip() -> Vec<Vec<u8>> {
    let secret = Secret::new(fuzzing::GOSSIP_SECRET).expect("a long secret");
    let socket = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let config = MembershipConfig {
        gossip_interval: Duration::from_millis(50),
        seeds: vec![socket.local_addr().unwrap()],
        ..MembershipConfig::new(
            id("seeded"),
            "127.0.0.1:0".parse().unwrap(),
            "127.0.0.1:7400".parse().unwrap(),
            secret.clone(),
        )
    };
    let membership = Membership::start(config).await.unwrap();
    membership.set("greeting", "hello").unwrap();
    let mut seeds = Vec::new();
    let mut buf = vec![0; 65_536];
    let mut recv = async |socket: &tokio::net::UdpSocket| {
        let (len, from) = tokio::time::timeout(Duration::from_secs(10), socket.recv_from(&mut buf))
            .await
            .expect("gossip within 10 s")
            .unwrap();
        let message = fuzzing::open_gossip(&secret, &buf[..len]).expect("an authentic datagram");
        (message, from)
    };
    let (syn, from) = recv(&socket).await;
    seeds.push(syn);
    let mut ours = Vec::new();
    ChitchatMessage::Syn {
        cluster_id: "odeon".into(),
        digest: Default::default(),
    }
    .serialize(&mut ours);
    socket
        .send_to(&fuzzing::seal_gossip(&secret, &ours), from)
        .await
        .unwrap();
    seeds.push(ours);
    // The next datagram may be another periodic Syn; keep what comes until the answer.
    for _ in 0..20 {
        let (m, _) = recv(&socket).await;
        let syn_ack = m.get(3) == Some(&1);
        seeds.push(m);
        if syn_ack {
            break;
        }
    }
    let mut bad = Vec::new();
    ChitchatMessage::BadCluster.serialize(&mut bad);
    seeds.extend([bad, Vec::new(), vec![0x53, 0xb0, 0, 9]]);
    membership.leave().await;
    seeds.sort();
    seeds.dedup();
    seeds
}

fn write(dir: &Path, target: &str, seeds: &[Vec<u8>]) {
    let dir = dir.join(target);
    std::fs::create_dir_all(&dir).unwrap();
    for (i, s) in seeds.iter().enumerate() {
        std::fs::write(dir.join(format!("seed-{i:02}")), s).unwrap();
    }
    println!("{}: {} seeds", dir.display(), seeds.len());
}

fn main() {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "fuzz/corpus".into()),
    );
    write(&dir, "handshake", &handshake());
    write(&dir, "traffic", &traffic());
    write(&dir, "frame", &frames());
    let rt = tokio::runtime::Runtime::new().unwrap();
    write(&dir, "gossip", &rt.block_on(gossip()));
}
