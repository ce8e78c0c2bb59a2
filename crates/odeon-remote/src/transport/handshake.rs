//! Opening a link: a password-authenticated key exchange (SPAKE2) on the cluster
//! secret, then key confirmation.
//!
//! # Protocol (messages in `wire/mod.rs`)
//! 1. The dialer sends `Hello { version, from, spake_d }`, its SPAKE2 message.
//! 2. The listener refuses another version. Otherwise it replies
//!    `Reply { from, spake_l }` with its own SPAKE2 message.
//! 3. Both now hold the SPAKE2 key `K` (equal only if both used the same secret). The
//!    dialer sends `Confirm { mac_d }`.
//! 4. The listener checks `mac_d` (so it never reveals anything keyed to an impostor),
//!    then sends `Welcome { mac_l }`, or `Refused` and closes. The dialer checks
//!    `mac_l` (so it never talks to an impostor listener).
//!
//! SPAKE2 runs in symmetric mode on the Ed25519 group (RustCrypto's `spake2`), with
//! the secret as password and [`SPAKE2_IDENTITY`] as identity. Then, with
//! `T = SHA-256(label ‖ version ‖ dialer id ‖ listener id ‖ spake_d ‖ spake_l)` (each
//! part length-prefixed), `k_d ‖ k_l = HKDF-SHA256(salt = T, ikm = K)` under two labels
//! and `mac_d = HMAC(k_d, T)`, `mac_l = HMAC(k_l, T)`.
//!
//! # Why this is safe
//! - **No offline guessing.** A SPAKE2 message is a fresh random group element masked
//!   by the password: it reveals nothing about the secret, and an active attacker who
//!   sends its own message commits to *one* guess per connection; the confirmations it
//!   sees or fails to produce tell it only whether that one guess was right. So an
//!   attacker without the secret, dialing or accepting, records nothing against which
//!   other guesses can be tested (version 1 of this protocol sent an HMAC keyed by the
//!   secret to anyone who dialed). Online guessing is bounded by the listener's cap
//!   on pending handshakes and by the time a round trip takes.
//! - **Binding.** Both node identities (name and incarnation), the protocol version and
//!   both SPAKE2 messages are in `T`, so a confirmation made for one connection or one
//!   pair of nodes is worthless in another, and nobody on the path can change who a
//!   side believes it talks to.
//! - **No reflection.** The two confirmation keys are derived under different labels,
//!   so a listener's confirmation can never be passed off as a dialer's.
//! - MACs are compared in constant time (`Mac::verify_slice`).
//! - The whole handshake has one deadline, and its frames are small
//!   ([`HANDSHAKE_MAX_FRAME`]), so an unauthenticated peer can hold neither time nor
//!   memory; the listener also caps how many run at once
//!   ([`LinkConfig::max_pending_handshakes`](super::LinkConfig::max_pending_handshakes)).
//!
//! The key `K` authenticates the opening only: frames after it are neither encrypted
//! nor MACed by this layer. Confidentiality and integrity of the traffic are TLS's job
//! (see [`tls`](super::tls)); with TLS on, this handshake runs inside the TLS stream.

use std::time::Duration;

use hkdf::Hkdf;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use spake2::{Ed25519Group, Identity, Password, Spake2};
use tokio::io::{AsyncRead, AsyncWrite};

pub use super::secret::Secret;
use crate::wire::{
    self, Bytes32, FrameReader, FrameWriter, Handshake, NodeId, PROTOCOL_VERSION, Refusal,
    WireError,
};

/// The largest frame accepted before a peer is authenticated. Unit: bytes.
pub const HANDSHAKE_MAX_FRAME: usize = 1024;

/// The SPAKE2 identity (symmetric mode): fixed for the protocol, so that a SPAKE2
/// exchange made for anything else cannot be replayed here.
pub const SPAKE2_IDENTITY: &[u8] = b"odeon cluster link v2";

/// Bytes of a SPAKE2 message: a side byte (`'S'` in symmetric mode) and an Ed25519
/// group element.
pub const SPAKE2_MESSAGE_LEN: usize = 33;

