//! The wire: frames, the codec, and the versioned schema of what crosses a link.
//!
//! # Layers
//! 1. [`frame`]: 4-byte big-endian length + payload, bounded ([`FrameReader`],
//!    [`FrameWriter`]).
//! 2. The codec: every payload is one value of this module's schema, encoded with
//!    postcard (compact, varint-based serde). [`encode`] and [`decode`].
//! 3. The schema. Version [`PROTOCOL_VERSION`]; a peer with another version is refused
//!    during the handshake, before anything else is decoded.
//!
//! # Schema, version 1
//! [`Handshake`], in the order a link opens (see `transport/handshake.rs` for the
//! protocol and its security argument):
//! - `Hello { version, from, nonce }`: the dialer's protocol version, identity and a
//!   fresh 32-byte random nonce.
//! - `Challenge { from, nonce, proof }`: the listener's identity, its own nonce, and its
//!   proof `HMAC-SHA256(secret, "odeon/listener" ‖ both nonces ‖ both identities)`.
//! - `Proof { proof }`: the dialer's proof, the same MAC under the label
//!   `"odeon/dialer"`.
//! - `Welcome`: the link is open.
//! - `Refused { reason }`: either side, then the connection closes.

pub mod frame;
pub mod traffic;

use serde::{Deserialize, Serialize};

pub use frame::{FrameReader, FrameWriter};
pub use traffic::{Outcome, Traffic, WireFailure, WireRef, WireStopReason};

/// The protocol version this build speaks.
pub const PROTOCOL_VERSION: u16 = 2;

/// The most bytes a node name may have.
pub const MAX_NAME: usize = 255;

/// A node's identity: its name, and an incarnation drawn at random when the node
/// starts, so that a restarted node is a different peer to the cluster.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct NodeId {
    /// The name given to the node's builder.
    pub name: String,
    /// Distinguishes two lives of the same name.
    pub incarnation: u64,
}

impl NodeId {
    /// Checks what a peer claims about itself.
    ///
    /// # Errors
    /// [`WireError::Malformed`] for an empty name or one longer than [`MAX_NAME`].
    pub fn validate(&self) -> Result<(), WireError> {
        if self.name.is_empty() || self.name.len() > MAX_NAME {
            return Err(WireError::Malformed(format!(
                "node name of {} bytes (1..={MAX_NAME} allowed)",
                self.name.len()
            )));
        }
        Ok(())
    }
}

impl std::fmt::Display for NodeId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}#{:x}", self.name, self.incarnation)
    }
}

/// A nonce or a MAC: 32 bytes.
pub type Bytes32 = [u8; 32];

/// The messages that open a link (schema above).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Handshake {
    /// 1. Dialer to listener.
    Hello {
        /// The dialer's [`PROTOCOL_VERSION`].
        version: u16,
        /// Who is dialing.
        from: NodeId,
        /// Fresh random bytes from the dialer.
        nonce: Bytes32,
    },
    /// 2. Listener to dialer.
    Challenge {
        /// Who is listening.
        from: NodeId,
        /// Fresh random bytes from the listener.
        nonce: Bytes32,
        /// The listener's proof that it knows the secret.
        proof: Bytes32,
    },
    /// 3. Dialer to listener.
    Proof {
        /// The dialer's proof that it knows the secret.
        proof: Bytes32,
    },
    /// 4. Listener to dialer: authenticated.
    Welcome,
    /// Either side: the link will not open, and why.
    Refused {
        /// A human-readable reason (never secret material).
        reason: String,
    },
}

/// What can go wrong below the actor layer. Every variant is a reason to close the
/// connection it happened on, and none is a reason to stop the node.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// A frame's length prefix is above the limit.
    #[error("frame of {len} bytes exceeds the limit of {max}")]
    Oversized {
        /// The announced length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The stream ended inside a frame.
    #[error("connection closed inside a frame ({buffered} bytes buffered)")]
    Truncated {
        /// Bytes received of the unfinished frame.
        buffered: usize,
    },
    /// A payload did not decode as the expected schema type.
    #[error("malformed payload: {0}")]
    Malformed(String),
    /// The socket failed.
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
}

/// Encodes a schema value.
///
/// # Errors
/// [`WireError::Malformed`] if the value cannot be serialized (it always can for this
/// module's types).
pub fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, WireError> {
    postcard::to_stdvec(value).map_err(|e| WireError::Malformed(e.to_string()))
}

/// Decodes a schema value; trailing bytes are an error, not ignored.
///
/// # Errors
/// [`WireError::Malformed`] for anything that is not exactly one `T`.
pub fn decode<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Result<T, WireError> {
    match postcard::take_from_bytes(bytes) {
        Ok((value, [])) => Ok(value),
        Ok((_, rest)) => Err(WireError::Malformed(format!(
            "{} trailing bytes",
            rest.len()
        ))),
        Err(e) => Err(WireError::Malformed(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn handshake_messages_round_trip() {
        let id = NodeId {
            name: "a".into(),
            incarnation: 7,
        };
        for m in [
            Handshake::Hello {
                version: PROTOCOL_VERSION,
                from: id.clone(),
                nonce: [1; 32],
            },
            Handshake::Challenge {
                from: id,
                nonce: [2; 32],
                proof: [3; 32],
            },
            Handshake::Proof { proof: [4; 32] },
            Handshake::Welcome,
            Handshake::Refused {
                reason: "no".into(),
            },
        ] {
            assert_eq!(decode::<Handshake>(&encode(&m).unwrap()).unwrap(), m);
        }
    }

    #[test]
    fn trailing_bytes_are_malformed() {
        let mut bytes = encode(&Handshake::Welcome).unwrap();
        bytes.push(0);
        assert!(matches!(
            decode::<Handshake>(&bytes),
            Err(WireError::Malformed(_))
        ));
    }

    proptest! {
        #[test]
        fn random_bytes_decode_to_a_value_or_a_malformed_error(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            match decode::<Handshake>(&bytes) {
                // Whatever decodes is a real value: it survives a round trip.
                Ok(value) => prop_assert_eq!(decode::<Handshake>(&encode(&value).unwrap()).unwrap(), value),
                Err(e) => prop_assert!(matches!(e, WireError::Malformed(_)), "{}", e),
            }
        }
    }

    #[test]
    fn names_are_bounded() {
        assert!(
            NodeId {
                name: String::new(),
                incarnation: 0
            }
            .validate()
            .is_err()
        );
        assert!(
            NodeId {
                name: "x".repeat(MAX_NAME + 1),
                incarnation: 0
            }
            .validate()
            .is_err()
        );
        assert!(
            NodeId {
                name: "x".repeat(MAX_NAME),
                incarnation: 0
            }
            .validate()
            .is_ok()
        );
    }
}
