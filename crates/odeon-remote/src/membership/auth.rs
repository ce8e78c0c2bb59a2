//! Authenticated gossip datagrams: every datagram sealed by an HMAC of the cluster
//! secret (the UDP socket that applies this to chitchat's traffic is `socket.rs`).
//!
//! # Datagram
//! `VERSION (1 byte) ‖ chitchat message ‖ tag (32 bytes)`, where
//! `tag = HMAC-SHA256(K, VERSION ‖ chitchat message)` and
//! `K = HMAC-SHA256(secret, "odeon/gossip")`.
//!
//! # Why this is safe
//! - A datagram is decoded by chitchat only after its tag verified (in constant time,
//!   `Mac::verify_slice`), so nobody without the secret can feed chitchat a byte: no
//!   fake members, no forged key-values, and chitchat's decoder is never exposed to
//!   unauthenticated input.
//! - `K` is derived under its own label, so a gossip tag is never a valid proof in the
//!   link handshake (labels `"odeon/listener"`, `"odeon/dialer"`) or vice versa.
//! - The version byte is under the tag, so it cannot be downgraded.
//! - Residual risk: an on-path attacker can *replay* a recorded datagram. Chitchat's
//!   state is versioned (heartbeats and key versions only grow), so a replayed delta
//!   changes nothing; a replayed `Syn` makes a member answer the datagram's source.
//!   Gossip is not encrypted (confidentiality is TLS's job, DESIGN.md §3).
//!
//! Anything else (too short, too long, bad version, bad tag, or authentic but
//! undecodable) is dropped with a `tracing::warn!` and counted in [`GossipStats`];
//! the socket goes on serving.

use std::sync::atomic::{AtomicU64, Ordering};

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::transport::Secret;
use crate::wire::Bytes32;

type HmacSha256 = Hmac<Sha256>;

/// The format version of an authenticated gossip datagram.
pub(crate) const VERSION: u8 = 1;

/// Bytes of the tag that ends every datagram.
pub(crate) const TAG_LEN: usize = 32;

/// The largest datagram sent or accepted: the largest UDP payload over IPv4.
/// Unit: bytes.
pub(crate) const MAX_DATAGRAM: usize = 65_507;

/// The label under which the gossip key is derived from the cluster secret.
const LABEL: &[u8] = b"odeon/gossip";

/// Counts of what the gossip socket did, for logs and tests.
#[derive(Debug, Default)]
pub struct GossipStats {
    pub(super) accepted: AtomicU64,
    pub(super) rejected: AtomicU64,
    pub(super) malformed: AtomicU64,
    pub(super) oversized: AtomicU64,
    pub(super) send_errors: AtomicU64,
}

impl GossipStats {
    /// Authentic datagrams handed to chitchat.
    pub fn accepted(&self) -> u64 {
        self.accepted.load(Ordering::Relaxed)
    }

    /// Datagrams dropped because they failed authentication: too short to hold a
    /// tag, an unknown version, or a wrong tag (the sender does not know the cluster
    /// secret, or the datagram was truncated or altered).
    pub fn rejected(&self) -> u64 {
        self.rejected.load(Ordering::Relaxed)
    }

    /// Authentic datagrams dropped because chitchat could not decode them.
    pub fn malformed(&self) -> u64 {
        self.malformed.load(Ordering::Relaxed)
    }

    /// Datagrams dropped, received or about to be sent, for being larger than a UDP
    /// payload may be over IPv4 (65,507 bytes).
    pub fn oversized(&self) -> u64 {
        self.oversized.load(Ordering::Relaxed)
    }

    /// Datagrams the socket failed to send.
    pub fn send_errors(&self) -> u64 {
        self.send_errors.load(Ordering::Relaxed)
    }

    pub(super) fn count(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// Why a received datagram was dropped before chitchat saw it.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Rejected {
    #[error("{len} bytes, more than the {MAX_DATAGRAM} a datagram may have")]
    Oversized { len: usize },
    #[error("{len} bytes, too short for a version, a message and a tag")]
    Truncated { len: usize },
    #[error("unknown datagram version {0}")]
    Version(u8),
    #[error("wrong tag: the sender does not know the cluster secret, or the datagram was altered")]
    BadTag,
}

/// The gossip key. Its `Debug` never shows it.
#[derive(Clone)]
pub(crate) struct GossipKey(Bytes32);

impl std::fmt::Debug for GossipKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("GossipKey(<32 bytes>)")
    }
}