/// How long a side waits to deliver its `Refused` before it just closes.
const REFUSAL_DEADLINE: Duration = Duration::from_millis(500);

type HmacSha256 = Hmac<Sha256>;

/// Why a link did not open.
#[derive(Debug, thiserror::Error)]
pub enum HandshakeError {
    /// The configured secret is too short to be a secret.
    #[error(
        "the cluster secret has {len} bytes; at least {} are required \
         (generate one with `odeon-node gen-secret`)",
        Secret::MIN_LEN
    )]
    WeakSecret {
        /// Its length.
        len: usize,
    },
    /// The secrets differ: the peer's key confirmation was wrong, or the peer found
    /// ours wrong. Either side may be the one without the cluster secret.
    #[error("authentication failed: the peer does not have this node's cluster secret")]
    NotAuthenticated,
    /// The peer refused us, for a reason no other variant covers.
    #[error("refused by the peer: {0}")]
    Refused(String),
    /// The peer speaks TLS and this node plaintext (or the peer refused plaintext).
    #[error(
        "the peer speaks TLS; this node is configured for plaintext \
         (enable TLS on every node of the cluster, or on none)"
    )]
    PeerUsesTls,
    /// The peer speaks plaintext and this node TLS.
    #[error(
        "the peer speaks plaintext; this node is configured for TLS \
         (enable TLS on every node of the cluster, or on none)"
    )]
    PeerUsesPlaintext,
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
    /// The handshake took longer than its deadline.
    #[error("handshake timed out after {0:?}")]
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

fn start(secret: &Secret) -> (Spake2<Ed25519Group>, Vec<u8>) {
    Spake2::<Ed25519Group>::start_symmetric(
        &Password::new(secret.expose()),
        &Identity::new(SPAKE2_IDENTITY),
    )
}

fn finish(state: Spake2<Ed25519Group>, theirs: &[u8]) -> Result<Vec<u8>, HandshakeError> {
    state
        .finish(theirs)
        .map_err(|e| WireError::Malformed(format!("SPAKE2 message: {e}")).into())
}

/// The two key confirmations of one handshake.
struct Confirmation {
    transcript: Bytes32,
    dialer: HmacSha256,
    listener: HmacSha256,
}

impl Confirmation {
    fn new(
        shared: &[u8],
        dialer: &NodeId,
        listener: &NodeId,
        spake_d: &[u8],
        spake_l: &[u8],
    ) -> Result<Self, WireError> {
        let mut t = Sha256::new();
        t.update(b"odeon/link/transcript");
        t.update(PROTOCOL_VERSION.to_be_bytes());
        for part in [
            &wire::encode(dialer)?[..],
            &wire::encode(listener)?[..],
            spake_d,
            spake_l,
        ] {
            // Length prefixes keep the parts' boundaries unambiguous.
            t.update((part.len() as u32).to_be_bytes());
            t.update(part);
        }
        let transcript: Bytes32 = t.finalize().into();
        let hkdf = Hkdf::<Sha256>::new(Some(&transcript), shared);
        let key = |label: &[u8]| {
            let mut k = [0u8; 32];
            hkdf.expand(label, &mut k)
                .expect("32 bytes is a valid HKDF-SHA256 output length");
            HmacSha256::new_from_slice(&k).expect("HMAC takes keys of any length")
        };
        Ok(Self {
            transcript,
            dialer: key(b"odeon/link/confirm/dialer"),
            listener: key(b"odeon/link/confirm/listener"),
        })
    }

    fn mac(key: &HmacSha256, transcript: &Bytes32) -> Bytes32 {
        let mut mac = key.clone();
        mac.update(transcript);
        mac.finalize().into_bytes().into()
    }

    fn check(key: &HmacSha256, transcript: &Bytes32, mac: &Bytes32) -> bool {
        let mut m = key.clone();
        m.update(transcript);
        m.verify_slice(mac).is_ok()
    }

    fn dialer_mac(&self) -> Bytes32 {
        Self::mac(&self.dialer, &self.transcript)
    }

