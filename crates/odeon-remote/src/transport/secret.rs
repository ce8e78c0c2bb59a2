//! The cluster secret: what every node must know to link and to gossip.
//!
//! The link handshake uses it as a SPAKE2 password (see [`handshake`](super::handshake)),
//! which an eavesdropper or an impostor cannot test guesses against offline. Gossip
//! datagrams are authenticated with a key stretched from it by Argon2id (see
//! `membership/auth.rs`): anyone who captures one authentic datagram *can* test guesses
//! offline, at the price of one Argon2id evaluation per guess. A random secret
//! ([`Secret::generate`], `odeon-node gen-secret`) makes that hopeless; a phrase a
//! person chose may not be.

use std::sync::{Arc, OnceLock};

use super::HandshakeError;
use crate::wire::Bytes32;

/// The cluster secret. Its `Debug` never shows it.
///
/// ```
/// use odeon_remote::Secret;
///
/// let secret = Secret::generate();
/// assert_eq!(secret.expose().len(), 64); // 32 random bytes as hex text
/// assert!(Secret::new("short").is_err());
/// ```
#[derive(Clone)]
pub struct Secret(Arc<Inner>);

struct Inner {
    bytes: Vec<u8>,
    /// The gossip key, derived on first use: Argon2id is deliberately slow, and every
    /// clone of a secret (one per node in a test process) shares the result.
    gossip_key: OnceLock<Bytes32>,
}

impl Secret {
    /// The fewest bytes a secret may have.
    pub const MIN_LEN: usize = 16;

    /// Below this many bytes a secret is accepted with a warning: unless it is random,
    /// it may be guessed by trying candidates against a captured gossip datagram.
    pub const RECOMMENDED_LEN: usize = 32;

    /// A secret from its bytes (the same on every node of the cluster).
    ///
    /// # Errors
    /// [`HandshakeError::WeakSecret`] when shorter than [`Secret::MIN_LEN`] bytes. A
    /// secret shorter than [`Secret::RECOMMENDED_LEN`] is accepted with a warning.
    pub fn new(bytes: impl Into<Vec<u8>>) -> Result<Self, HandshakeError> {
        let bytes = bytes.into();
        if bytes.len() < Self::MIN_LEN {
            return Err(HandshakeError::WeakSecret { len: bytes.len() });
        }
        if bytes.len() < Self::RECOMMENDED_LEN {
            tracing::warn!(
                len = bytes.len(),
                recommended = Self::RECOMMENDED_LEN,
                "the cluster secret is short: unless it is random it can be guessed offline \
                 from a captured gossip datagram; generate one with `odeon-node gen-secret`"
            );
        }
        Ok(Self(Arc::new(Inner {
            bytes,
            gossip_key: OnceLock::new(),
        })))
    }

    /// A new random secret: 32 bytes from the operating system's random source, as 64
    /// lowercase hex characters (text, so that it can go in an environment variable or
    /// a file). What `odeon-node gen-secret` prints.
    ///
    /// # Panics
    /// If the operating system's random source fails (the SPAKE2 handshake could not
    /// run without it either).
    pub fn generate() -> Self {
        let mut raw = [0u8; 32];
        getrandom::fill(&mut raw).expect("the operating system's random source is available");
        let hex: String = raw.iter().map(|b| format!("{b:02x}")).collect();
        Self(Arc::new(Inner {
            bytes: hex.into_bytes(),
            gossip_key: OnceLock::new(),
        }))
    }

    /// The secret's bytes, to save or print it (never log them).
    pub fn expose(&self) -> &[u8] {
        &self.0.bytes
    }

    /// The gossip key, computed by `derive` the first time (see the field's comment).
    pub(crate) fn gossip_key(&self, derive: impl FnOnce(&[u8]) -> Bytes32) -> Bytes32 {
        *self.0.gossip_key.get_or_init(|| derive(&self.0.bytes))
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secret(<{} bytes>)", self.0.bytes.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_secrets_are_hex_and_differ() {
        let (a, b) = (Secret::generate(), Secret::generate());
        assert_eq!(a.expose().len(), 64);
        assert!(a.expose().iter().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a.expose(), b.expose());
        assert!(Secret::new(a.expose()).is_ok());
    }

    #[test]
    fn debug_never_shows_the_secret() {
        let s = Secret::new("0123456789abcdef").unwrap();
        assert_eq!(format!("{s:?}"), "Secret(<16 bytes>)");
    }
}