impl GossipKey {
    pub(crate) fn new(secret: &Secret) -> Self {
        Self(secret.derive_key(LABEL))
    }

    fn mac(&self) -> HmacSha256 {
        HmacSha256::new_from_slice(&self.0).expect("HMAC takes keys of any length")
    }

    /// Appends `VERSION ‖ message ‖ tag` to `out`.
    pub(crate) fn seal(&self, message: &[u8], out: &mut Vec<u8>) {
        let start = out.len();
        out.push(VERSION);
        out.extend_from_slice(message);
        let mut mac = self.mac();
        mac.update(&out[start..]);
        out.extend_from_slice(&mac.finalize().into_bytes());
    }

    /// Checks a datagram and returns the chitchat message it carries.
    pub(crate) fn open<'a>(&self, datagram: &'a [u8]) -> Result<&'a [u8], Rejected> {
        let len = datagram.len();
        if len > MAX_DATAGRAM {
            return Err(Rejected::Oversized { len });
        }
        // At least one byte of message: chitchat never sends an empty one.
        if len < 1 + 1 + TAG_LEN {
            return Err(Rejected::Truncated { len });
        }
        let (signed, tag) = datagram.split_at(len - TAG_LEN);
        let mut mac = self.mac();
        mac.update(signed);
        // Verify before looking at the version byte: an unauthenticated sender learns
        // nothing from which check failed.
        mac.verify_slice(tag).map_err(|_| Rejected::BadTag)?;
        match signed.split_first() {
            Some((&VERSION, message)) => Ok(message),
            Some((&other, _)) => Err(Rejected::Version(other)),
            None => Err(Rejected::Truncated { len }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chitchat::{ChitchatMessage, Serializable};

    fn key(secret: &str) -> GossipKey {
        GossipKey::new(&Secret::new(secret).unwrap())
    }

    fn message_bytes() -> Vec<u8> {
        let mut bytes = Vec::new();
        ChitchatMessage::Syn {
            cluster_id: "test".into(),
            digest: Default::default(),
        }
        .serialize(&mut bytes);
        bytes
    }

    #[test]
    fn sealed_datagrams_open_to_their_message() {
        let k = key("0123456789abcdef");
        let mut d = Vec::new();
        k.seal(b"hello", &mut d);
        assert_eq!(d.len(), 1 + 5 + TAG_LEN);
        assert_eq!(k.open(&d), Ok(&b"hello"[..]));
    }

    #[test]
    fn another_secret_is_rejected() {
        let mut d = Vec::new();
        key("0123456789abcdef").seal(b"hello", &mut d);
        assert_eq!(key("0123456789abcdeF").open(&d), Err(Rejected::BadTag));
    }

    #[test]
    fn the_key_is_not_the_secret_itself() {
        // A tag made with the raw secret as the HMAC key must not verify: the gossip
        // key is derived under its own label.
        let secret = "0123456789abcdef";
        let mut d = vec![VERSION];
        d.extend_from_slice(b"hello");
        let mut mac = HmacSha256::new_from_slice(secret.as_bytes()).unwrap();
        mac.update(&d);
        d.extend_from_slice(&mac.finalize().into_bytes());
        assert_eq!(key(secret).open(&d), Err(Rejected::BadTag));
    }

    #[test]
    fn every_altered_or_truncated_datagram_is_rejected() {
        let k = key("0123456789abcdef");
        let mut d = Vec::new();
        k.seal(&message_bytes(), &mut d);
        for i in 0..d.len() {
            let mut altered = d.clone();
            altered[i] ^= 0x01;
            assert!(k.open(&altered).is_err(), "flipped byte {i} accepted");
        }
        for len in 0..d.len() {
            assert!(k.open(&d[..len]).is_err(), "truncated to {len} accepted");
        }
    }

    #[test]
    fn oversized_and_unknown_versions_are_rejected() {
        let k = key("0123456789abcdef");
        assert_eq!(
            k.open(&vec![0; MAX_DATAGRAM + 1]),
            Err(Rejected::Oversized {
                len: MAX_DATAGRAM + 1
            })
        );
        // A correctly tagged datagram of another version.
        let mut d = vec![VERSION + 1, 7];
        let mut mac = k.mac();
        mac.update(&d);
        d.extend_from_slice(&mac.finalize().into_bytes());
        assert_eq!(k.open(&d), Err(Rejected::Version(VERSION + 1)));
    }
}