    fn listener_mac(&self) -> Bytes32 {
        Self::mac(&self.listener, &self.transcript)
    }

    fn dialer_ok(&self, mac: &Bytes32) -> bool {
        Self::check(&self.dialer, &self.transcript, mac)
    }

    fn listener_ok(&self, mac: &Bytes32) -> bool {
        Self::check(&self.listener, &self.transcript, mac)
    }
}

/// Whether a frame length prefix is really the header of a TLS record (content type
/// 20..=23, major version 3): what a plaintext side reads from a TLS peer.
fn is_tls_record(len: usize) -> bool {
    matches!(len >> 24, 20..=23) && (len >> 16) & 0xff == 3
}

async fn receive<R: AsyncRead + Unpin>(
    reader: &mut FrameReader<R>,
) -> Result<Handshake, HandshakeError> {
    let frame = match reader.next().await {
        Ok(Some(frame)) => frame,
        Ok(None) => return Err(HandshakeError::Closed),
        Err(WireError::Oversized { len, .. }) if is_tls_record(len) => {
            return Err(HandshakeError::PeerUsesTls);
        }
        Err(e) => return Err(e.into()),
    };
    match wire::decode::<Handshake>(&frame)? {
        Handshake::Refused { reason } => Err(match reason {
            Refusal::NotAuthenticated => HandshakeError::NotAuthenticated,
            Refusal::Version { ours } => HandshakeError::Version {
                ours: PROTOCOL_VERSION,
                theirs: ours,
            },
            Refusal::TlsRequired => HandshakeError::PeerUsesTls,
            Refusal::PlaintextOnly => HandshakeError::PeerUsesPlaintext,
            Refusal::Other(why) => HandshakeError::Refused(why),
        }),
        m => Ok(m),
    }
}

async fn send<W: AsyncWrite + Unpin>(
    writer: &mut FrameWriter<W>,
    m: &Handshake,
) -> Result<(), HandshakeError> {
    Ok(writer.send(&wire::encode(m)?).await?)
}

/// Tells the peer why (best effort, briefly: it may be gone or not reading) when
/// there is something to tell, and returns `err`.
pub(crate) async fn refuse<W: AsyncWrite + Unpin>(
    writer: &mut FrameWriter<W>,
    err: HandshakeError,
) -> HandshakeError {
    let reason = match &err {
        HandshakeError::NotAuthenticated => Refusal::NotAuthenticated,
        HandshakeError::Version { ours, .. } => Refusal::Version { ours: *ours },
        HandshakeError::PeerUsesTls => Refusal::PlaintextOnly,
        HandshakeError::PeerUsesPlaintext => Refusal::TlsRequired,
        HandshakeError::Unexpected(_) | HandshakeError::Wire(WireError::Malformed(_)) => {
            Refusal::Other(err.to_string())
        }
        HandshakeError::Wire(WireError::Oversized { .. } | WireError::Truncated { .. }) => {
            Refusal::Other(err.to_string())
        }
        // Nobody to tell, or nothing new to tell them.
        _ => return err,
    };
    let refusal = Handshake::Refused { reason };
    let _ = tokio::time::timeout(REFUSAL_DEADLINE, send(writer, &refusal)).await;
    err
}

fn unexpected(got: &Handshake, wanted: &str) -> HandshakeError {
    let got = match got {
        Handshake::Hello { .. } => "Hello",
        Handshake::Reply { .. } => "Reply",
        Handshake::Confirm { .. } => "Confirm",
        Handshake::Welcome { .. } => "Welcome",
        Handshake::Refused { .. } => "Refused",
    };
    HandshakeError::Unexpected(format!("{got} instead of {wanted}"))
}

async fn within<T>(
    deadline: Duration,
    f: impl Future<Output = Result<T, HandshakeError>>,
) -> Result<T, HandshakeError> {
    tokio::time::timeout(deadline, f)
        .await
        .map_err(|_| HandshakeError::Timeout(deadline))?
}

