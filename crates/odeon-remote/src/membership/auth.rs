//! Authenticated gossip datagrams: every datagram sealed by an HMAC under a key
//! stretched from the cluster secret (the UDP socket that applies this to chitchat's
//! traffic is `socket.rs`).
//!
//! # Datagram
//! `VERSION (1 byte) ‖ chitchat message ‖ tag (32 bytes)`, where
//! `tag = HMAC-SHA256(K, VERSION ‖ chitchat message)` and
//! `K = Argon2id(secret, salt = "odeon/gossip-key/argon2id/v2")` with the parameters
//! of [`ARGON2_PARAMS`], computed once per secret (at node start).
//!
//! # Why this is safe, and what is not
//! - A datagram is decoded by chitchat only after its tag verified (in constant time,
//!   `Mac::verify_slice`), so nobody without the secret can feed chitchat a byte: no
//!   fake members, no forged key-values, and chitchat's decoder is never exposed to
//!   unauthenticated input.
//! - `K` is not used anywhere else: the link handshake uses the secret as a SPAKE2
//!   password, so a gossip tag is never worth anything there, or the reverse.
//! - The version byte is under the tag, so it cannot be downgraded.
//! - **Residual risk: offline guessing.** Anyone who can capture one authentic
//!   datagram (it is sent in clear to every member's gossip port) can test candidate
//!   secrets against its tag without talking to anyone. A symmetric MAC cannot avoid
//!   this; Argon2id makes each guess cost ~19 MiB of memory and two passes over it (tens
//!   of milliseconds of a CPU core) instead of a microsecond, which stops dictionary
//!   attacks on a decent phrase but not on a short or common one. Use a random secret
//!   (`Secret::generate`, `odeon-node gen-secret`: 256 bits), against which guessing is
//!   hopeless at any cost per guess.
//! - Residual risk: an on-path attacker can *replay* a recorded datagram. Chitchat's
//!   state is versioned (heartbeats and key versions only grow), so a replayed delta
//!   changes nothing; a replayed `Syn` makes a member answer the datagram's source.
//!   Gossip is not encrypted (confidentiality is TLS's job, DESIGN.md §3): member
//!   names, addresses and registered names are readable on the path.
//!
//! Anything else (too short, too long, bad version, bad tag, or authentic but
//! undecodable) is dropped and counted in [`GossipStats`], with a rate-limited warning;
//! the socket goes on serving.

use std::sync::atomic::{AtomicU64, Ordering};

use argon2::{Algorithm, Argon2, Params, Version};
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

/// The salt of the gossip key's derivation: fixed, so that every node derives the same
/// key from the same secret; a protocol label, so that no other use of Argon2id on the
/// same secret gives the same bytes.
const SALT: &[u8] = b"odeon/gossip-key/argon2id/v2";

/// Argon2id's memory in KiB, passes and lanes for the gossip key: OWASP's recommended
/// minimum for Argon2id (19 MiB, 2 passes, 1 lane).
pub(crate) const ARGON2_PARAMS: (u32, u32, u32) = (19 * 1024, 2, 1);

/// Counts of what the gossip socket did, for metrics and tests.
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
    /// The key of `secret`: slow the first time for a secret and its clones (Argon2id,
    /// tens of milliseconds), so async callers run it with `spawn_blocking`.
    pub(crate) fn new(secret: &Secret) -> Self {
        Self(secret.gossip_key(stretch))
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

fn stretch(secret: &[u8]) -> Bytes32 {
    let (memory, passes, lanes) = ARGON2_PARAMS;
    let params = Params::new(memory, passes, lanes, Some(32))
        .expect("ARGON2_PARAMS are valid Argon2 parameters");
    let mut key = [0u8; 32];
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
        .hash_password_into(secret, SALT, &mut key)
        .expect("a secret of at most 4 GiB and a salt of 28 bytes are valid Argon2 input");
    key
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
    fn the_key_is_stretched_with_argon2id_not_a_fast_mac() {
        // A tag made with a fast derivation of the secret (the raw secret, or the HMAC
        // of version 1) must not verify: guessing has to pay for Argon2id.
        let secret = "0123456789abcdef";
        let fast_v1 = {
            let mut m = HmacSha256::new_from_slice(secret.as_bytes()).unwrap();
            m.update(b"odeon/gossip");
            m.finalize().into_bytes().to_vec()
        };
        for fast in [secret.as_bytes().to_vec(), fast_v1] {
            let mut d = vec![VERSION];
            d.extend_from_slice(b"hello");
            let mut mac = HmacSha256::new_from_slice(&fast).unwrap();
            mac.update(&d);
            d.extend_from_slice(&mac.finalize().into_bytes());
            assert_eq!(key(secret).open(&d), Err(Rejected::BadTag));
        }
        // The key is Argon2id's output with the documented parameters and salt.
        let (m, t, p) = ARGON2_PARAMS;
        let mut expected = [0u8; 32];
        Argon2::new(
            Algorithm::Argon2id,
            Version::V0x13,
            Params::new(m, t, p, Some(32)).unwrap(),
        )
        .hash_password_into(secret.as_bytes(), SALT, &mut expected)
        .unwrap();
        assert_eq!(key(secret).0, expected);
        assert!(m >= 19 * 1024 && t >= 2, "weaker than OWASP's minimum");
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
