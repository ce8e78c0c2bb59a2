//! Opening a link: mutual challenge–response proof of the cluster secret.
//!
//! # Protocol (messages in `wire/mod.rs`)
//! 1. The dialer sends `Hello { version, from, nonce_d }`.
//! 2. The listener refuses another version. Otherwise it replies
//!    `Challenge { from, nonce_l, proof_l }` with
//!    `proof_l = HMAC(secret, "odeon/listener" ‖ transcript)`.
//! 3. The dialer checks `proof_l` (so it never talks to an impostor listener), then
//!    sends `Proof { proof_d }`, `proof_d = HMAC(secret, "odeon/dialer" ‖ transcript)`.
//! 4. The listener checks `proof_d` and sends `Welcome`, or `Refused` and closes.
//!
//! `transcript = version ‖ nonce_d ‖ nonce_l ‖ dialer id ‖ listener id`.
//!
//! # Why this is safe
//! - The secret never crosses the wire; only MACs over fresh nonces do. HMAC-SHA256 is
//!   a PRF, so a MAC tells nothing about the key, and both sides' nonces make every
//!   transcript new: a recorded proof is useless later (no replay).
//! - The two labels differ, so a listener's proof can never be reflected back as a
//!   dialer's proof in a second connection.
//! - MACs are compared in constant time (`Mac::verify_slice`).
//! - Every step has a deadline, and handshake frames are small ([`HANDSHAKE_MAX_FRAME`]),
//!   so an unauthenticated peer can hold neither time nor memory.
//!
//! Confidentiality of the traffic that follows is TLS's job, not this handshake's
//! (see [`tls`](super::tls)); with TLS on, this handshake runs inside the TLS stream.

use std::time::Duration;

use hmac::{Hmac, Mac};
use sha2::Sha256;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::wire::{
    self, Bytes32, FrameReader, FrameWriter, Handshake, NodeId, PROTOCOL_VERSION, WireError,
};

/// The largest frame accepted before a peer is authenticated. Unit: bytes.
pub const HANDSHAKE_MAX_FRAME: usize = 1024;

type HmacSha256 = Hmac<Sha256>;

/// The cluster secret. Its `Debug` never shows it.
#[derive(Clone)]
pub struct Secret(Vec<u8>);

impl Secret {
    /// The fewest bytes a secret may have.
    pub const MIN_LEN: usize = 16;

    /// A secret from its bytes.
    ///
    /// # Errors
    /// [`HandshakeError::WeakSecret`] when shorter than [`Secret::MIN_LEN`] bytes.
    pub fn new(bytes: impl Into<Vec<u8>>) -> Result<Self, HandshakeError> {
        let bytes = bytes.into();
        if bytes.len() < Self::MIN_LEN {
            return Err(HandshakeError::WeakSecret { len: bytes.len() });
        }
        Ok(Self(bytes))
    }

    fn mac(&self, label: &[u8], transcript: &[u8]) -> HmacSha256 {
        let mut mac = HmacSha256::new_from_slice(&self.0).expect("HMAC takes keys of any length");
        mac.update(label);
        mac.update(transcript);
        mac
    }

    fn prove(&self, label: &[u8], transcript: &[u8]) -> Bytes32 {
        self.mac(label, transcript).finalize().into_bytes().into()
    }

    fn verify(&self, label: &[u8], transcript: &[u8], proof: &Bytes32) -> bool {
        self.mac(label, transcript).verify_slice(proof).is_ok()
    }

    /// A key for another protocol, derived as `HMAC(secret, label)`. Each use of the
    /// secret gets its own label, so a MAC made for one protocol (gossip) can never be
    /// passed off in another (the link handshake), and the secret itself is used only
    /// as an HMAC key.
    pub(crate) fn derive_key(&self, label: &[u8]) -> Bytes32 {
        self.prove(label, &[])
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secret(<{} bytes>)", self.0.len())
    }
}

