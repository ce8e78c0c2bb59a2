//! Guarantee 8 at the link layer: unauthenticated, malformed, oversized, truncated or
//! silent input is refused with a logged error, and the listener keeps serving every
//! other connection.

use std::net::SocketAddr;
use std::time::Duration;

use odeon_remote::transport::handshake::{self, SPAKE2_IDENTITY, SPAKE2_MESSAGE_LEN};
use odeon_remote::transport::{self, HandshakeError, LinkConfig, Listener, Secret};
use odeon_remote::wire::{
    self, FrameReader, FrameWriter, Handshake, NodeId, PROTOCOL_VERSION, Refusal,
};
use spake2::{Ed25519Group, Identity, Password, Spake2};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

fn id(name: &str) -> NodeId {
    NodeId {
        name: name.into(),
        incarnation: 42,
    }
}

fn config(secret: &str) -> LinkConfig {
    let mut c = LinkConfig::new(Secret::new(secret).unwrap());
    c.handshake_timeout = Duration::from_millis(500);
    c
}

const GOOD: &str = "the right cluster secret";

async fn listener() -> Listener {
    let _ = tracing_subscriber::fmt().with_test_writer().try_init();
    Listener::bind("127.0.0.1:0".parse().unwrap(), id("server"), config(GOOD))
        .await
        .unwrap()
}

