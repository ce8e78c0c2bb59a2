//! Mutual TLS under the SPAKE2 handshake: a link opens only with a certificate from the
//! cluster's CA *and* the cluster secret; every other peer (another CA, no certificate,
//! plaintext, the wrong secret, silence) is refused, logged and counted while the
//! listener keeps serving. Certificates are made at test time with rcgen.
#![cfg(feature = "tls")]

mod common;

use common::certs::Ca;

use std::sync::Arc;
use std::time::Duration;

use odeon_remote::transport::{
    self, HandshakeError, LinkConfig, Listener, Secret, TlsConfig, TlsConfigError, handshake,
};
use odeon_remote::wire::NodeId;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls::{self, RootCertStore, crypto::ring};

const GOOD: &str = "the right cluster secret";
const DEADLINE: Duration = Duration::from_millis(500);

fn id(name: &str) -> NodeId {
    NodeId {
        name: name.into(),
        incarnation: 7,
    }
}

/// A certificate authority that can sign node certificates.
fn plain(secret: &str) -> LinkConfig {
    let mut c = LinkConfig::new(Secret::new(secret).unwrap());
    c.handshake_timeout = DEADLINE;
    c
}

fn with_tls(secret: &str, tls: TlsConfig) -> LinkConfig {
    plain(secret).with_tls(tls)
}

async fn listener(config: LinkConfig) -> Listener {
    let _ = tracing_subscriber::fmt().with_test_writer().try_init();
    Listener::bind("127.0.0.1:0".parse().unwrap(), id("server"), config)
        .await
        .unwrap()
}

/// A TLS listener whose certificate `ca` signed, trusting `ca`.
async fn tls_listener(ca: &Ca) -> Listener {
    listener(with_tls(GOOD, ca.tls("server", ca))).await
}

