//! Optional mutual TLS under the SPAKE2 handshake (rustls, `ring` provider).
//!
//! With a [`TlsConfig`] in [`LinkConfig::tls`](super::LinkConfig::tls), a link is
//! TCP → TLS 1.3 → [the SPAKE2 handshake](super::handshake) inside the
//! TLS stream. TLS gives the traffic confidentiality and integrity, and ties each end to a
//! certificate from the cluster's CA; the SPAKE2 handshake still proves knowledge of the
//! cluster secret, so a stolen certificate alone does not let anyone join (nor does the
//! secret alone).
//!
//! The certificate requirements are in [`TlsConfig`]'s docs (this module is hidden
//! from the documentation; `TlsConfig` is re-exported at the crate root).
//!
//! ```
//! use odeon_remote::transport::{LinkConfig, Secret, TlsConfig};
//!
//! # fn pems() -> (Vec<u8>, Vec<u8>, Vec<u8>) {
//! #     let ca_key = rcgen::KeyPair::generate().unwrap();
//! #     let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
//! #     ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
//! #     let ca_cert = ca.self_signed(&ca_key).unwrap();
//! #     let issuer = rcgen::Issuer::new(ca, ca_key);
//! #     let key = rcgen::KeyPair::generate().unwrap();
//! #     let cert = rcgen::CertificateParams::new(vec!["odeon".to_owned()]).unwrap()
//! #         .signed_by(&key, &issuer).unwrap();
//! #     (cert.pem().into(), key.serialize_pem().into(), ca_cert.pem().into())
//! # }
//! let (cert_chain_pem, key_pem, ca_pem) = pems();
//! let tls = TlsConfig::from_pem(&cert_chain_pem, &key_pem, &ca_pem).unwrap();
//! let config = LinkConfig::new(Secret::new("correct horse battery staple").unwrap())
//!     .with_tls(tls);
//! assert_eq!(config.tls.as_ref().unwrap().server_name(), "odeon");
//!
//! // Bad input is refused when the configuration is built, not on the first link.
//! assert!(TlsConfig::from_pem(b"not a certificate", &key_pem, &ca_pem).is_err());
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rustls_pki_types::pem::{self, PemObject};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio::net::TcpStream;
use tokio_rustls::rustls::client::Resumption;
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::server::{NoServerSessionStorage, WebPkiClientVerifier};
use tokio_rustls::rustls::{self, ClientConfig, RootCertStore, ServerConfig};
use tokio_rustls::{TlsAcceptor, TlsConnector, TlsStream};

use super::HandshakeError;
use super::handshake::{self, HANDSHAKE_MAX_FRAME};
use crate::wire::FrameWriter;