/// Opens a link as the dialing side; the whole handshake runs within `deadline`.
///
/// # Errors
/// Any [`HandshakeError`]; the connection should then be dropped.
/// [`HandshakeError::NotAuthenticated`] when the two sides' secrets differ.
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
    let peer = within(deadline, dial_steps(&mut reader, &mut writer, me, secret)).await?;
    Ok(open(peer, reader, writer, max_frame))
}

async fn dial_steps<R: AsyncRead + Unpin, W: AsyncWrite + Unpin>(
    reader: &mut FrameReader<R>,
    writer: &mut FrameWriter<W>,
    me: &NodeId,
    secret: &Secret,
) -> Result<NodeId, HandshakeError> {
    let (state, spake_d) = start(secret);
    let hello = Handshake::Hello {
        version: PROTOCOL_VERSION,
        from: me.clone(),
        spake: spake_d.clone(),
    };
    send(writer, &hello).await?;
    let (peer, spake_l) = match receive(reader).await? {
        Handshake::Reply { from, spake } => (from, spake),
        other => return Err(refuse(writer, unexpected(&other, "Reply")).await),
    };
    if let Err(e) = peer.validate() {
        return Err(refuse(writer, e.into()).await);
    }
    let shared = match finish(state, &spake_l) {
        Ok(shared) => shared,
        Err(e) => return Err(refuse(writer, e).await),
    };
    let keys = Confirmation::new(&shared, me, &peer, &spake_d, &spake_l)?;
    send(
        writer,
        &Handshake::Confirm {
            mac: keys.dialer_mac(),
        },
    )
    .await?;
    match receive(reader).await? {
        Handshake::Welcome { mac } if keys.listener_ok(&mac) => Ok(peer),
        Handshake::Welcome { .. } => Err(refuse(writer, HandshakeError::NotAuthenticated).await),
        other => Err(refuse(writer, unexpected(&other, "Welcome")).await),
    }
}

/// Opens a link as the listening side; the whole handshake runs within `deadline`.
///
/// # Errors
/// Any [`HandshakeError`]; the peer has been sent `Refused` where it could be.
/// [`HandshakeError::NotAuthenticated`] when the two sides' secrets differ.
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
    let peer = within(deadline, accept_steps(&mut reader, &mut writer, me, secret)).await?;
    Ok(open(peer, reader, writer, max_frame))
}

async fn accept_steps<R: AsyncRead + Unpin, W: AsyncWrite + Unpin>(
    reader: &mut FrameReader<R>,
    writer: &mut FrameWriter<W>,
    me: &NodeId,
    secret: &Secret,
) -> Result<NodeId, HandshakeError> {
    let (peer, version, spake_d) = match receive(reader).await {
        Ok(Handshake::Hello {
            version,
            from,
            spake,
        }) => (from, version, spake),
        Ok(other) => return Err(refuse(writer, unexpected(&other, "Hello")).await),
        Err(e) => return Err(refuse(writer, e).await),
    };
    if version != PROTOCOL_VERSION {
        let err = HandshakeError::Version {
            ours: PROTOCOL_VERSION,
            theirs: version,
        };
        return Err(refuse(writer, err).await);
    }
    if let Err(e) = peer.validate() {
        return Err(refuse(writer, e.into()).await);
    }
    let (state, spake_l) = start(secret);
    let shared = match finish(state, &spake_d) {
        Ok(shared) => shared,
        Err(e) => return Err(refuse(writer, e).await),
    };
    let keys = Confirmation::new(&shared, &peer, me, &spake_d, &spake_l)?;
    let reply = Handshake::Reply {
        from: me.clone(),
        spake: spake_l,
    };
    send(writer, &reply).await?;
    let mac = match receive(reader).await {
        Ok(Handshake::Confirm { mac }) => mac,
        Ok(other) => return Err(refuse(writer, unexpected(&other, "Confirm")).await),
        Err(e) => return Err(refuse(writer, e).await),
    };
    if !keys.dialer_ok(&mac) {
        return Err(refuse(writer, HandshakeError::NotAuthenticated).await);
    }
    let welcome = Handshake::Welcome {
        mac: keys.listener_mac(),
    };
    send(writer, &welcome).await?;
    Ok(peer)
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