/// Opens a link with `config`, and checks frames cross it both ways.
async fn link_works(listener: &mut Listener, config: &LinkConfig, who: &str) {
    let mut link = transport::connect(listener.local_addr(), &id(who), config)
        .await
        .expect("a good peer links");
    let (mut accepted, _) = tokio::time::timeout(Duration::from_secs(10), listener.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(link.peer, id("server"));
    assert_eq!(accepted.peer, id(who));
    let tls = config.tls.is_some();
    assert_eq!((link.is_tls(), accepted.is_tls()), (tls, tls));
    assert_eq!(link.reader.get_ref().is_tls(), tls);
    link.writer.send(b"ping").await.unwrap();
    assert_eq!(&accepted.reader.next().await.unwrap().unwrap()[..], b"ping");
    accepted.writer.send(b"pong").await.unwrap();
    assert_eq!(&link.reader.next().await.unwrap().unwrap()[..], b"pong");
    // Several frames in one batch, and a large one spanning many TLS records.
    let big = vec![0xa5; 200_000];
    link.writer.push(b"one").unwrap();
    link.writer.push(&big).unwrap();
    link.writer.flush().await.unwrap();
    assert_eq!(&accepted.reader.next().await.unwrap().unwrap()[..], b"one");
    assert_eq!(
        &accepted.reader.next().await.unwrap().unwrap()[..],
        &big[..]
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

#[tokio::test]
async fn tls_with_certificates_from_the_cluster_ca_and_the_secret_carries_frames_both_ways() {
    let ca = Ca::new("cluster CA");
    let mut l = tls_listener(&ca).await;
    link_works(&mut l, &with_tls(GOOD, ca.tls("client", &ca)), "client").await;
    assert_eq!((l.stats().accepted(), l.stats().refused()), (1, 0));
}

#[tokio::test]
async fn a_dialer_with_a_certificate_from_another_ca_is_refused() {
    let ca = Ca::new("cluster CA");
    let rogue = Ca::new("rogue CA");
    let mut l = tls_listener(&ca).await;
    // The rogue trusts the cluster CA (so it accepts the listener) and knows the secret:
    // only its certificate is wrong.
    let rogue_config = with_tls(GOOD, rogue.tls("rogue", &ca));
    let result = transport::connect(l.local_addr(), &id("rogue"), &rogue_config).await;
    assert!(result.is_err(), "a rogue certificate opened a link");
    refused_count_reaches(&l, 1).await;
    assert_eq!(l.stats().accepted(), 0);
    link_works(&mut l, &with_tls(GOOD, ca.tls("good", &ca)), "good").await;
    assert_eq!((l.stats().accepted(), l.stats().refused()), (1, 1));
}

#[tokio::test]
async fn a_listener_with_a_certificate_from_another_ca_is_refused_by_the_dialer() {
    let ca = Ca::new("cluster CA");
    let rogue = Ca::new("rogue CA");
    let l = listener(with_tls(GOOD, rogue.tls("server", &ca))).await;
    let err = transport::connect(
        l.local_addr(),
        &id("client"),
        &with_tls(GOOD, ca.tls("client", &ca)),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, HandshakeError::Tls(_)), "{err}");
    assert!(err.to_string().contains("TLS handshake failed"), "{err}");
}

#[tokio::test]
async fn a_tls_dialer_without_a_certificate_is_refused() {
    let ca = Ca::new("cluster CA");
    let mut l = tls_listener(&ca).await;
    // A TLS client that trusts the cluster CA but presents no certificate, then runs the
    // SPAKE2 handshake with the right secret: only the missing certificate is wrong.
    let mut roots = RootCertStore::empty();
    roots.add(ca.cert.der().clone()).unwrap();
    let client = rustls::ClientConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let tcp = TcpStream::connect(l.local_addr()).await.unwrap();
    let name = TlsConfig::DEFAULT_SERVER_NAME.try_into().unwrap();
    // In TLS 1.3 the client finishes before the server has checked its certificate, so
    // the refusal may surface here or in the SPAKE2 handshake just after.
    if let Ok(tls) = TlsConnector::from(Arc::new(client))
        .connect(name, tcp)
        .await
    {
        let (r, w) = tokio::io::split(tls);
        let secret = Secret::new(GOOD).unwrap();
        let result = handshake::dial(r, w, &id("anonymous"), &secret, DEADLINE, 1 << 20).await;
        assert!(result.is_err(), "a client without a certificate linked");
    }
    refused_count_reaches(&l, 1).await;
    assert_eq!(l.stats().accepted(), 0);
    link_works(&mut l, &with_tls(GOOD, ca.tls("good", &ca)), "good").await;
}

#[tokio::test]
async fn a_plaintext_dialer_is_refused_by_a_tls_listener_which_keeps_serving() {
    let ca = Ca::new("cluster CA");
    let mut l = tls_listener(&ca).await;
    let err = transport::connect(l.local_addr(), &id("plain"), &plain(GOOD))
        .await
        .unwrap_err();
    // A clear, typed error, not "frame of 352518912 bytes exceeds the limit" (a TLS
    // alert's header read as a length prefix).
    assert!(matches!(err, HandshakeError::PeerUsesTls), "{err}");
    assert!(
        err.to_string()
            .contains("the peer speaks TLS; this node is configured for plaintext"),
        "{err}"
    );
    refused_count_reaches(&l, 1).await;
    assert_eq!(l.stats().accepted(), 0);
    link_works(&mut l, &with_tls(GOOD, ca.tls("good", &ca)), "good").await;
}

#[tokio::test]
async fn a_tls_dialer_is_refused_by_a_plaintext_listener() {
    let ca = Ca::new("cluster CA");
    let mut l = listener(plain(GOOD)).await;
    let err = transport::connect(
        l.local_addr(),
        &id("tls"),
        &with_tls(GOOD, ca.tls("tls", &ca)),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, HandshakeError::PeerUsesPlaintext), "{err}");
    assert!(
        err.to_string()
            .contains("the peer speaks plaintext; this node is configured for TLS"),
        "{err}"
    );
    refused_count_reaches(&l, 1).await;
    link_works(&mut l, &plain(GOOD), "good").await;
}

#[tokio::test]
async fn right_certificates_with_the_wrong_secret_are_refused_by_the_spake2_handshake() {
    let ca = Ca::new("cluster CA");
    let mut l = tls_listener(&ca).await;
    let err = transport::connect(
        l.local_addr(),
        &id("intruder"),
        &with_tls("a wrong cluster secret", ca.tls("intruder", &ca)),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, HandshakeError::NotAuthenticated), "{err}");
    refused_count_reaches(&l, 1).await;
    assert_eq!(l.stats().accepted(), 0);
    link_works(&mut l, &with_tls(GOOD, ca.tls("good", &ca)), "good").await;
}

#[tokio::test]
async fn a_peer_silent_in_the_tls_step_times_out_without_holding_anyone_up() {
    let ca = Ca::new("cluster CA");
    let mut l = tls_listener(&ca).await;
    let silent = TcpStream::connect(l.local_addr()).await.unwrap();
    link_works(&mut l, &with_tls(GOOD, ca.tls("good", &ca)), "good").await;
    refused_count_reaches(&l, 1).await;
    drop(silent);
}