/// Why a [`TlsConfig`] could not be built.
#[derive(Debug, thiserror::Error)]
pub enum TlsConfigError {
    /// A PEM file could not be read.
    #[error("cannot read the {what} from {}: {source}", path.display())]
    Read {
        /// Which input it was.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The input is not valid PEM.
    #[error("the {what} is not valid PEM: {source}")]
    Pem {
        /// Which input it was.
        what: &'static str,
        /// The parser's error.
        source: pem::Error,
    },
    /// No `CERTIFICATE` section where at least one is needed.
    #[error("the {what} holds no PEM certificate")]
    NoCertificates {
        /// Which input it was.
        what: &'static str,
    },
    /// No private key section in the key input.
    #[error("the private key PEM holds no private key (PKCS#8, PKCS#1 or SEC1)")]
    NoPrivateKey,
    /// A CA certificate was refused as a trust anchor.
    #[error("a CA certificate is unusable: {0}")]
    Ca(#[source] rustls::Error),
    /// The client certificate verifier could not be built.
    #[error("cannot verify client certificates with these CAs: {0}")]
    Verifier(#[from] rustls::server::VerifierBuilderError),
    /// rustls refused the node's certificate chain or key (for example, a key that does
    /// not match the certificate, or an unsupported key type).
    #[error("the node's certificate or key is unusable: {0}")]
    Rustls(#[from] rustls::Error),
    /// The server name is neither a DNS name nor an IP address.
    #[error("{0:?} is not a valid TLS server name")]
    ServerName(String),
}

/// A node's mutual-TLS identity and trust: its certificate chain and key, the CAs its
/// peers must chain to, and the server name every node's certificate carries.
///
/// Cheap to clone (the rustls configurations are shared).
///
/// # Certificate requirements
/// - Every node has **one** certificate (with its chain and private key) that it uses
///   both ways: as a server when it accepts a link and as a client when it dials. If the
///   certificate has an extended key usage extension it must list both `serverAuth`
///   and `clientAuth`; without the extension both uses are allowed.
/// - It must chain to one of the CA certificates given as `ca_pem` (the same bundle on
///   every node). Both sides verify: a listener refuses a dialer without a certificate
///   or with one from another CA, and a dialer refuses such a listener.
/// - A dialer checks the listener's certificate against one cluster-wide **server
///   name**, [`TlsConfig::DEFAULT_SERVER_NAME`] (`"odeon"`) unless changed with
///   [`TlsConfig::with_server_name`]: every node's certificate must carry that name as a
///   subject alternative name (`DNS:odeon`). Links are opened by address, not by node
///   name, so a per-node name could not be checked here; *which* node is at the other
///   end is what the SPAKE2 handshake then establishes.
/// - The listener checks the dialer's chain, validity dates and key usage; it does not
///   look at the dialer's names.
/// - Keys may be PKCS#8, PKCS#1 (RSA) or SEC1 (EC) PEM; certificates are X.509 PEM.
#[derive(Clone)]
pub struct TlsConfig {
    server: Arc<ServerConfig>,
    client: Arc<ClientConfig>,
    server_name: ServerName<'static>,
}

impl std::fmt::Debug for TlsConfig {
    // Hand-written so that no key material can ever reach a log through `{:?}`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsConfig")
            .field("server_name", &self.server_name())
            .finish_non_exhaustive()
    }
}

impl TlsConfig {
    /// The server name checked in a listener's certificate unless
    /// [`with_server_name`](Self::with_server_name) says otherwise.
    pub const DEFAULT_SERVER_NAME: &'static str = "odeon";

    /// Builds the configuration from PEM bytes: the node's certificate chain (leaf
    /// first), its private key, and the CA certificate(s) peers must chain to.
    ///
    /// # Errors
    /// A [`TlsConfigError`] naming the input at fault: invalid PEM, no certificate, no
    /// private key, an unusable CA, or a key rustls refuses (e.g. not the certificate's).
    pub fn from_pem(cert_chain: &[u8], key: &[u8], ca: &[u8]) -> Result<Self, TlsConfigError> {
        let chain = certificates(cert_chain, "node's certificate chain")?;
        let key = private_key(key)?;
        let mut roots = RootCertStore::empty();
        for ca in certificates(ca, "CA bundle")? {
            roots.add(ca).map_err(TlsConfigError::Ca)?;
        }
        let roots = Arc::new(roots);
        // An explicit provider rather than the process-wide default: the default panics
        // at first use when the dependency graph enables both `ring` and `aws-lc-rs`.
        let provider = Arc::new(ring::default_provider());

        let verifier =
            WebPkiClientVerifier::builder_with_provider(roots.clone(), provider.clone()).build()?;
        let mut server = ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()?
            .with_client_cert_verifier(verifier)
            .with_single_cert(chain.clone(), key.clone_key())?;
        // No resumption: links are long-lived (one per pair of nodes), so it saves
        // nothing, and a resumed session would skip re-verifying the peer's certificate.
        server.session_storage = Arc::new(NoServerSessionStorage {});
        server.send_tls13_tickets = 0;

        let mut client = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_root_certificates(roots)
            .with_client_auth_cert(chain, key)?;
        client.resumption = Resumption::disabled();

        Ok(Self {
            server: Arc::new(server),
            client: Arc::new(client),
            server_name: ServerName::try_from(Self::DEFAULT_SERVER_NAME)
                .map_err(|_| TlsConfigError::ServerName(Self::DEFAULT_SERVER_NAME.into()))?,
        })
    }

    /// As [`from_pem`](Self::from_pem), reading the three PEM files.
    ///
    /// # Errors
    /// [`TlsConfigError::Read`] for a file that cannot be read, then as
    /// [`from_pem`](Self::from_pem).
    pub fn from_pem_files(
        cert_chain: impl AsRef<Path>,
        key: impl AsRef<Path>,
        ca: impl AsRef<Path>,
    ) -> Result<Self, TlsConfigError> {
        let read = |what, path: &Path| {
            std::fs::read(path).map_err(|source| TlsConfigError::Read {
                what,
                path: path.to_owned(),
                source,
            })
        };
        Self::from_pem(
            &read("node's certificate chain", cert_chain.as_ref())?,
            &read("private key", key.as_ref())?,
            &read("CA bundle", ca.as_ref())?,
        )
    }

    /// The same configuration checking `name` (a DNS name or an IP address) in the
    /// listener's certificate instead of [`DEFAULT_SERVER_NAME`](Self::DEFAULT_SERVER_NAME).
    ///
    /// # Errors
    /// [`TlsConfigError::ServerName`] when `name` is neither.
    pub fn with_server_name(mut self, name: &str) -> Result<Self, TlsConfigError> {
        self.server_name = ServerName::try_from(name.to_owned())
            .map_err(|_| TlsConfigError::ServerName(name.to_owned()))?;
        Ok(self)
    }

    /// The server name checked in a listener's certificate.
    pub fn server_name(&self) -> String {
        self.server_name.to_str().into_owned()
    }

    /// TLS as the listening side (the caller bounds it in time).
    ///
    /// A plaintext odeon peer is told so in a plaintext `Refused` it can read, and the
    /// error says so too, rather than both sides reporting garbage.
    pub(crate) async fn accept(
        &self,
        mut stream: TcpStream,
    ) -> Result<TlsStream<TcpStream>, HandshakeError> {
        let mut first = [0u8; 1];
        // A TLS client starts with a handshake record (content type 22); a plaintext
        // odeon dialer with a frame whose length prefix begins with a zero byte.
        if stream.peek(&mut first).await.map_err(HandshakeError::Tls)? == 1 && first[0] == 0 {
            let mut writer = FrameWriter::new(&mut stream, HANDSHAKE_MAX_FRAME);
            return Err(handshake::refuse(&mut writer, HandshakeError::PeerUsesPlaintext).await);
        }
        let stream = TlsAcceptor::from(self.server.clone())
            .accept(stream)
            .await
            .map_err(HandshakeError::Tls)?;
        Ok(stream.into())
    }

    /// TLS as the dialing side, under `deadline`.
    pub(crate) async fn connect(
        &self,
        stream: TcpStream,
        deadline: Duration,
    ) -> Result<TlsStream<TcpStream>, HandshakeError> {
        let connect =
            TlsConnector::from(self.client.clone()).connect(self.server_name.clone(), stream);
        let stream = tokio::time::timeout(deadline, connect)
            .await
            .map_err(|_| HandshakeError::Timeout(deadline))?
            .map_err(|e| {
                if sent_plaintext(&e) {
                    HandshakeError::PeerUsesPlaintext
                } else {
                    HandshakeError::Tls(e)
                }
            })?;
        Ok(stream.into())
    }
}

/// Whether a TLS client's error says the server answered with something that is not a
/// TLS record at all: what a plaintext odeon node sends (a frame whose first byte, the
/// top of its length prefix, is no TLS content type).
fn sent_plaintext(e: &std::io::Error) -> bool {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        .is_some_and(|inner| {
            matches!(
                inner,
                rustls::Error::InvalidMessage(rustls::InvalidMessage::InvalidContentType)
            )
        })
}

fn certificates(
    pem: &[u8],
    what: &'static str,
) -> Result<Vec<CertificateDer<'static>>, TlsConfigError> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|source| TlsConfigError::Pem { what, source })?;
    if certs.is_empty() {
        return Err(TlsConfigError::NoCertificates { what });
    }
    Ok(certs)
}

fn private_key(pem: &[u8]) -> Result<PrivateKeyDer<'static>, TlsConfigError> {
    PrivateKeyDer::from_pem_slice(pem).map_err(|e| match e {
        pem::Error::NoItemsFound => TlsConfigError::NoPrivateKey,
        source => TlsConfigError::Pem {
            what: "private key",
            source,
        },
    })
}