/// Why a link did not open.
#[derive(Debug, thiserror::Error)]
pub enum HandshakeError {
    /// The configured secret is too short to be a secret.
    #[error(
        "the cluster secret has {len} bytes; at least {} are required",
        Secret::MIN_LEN
    )]
    WeakSecret {
        /// Its length.
        len: usize,
    },
    /// The peer's proof was wrong: it does not know the cluster secret.
    #[error("the peer failed to prove it knows the cluster secret")]
    NotAuthenticated,
    /// The peer refused us.
    #[error("refused by the peer: {0}")]
    Refused(String),
    /// The peer speaks another protocol version.
    #[error("protocol version {theirs} is not ours ({ours})")]
    Version {
        /// Ours.
        ours: u16,
        /// Theirs.
        theirs: u16,
    },
    /// A message out of order.
    #[error("unexpected handshake message: {0}")]
    Unexpected(String),
    /// The peer closed the connection during the handshake.
    #[error("the peer closed the connection during the handshake")]
    Closed,
    /// A step took longer than the deadline.
    #[error("handshake step timed out after {0:?}")]
    Timeout(Duration),
    /// Framing, decoding or the socket failed.
    #[error(transparent)]
    Wire(#[from] WireError),
    /// The TLS handshake failed: no certificate, one from another CA or for another
    /// name, a plaintext peer, or garbage. The source is rustls' error, wrapped in
    /// `std::io::Error` by `tokio-rustls`.
    #[error("TLS handshake failed: {0}")]
    Tls(#[source] std::io::Error),
}

/// An authenticated link's two halves and who is at the other end.
#[derive(Debug)]
pub struct Opened<R, W> {
    /// The authenticated peer.
    pub peer: NodeId,
    /// Reads the peer's frames.
    pub reader: FrameReader<R>,
    /// Writes frames to the peer.
    pub writer: FrameWriter<W>,
}

fn nonce() -> Bytes32 {
    let mut n = [0u8; 32];
    getrandom::fill(&mut n).expect("the OS random source is available");
    n
}

fn transcript(
    nonce_d: &Bytes32,
    nonce_l: &Bytes32,
    dialer: &NodeId,
    listener: &NodeId,
) -> Result<Vec<u8>, WireError> {
    let mut t = PROTOCOL_VERSION.to_be_bytes().to_vec();
    t.extend_from_slice(nonce_d);
    t.extend_from_slice(nonce_l);
    t.extend(wire::encode(dialer)?);
    t.extend(wire::encode(listener)?);
    Ok(t)
}

async fn step<T>(
    deadline: Duration,
    f: impl Future<Output = Result<T, HandshakeError>>,
) -> Result<T, HandshakeError> {
    tokio::time::timeout(deadline, f)
        .await
        .map_err(|_| HandshakeError::Timeout(deadline))?
}

async fn receive<R: AsyncRead + Unpin>(
    reader: &mut FrameReader<R>,
) -> Result<Handshake, HandshakeError> {
    let frame = reader.next().await?.ok_or(HandshakeError::Closed)?;
    match wire::decode::<Handshake>(&frame)? {
        Handshake::Refused { reason } => Err(HandshakeError::Refused(reason)),
        m => Ok(m),
    }
}

async fn send<W: AsyncWrite + Unpin>(
    writer: &mut FrameWriter<W>,
    m: &Handshake,
) -> Result<(), HandshakeError> {
    Ok(writer.send(&wire::encode(m)?).await?)
}

/// Refuses politely (best effort: the peer may be gone) and returns `err`.
async fn refuse<W: AsyncWrite + Unpin>(
    writer: &mut FrameWriter<W>,
    err: HandshakeError,
) -> HandshakeError {
    let reason = match &err {
        HandshakeError::NotAuthenticated => "authentication failed".to_owned(),
        other => other.to_string(),
    };
    let _ = send(writer, &Handshake::Refused { reason }).await;
    err
}

/// Opens a link as the dialing side.
///
/// # Errors
/// Any [`HandshakeError`]; the connection should then be dropped.
pub async fn dial<R, W>(
    read: R,
    write: W,
    me: &NodeId,
    secret: &Secret,
    deadline: Duration,
    max_frame: usize,
) -> Result<Opened<R, W>, HandshakeError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = FrameReader::new(read, HANDSHAKE_MAX_FRAME);
    let mut writer = FrameWriter::new(write, HANDSHAKE_MAX_FRAME);
    let nonce_d = nonce();
    step(
        deadline,
        send(
            &mut writer,
            &Handshake::Hello {
                version: PROTOCOL_VERSION,
                from: me.clone(),
                nonce: nonce_d,
            },
        ),
    )
    .await?;
    let (peer, nonce_l, proof_l) = match step(deadline, receive(&mut reader)).await? {
        Handshake::Challenge { from, nonce, proof } => (from, nonce, proof),
        other => {
            return Err(HandshakeError::Unexpected(format!(
                "{other:?} instead of Challenge"
            )));
        }
    };
    peer.validate()?;
    let t = transcript(&nonce_d, &nonce_l, me, &peer)?;
    if !secret.verify(b"odeon/listener", &t, &proof_l) {
        return Err(refuse(&mut writer, HandshakeError::NotAuthenticated).await);
    }
    step(
        deadline,
        send(
            &mut writer,
            &Handshake::Proof {
                proof: secret.prove(b"odeon/dialer", &t),
            },
        ),
    )
    .await?;
    match step(deadline, receive(&mut reader)).await? {
        Handshake::Welcome => {}
        other => {
            return Err(HandshakeError::Unexpected(format!(
                "{other:?} instead of Welcome"
            )));
        }
    }
    Ok(open(peer, reader, writer, max_frame))
}