#[tokio::test]
async fn plaintext_links_still_work_when_tls_is_off() {
    let mut l = listener(plain(GOOD)).await;
    assert!(plain(GOOD).tls.is_none(), "TLS is off by default");
    link_works(&mut l, &plain(GOOD), "client").await;
    assert_eq!((l.stats().accepted(), l.stats().refused()), (1, 0));
}

#[tokio::test]
async fn the_server_name_checked_is_configurable() {
    let ca = Ca::new("cluster CA");
    let (cert, key) = ca.node("server", "node-a.cluster.internal");
    let server = TlsConfig::from_pem(&cert, &key, &ca.pem()).unwrap();
    let mut l = listener(with_tls(GOOD, server)).await;
    // The default name is not in the listener's certificate.
    let err = transport::connect(
        l.local_addr(),
        &id("client"),
        &with_tls(GOOD, ca.tls("client", &ca)),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, HandshakeError::Tls(_)), "{err}");
    let named = ca
        .tls("client", &ca)
        .with_server_name("node-a.cluster.internal")
        .unwrap();
    assert_eq!(named.server_name(), "node-a.cluster.internal");
    link_works(&mut l, &with_tls(GOOD, named), "client").await;
}

#[test]
fn bad_tls_input_is_refused_at_configuration_time() {
    let ca = Ca::new("cluster CA");
    let (cert, key) = ca.node("n", TlsConfig::DEFAULT_SERVER_NAME);
    let ca_pem = ca.pem();
    let err = |r: Result<TlsConfig, TlsConfigError>| r.unwrap_err();

    assert!(TlsConfig::from_pem(&cert, &key, &ca_pem).is_ok());
    assert!(matches!(
        err(TlsConfig::from_pem(b"garbage", &key, &ca_pem)),
        TlsConfigError::NoCertificates {
            what: "node's certificate chain"
        }
    ));
    assert!(matches!(
        err(TlsConfig::from_pem(&cert, &cert, &ca_pem)),
        TlsConfigError::NoPrivateKey
    ));
    assert!(matches!(
        err(TlsConfig::from_pem(&cert, &key, b"")),
        TlsConfigError::NoCertificates { what: "CA bundle" }
    ));
    let broken = b"-----BEGIN CERTIFICATE-----\n!!not base64!!\n-----END CERTIFICATE-----\n";
    let e = err(TlsConfig::from_pem(broken, &key, &ca_pem));
    assert!(matches!(e, TlsConfigError::Pem { .. }), "{e}");
    let unterminated = b"-----BEGIN PRIVATE KEY-----\nAAAA\n";
    let e = err(TlsConfig::from_pem(&cert, unterminated, &ca_pem));
    assert!(matches!(e, TlsConfigError::Pem { .. }), "{e}");
    // A key that is not the certificate's.
    let (_, other_key) = ca.node("other", TlsConfig::DEFAULT_SERVER_NAME);
    let e = err(TlsConfig::from_pem(&cert, &other_key, &ca_pem));
    assert!(matches!(e, TlsConfigError::Rustls(_)), "{e}");
    let e = err(TlsConfig::from_pem(&cert, &key, &ca_pem).and_then(|t| t.with_server_name("")));
    assert!(matches!(e, TlsConfigError::ServerName(_)), "{e}");
}

#[test]
fn tls_config_reads_pem_files_and_names_the_unreadable_one() {
    let ca = Ca::new("cluster CA");
    let (cert, key) = ca.node("n", TlsConfig::DEFAULT_SERVER_NAME);
    let dir = std::env::temp_dir().join(format!("odeon-remote-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (cert_path, key_path, ca_path) = (
        dir.join("node.pem"),
        dir.join("node.key"),
        dir.join("ca.pem"),
    );
    std::fs::write(&cert_path, &cert).unwrap();
    std::fs::write(&key_path, &key).unwrap();
    std::fs::write(&ca_path, ca.pem()).unwrap();

    let tls = TlsConfig::from_pem_files(&cert_path, &key_path, &ca_path).unwrap();
    let shown = format!("{tls:?}");
    assert!(
        shown.contains("odeon") && !shown.contains("PRIVATE"),
        "{shown}"
    );

    let missing = dir.join("missing.key");
    let e = TlsConfig::from_pem_files(&cert_path, &missing, &ca_path).unwrap_err();
    assert!(
        matches!(&e, TlsConfigError::Read { what: "private key", path, .. } if *path == missing),
        "{e}"
    );
    assert!(e.to_string().contains("missing.key"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}