/// After whatever bad thing happened, a well-behaved node still gets a working link.
async fn still_serves(listener: &mut Listener) {
    let mut link = transport::connect(listener.local_addr(), &id("good"), &config(GOOD))
        .await
        .expect("a good peer still links");
    let (mut accepted, _) = tokio::time::timeout(Duration::from_secs(10), listener.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(accepted.peer, id("good"));
    link.writer.send(b"hello after the storm").await.unwrap();
    assert_eq!(
        &accepted.reader.next().await.unwrap().unwrap()[..],
        b"hello after the storm"
    );
}

async fn refused_count_reaches(listener: &Listener, n: u64) {
    for _ in 0..1000 {
        if listener.stats().refused() >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("refused count stayed at {}", listener.stats().refused());
}

async fn raw(addr: SocketAddr) -> TcpStream {
    TcpStream::connect(addr).await.unwrap()
}

#[tokio::test]
async fn a_link_with_the_right_secret_carries_frames_both_ways() {
    let mut l = listener().await;
    let mut link = transport::connect(l.local_addr(), &id("client"), &config(GOOD))
        .await
        .unwrap();
    assert_eq!(link.peer, id("server"));
    let (mut accepted, _) = l.next().await.unwrap();
    assert_eq!(accepted.peer, id("client"));
    link.writer.send(b"ping").await.unwrap();
    assert_eq!(&accepted.reader.next().await.unwrap().unwrap()[..], b"ping");
    accepted.writer.send(b"pong").await.unwrap();
    assert_eq!(&link.reader.next().await.unwrap().unwrap()[..], b"pong");
    assert_eq!((l.stats().accepted(), l.stats().refused()), (1, 0));
}

#[tokio::test]
async fn a_dialer_with_the_wrong_secret_is_refused_with_a_typed_error() {
    let mut l = listener().await;
    let err = transport::connect(
        l.local_addr(),
        &id("intruder"),
        &config("a wrong cluster secret"),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, HandshakeError::NotAuthenticated), "{err}");
    refused_count_reaches(&l, 1).await;
    assert_eq!(l.stats().accepted(), 0);
    still_serves(&mut l).await;
}

/// A SPAKE2 message as this protocol sends them: symmetric side byte, then a point.
fn is_spake2_message(m: &[u8]) -> bool {
    m.len() == SPAKE2_MESSAGE_LEN && m[0] == b'S'
}

fn spake2_start(secret: &str) -> (Spake2<Ed25519Group>, Vec<u8>) {
    Spake2::<Ed25519Group>::start_symmetric(
        &Password::new(secret.as_bytes()),
        &Identity::new(SPAKE2_IDENTITY),
    )
}

/// Everything an attacker without the secret gets by dialing: the listener's SPAKE2
/// message (a fresh random point, masked by the secret: nothing to test a guess
/// against offline) and a refusal. Under version 1 it got an HMAC keyed by the
/// secret in the second message, before proving anything.
#[tokio::test]
async fn a_dialer_without_the_secret_gets_only_a_spake2_message_and_a_refusal() {
    let mut l = listener().await;
    let mut seen = Vec::new();
    for attempt in 0..2 {
        let (r, w) = raw(l.local_addr()).await.into_split();
        let (mut r, mut w) = (FrameReader::new(r, 1024), FrameWriter::new(w, 1024));
        let (state, spake) = spake2_start("a guess at the cluster secret");
        let hello = Handshake::Hello {
            version: PROTOCOL_VERSION,
            from: id("guesser"),
            spake,
        };
        w.send(&wire::encode(&hello).unwrap()).await.unwrap();
        let Handshake::Reply { from, spake } =
            wire::decode(&r.next().await.unwrap().unwrap()).unwrap()
        else {
            panic!("expected the listener's SPAKE2 message");
        };
        assert_eq!(from, id("server"));
        assert!(is_spake2_message(&spake), "{spake:?}");
        seen.push(spake.clone());
        // The guesser's own key: all it can send is a confirmation under it.
        let guessed_key = state.finish(&spake).unwrap();
        let mac: [u8; 32] = guessed_key[..32].try_into().unwrap();
        w.send(&wire::encode(&Handshake::Confirm { mac }).unwrap())
            .await
            .unwrap();
        let answer: Handshake = wire::decode(&r.next().await.unwrap().unwrap()).unwrap();
        assert_eq!(
            answer,
            Handshake::Refused {
                reason: Refusal::NotAuthenticated
            }
        );
        assert!(
            r.next().await.unwrap_or(None).is_none(),
            "the listener sent nothing more and closed the connection"
        );
        refused_count_reaches(&l, attempt + 1).await;
    }
    assert_ne!(seen[0], seen[1], "every SPAKE2 message is fresh");
    still_serves(&mut l).await;
}

/// Everything an attacker without the secret gets by accepting a real node's dial: the
/// dialer's SPAKE2 message and its key confirmation under a key that only the one
/// password the attacker committed to could give (one online guess per connection),
/// then a typed error on the dialer's side.
#[tokio::test]
async fn a_listener_without_the_secret_gets_one_guess_and_the_dialer_a_typed_error() {
    let socket = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = socket.local_addr().unwrap();
    let impostor = tokio::spawn(async move {
        let (stream, _) = socket.accept().await.unwrap();
        let (r, w) = stream.into_split();
        let (mut r, mut w) = (FrameReader::new(r, 1024), FrameWriter::new(w, 1024));
        let Handshake::Hello { spake, from, .. } =
            wire::decode(&r.next().await.unwrap().unwrap()).unwrap()
        else {
            panic!("expected the dialer's Hello");
        };
        assert_eq!(from, id("honest"));
        assert!(is_spake2_message(&spake), "{spake:?}");
        let (_, mine) = spake2_start("a guess at the cluster secret");
        let reply = Handshake::Reply {
            from: id("server"),
            spake: mine,
        };
        w.send(&wire::encode(&reply).unwrap()).await.unwrap();
        let confirm: Handshake = wire::decode(&r.next().await.unwrap().unwrap()).unwrap();
        assert!(matches!(confirm, Handshake::Confirm { .. }), "{confirm:?}");
        // It cannot make the listener's confirmation; anything it sends is refused.
        let welcome = Handshake::Welcome { mac: [7; 32] };
        w.send(&wire::encode(&welcome).unwrap()).await.unwrap();
        let answer: Handshake = wire::decode(&r.next().await.unwrap().unwrap()).unwrap();
        assert_eq!(
            answer,
            Handshake::Refused {
                reason: Refusal::NotAuthenticated
            }
        );
    });
    let err = transport::connect(addr, &id("honest"), &config(GOOD))
        .await
        .unwrap_err();
    assert!(matches!(err, HandshakeError::NotAuthenticated), "{err}");
    impostor.await.unwrap();
}

/// Both sides, real code, different secrets: each gets the same typed error.
#[tokio::test]
async fn different_secrets_fail_cleanly_on_both_sides() {
    let (d, l) = tokio::io::duplex(4096);
    let ((dr, dw), (lr, lw)) = (tokio::io::split(d), tokio::io::split(l));
    let (dialer_secret, listener_secret) = (
        Secret::new("the dialer's cluster secret").unwrap(),
        Secret::new(GOOD).unwrap(),
    );
    let deadline = Duration::from_secs(30);
    let (a, b) = (id("a"), id("b"));
    let (dialed, accepted) = tokio::join!(
        handshake::dial(dr, dw, &a, &dialer_secret, deadline, 1 << 20),
        handshake::accept(lr, lw, &b, &listener_secret, deadline, 1 << 20),
    );
    assert!(
        matches!(dialed, Err(HandshakeError::NotAuthenticated)),
        "{dialed:?}"
    );
    assert!(
        matches!(accepted, Err(HandshakeError::NotAuthenticated)),
        "{accepted:?}"
    );
    // The same secret on both: both open, each seeing the other's identity.
    let (d, l) = tokio::io::duplex(4096);
    let ((dr, dw), (lr, lw)) = (tokio::io::split(d), tokio::io::split(l));
    let (dialed, accepted) = tokio::join!(
        handshake::dial(dr, dw, &a, &listener_secret, deadline, 1 << 20),
        handshake::accept(lr, lw, &b, &listener_secret, deadline, 1 << 20),
    );
    assert_eq!(dialed.unwrap().peer, id("b"));
    assert_eq!(accepted.unwrap().peer, id("a"));
}

#[tokio::test]
async fn random_bytes_an_oversized_prefix_and_a_truncated_frame_are_refused() {
    let mut l = listener().await;
    let garbage: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let mut s = raw(l.local_addr()).await;
    s.write_all(&garbage).await.unwrap();
    let mut s2 = raw(l.local_addr()).await;
    s2.write_all(&[0xff, 0xff, 0xff, 0xff, 0, 0, 0])
        .await
        .unwrap();
    let mut s3 = raw(l.local_addr()).await;
    s3.write_all(&[0, 0, 0, 100, 1, 2, 3]).await.unwrap();
    s3.shutdown().await.unwrap();
    refused_count_reaches(&l, 3).await;
    still_serves(&mut l).await;
    drop((s, s2));
}

#[tokio::test]
async fn a_silent_peer_times_out_without_holding_anyone_else_up() {
    let mut l = listener().await;
    let silent = raw(l.local_addr()).await;
    // Served while the silent connection is still inside its handshake deadline.
    still_serves(&mut l).await;
    refused_count_reaches(&l, 1).await;
    drop(silent);
}

#[tokio::test]
async fn another_protocol_version_is_refused_by_name() {
    let mut l = listener().await;
    let (r, w) = raw(l.local_addr()).await.into_split();
    let (mut r, mut w) = (FrameReader::new(r, 1024), FrameWriter::new(w, 1024));
    let hello = Handshake::Hello {
        version: PROTOCOL_VERSION + 1,
        from: id("future"),
        spake: spake2_start(GOOD).1,
    };
    w.send(&wire::encode(&hello).unwrap()).await.unwrap();
    match wire::decode(&r.next().await.unwrap().unwrap()).unwrap() {
        Handshake::Refused { reason } => assert_eq!(
            reason,
            Refusal::Version {
                ours: PROTOCOL_VERSION
            }
        ),
        other => panic!("expected a refusal, got {other:?}"),
    }
    still_serves(&mut l).await;
}

#[tokio::test]
async fn an_authenticated_peer_is_still_held_to_the_frame_limit() {
    let mut l = listener().await;
    let mut small = config(GOOD);
    small.max_frame = 1 << 20;
    let mut link = transport::connect(l.local_addr(), &id("client"), &small)
        .await
        .unwrap();
    let (mut accepted, _) = l.next().await.unwrap();
    // Bypass our own writer's check to act as a hostile peer would.
    link.writer
        .get_mut()
        .write_all(&(64u32 << 20).to_be_bytes())
        .await
        .unwrap();
    let err = accepted.reader.next().await.unwrap_err();
    assert!(err.to_string().contains("exceeds the limit"), "{err}");
}

#[test]
fn a_short_secret_is_refused_at_configuration_time() {
    assert!(matches!(
        Secret::new("short"),
        Err(HandshakeError::WeakSecret { len: 5 })
    ));
    assert_eq!(
        format!("{:?}", Secret::new(GOOD).unwrap()),
        "Secret(<24 bytes>)",
        "Debug never shows the secret"
    );
}