/// Opens a link as the listening side.
///
/// # Errors
/// Any [`HandshakeError`]; the peer has been sent `Refused` where it could be.
pub async fn accept<R, W>(
    read: R,
    write: W,
    me: &NodeId,
    secret: &Secret,
    deadline: Duration,
    max_frame: usize,
) -> Result<Opened<R, W>, HandshakeError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = FrameReader::new(read, HANDSHAKE_MAX_FRAME);
    let mut writer = FrameWriter::new(write, HANDSHAKE_MAX_FRAME);
    let (peer, version, nonce_d) = match step(deadline, receive(&mut reader)).await? {
        Handshake::Hello {
            version,
            from,
            nonce,
        } => (from, version, nonce),
        other => {
            let err = HandshakeError::Unexpected(format!("{other:?} instead of Hello"));
            return Err(refuse(&mut writer, err).await);
        }
    };
    if version != PROTOCOL_VERSION {
        let err = HandshakeError::Version {
            ours: PROTOCOL_VERSION,
            theirs: version,
        };
        return Err(refuse(&mut writer, err).await);
    }
    if let Err(e) = peer.validate() {
        return Err(refuse(&mut writer, e.into()).await);
    }
    let nonce_l = nonce();
    let t = transcript(&nonce_d, &nonce_l, &peer, me)?;
    let challenge = Handshake::Challenge {
        from: me.clone(),
        nonce: nonce_l,
        proof: secret.prove(b"odeon/listener", &t),
    };
    step(deadline, send(&mut writer, &challenge)).await?;
    let proof_d = match step(deadline, receive(&mut reader)).await? {
        Handshake::Proof { proof } => proof,
        other => {
            let err = HandshakeError::Unexpected(format!("{other:?} instead of Proof"));
            return Err(refuse(&mut writer, err).await);
        }
    };
    if !secret.verify(b"odeon/dialer", &t, &proof_d) {
        return Err(refuse(&mut writer, HandshakeError::NotAuthenticated).await);
    }
    step(deadline, send(&mut writer, &Handshake::Welcome)).await?;
    Ok(open(peer, reader, writer, max_frame))
}

/// Rebuilds the halves with the link's frame limit now that the peer is trusted.
fn open<R: AsyncRead + Unpin, W: AsyncWrite + Unpin>(
    peer: NodeId,
    reader: FrameReader<R>,
    writer: FrameWriter<W>,
    max_frame: usize,
) -> Opened<R, W> {
    Opened {
        peer,
        reader: reader.with_max_frame(max_frame),
        writer: writer.with_max_frame(max_frame),
    }
}
