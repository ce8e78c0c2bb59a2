//! The wire: frames, the codec, and the versioned schema of what crosses a link.
//!
//! **Internal, not a stable API.** Public only for the fuzz targets and the benchmarks,
//! and hidden from the documentation; it may change in any release. Applications use
//! `NodeId` from the crate root.
//!
//! # Layers
//! 1. [`frame`]: 4-byte big-endian length + payload, bounded ([`FrameReader`],
//!    [`FrameWriter`]).
//! 2. The codec: every payload is one value of this module's schema, encoded with
//!    postcard (compact, varint-based serde). [`encode`] and [`decode`].
//! 3. The schema. Version [`PROTOCOL_VERSION`]; a peer with another version is refused
//!    during the handshake, before anything else is decoded.
//!
//! # Schema, version 4
//! [`Handshake`], in the order a link opens (see `transport/handshake.rs` for the
//! protocol and its security argument):
//! - `Hello { version, from, spake }`: the dialer's protocol version, identity and its
//!   SPAKE2 message (symmetric mode, Ed25519 group, 33 bytes).
//! - `Reply { from, spake }`: the listener's identity and its SPAKE2 message.
//! - `Confirm { mac }`: the dialer's key confirmation, an HMAC of the transcript under
//!   a key derived from the SPAKE2 shared key.
//! - `Welcome { mac }`: the listener's key confirmation; the link is open.
//! - `Refused { reason }`: either side, then the connection closes.
//!
//! Version 1 (an HMAC challenge–response keyed by the secret itself) let anyone who
//! opened one connection test guesses of the secret offline; version 2 does not.
//!
//! After the handshake, every frame is one [`Traffic`] (see [`traffic`], every field
//! commented there). Version 3 appends the mobility variants (`MTell` through
//! `Restart`, with [`QueuedMessage`] and [`WireMigrateRefusal`] from
//! `wire/mobility.rs`; the protocol is in `crate::migration` and
//! `docs/design/mobility.md` §5). The variants of version 2
//! keep their encodings (postcard numbers variants in declaration order), but a
//! version-2 node would close its link at the first new frame, so the version is
//! bumped and a cluster upgrades all its nodes together. Version 4 appends variants
//! to [`WireStopReason`] (`Panicked` through `ParentStopped`), so that a remote
//! watcher gets the actor's own [`odeon::StopReason`] rather than a panic carrying
//! the reason's text; it is bumped for the same reason.
//!
//! Also within version 3, three variants appended last carry a W3C trace context
//! ([`WireTrace`]): `TracedTell`, `TracedAsk` and `TracedReply`, the traced forms of
//! `Tell`, `Ask` and `Reply`. Only a node built with the `observe` feature *and*
//! switched on (`SystemBuilder::observe(true)`) sends them, and only while a trace
//! context is current; otherwise its frames are byte for byte those of a build
//! without the feature. Every node of this build decodes them, with or without the
//! feature (one without it ignores the context). A node of an earlier build does not
//! know them and closes the link: switch `observe` on only once every node runs a
//! build that has them.
//!
//! Also within version 4, five variants appended last carry sharing across nodes
//! (issue 16): `Batch` (an atomic batch in one frame, with [`BatchItem`]s),
//! `Reserve`, `SessionTell`, `SessionAsk` and `Release` (a reservation held from
//! another node), `ObjectTell` and `ObjectAsk` (uses of a bestowed object through a
//! handle from another node, [`ObjectRef`]). Only a node whose application batches or reserves a remote ref
//! sends them; see `wire/sharing.rs` for why the version is not bumped.
//!
//! # Bounds
//! Every decoded value is bounded by its frame: the frame reader refuses a length
//! prefix above `max_frame` ([`crate::defaults::MAX_FRAME`] by default) before
//! reading, and a value is decoded from that one frame's bytes. postcard reads a
//! vector's or string's elements from those bytes (each element takes at least one
//! byte), so no length prefix can make a decoder read or keep more than the frame
//! holds; serde caps the allocation made up front from a length prefix
//! (`size_hint::cautious`). So the mobility variants' vectors (`mailbox`, `held`,
//! `high_water`, `watchers`, `links`, `names`, `state`, chunk bytes) need no limit of
//! their own: a state larger than a frame travels in `MigrateChunk`s.

mod bytes;
pub mod frame;
mod mobility;
mod sharing;
pub mod traffic;

use serde::{Deserialize, Serialize};

pub use frame::{FrameReader, FrameWriter};
pub use traffic::{
    BatchItem, ObjectRef, Outcome, QueuedMessage, Traffic, WireFailure, WireMigrateRefusal,
    WireRef, WireStopReason, WireTrace,
};

/// The protocol version this build speaks.
pub const PROTOCOL_VERSION: u16 = 4;

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

/// A MAC or a key: 32 bytes.
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
        /// The dialer's SPAKE2 message (a `Vec` because serde stops at 32-byte arrays;
        /// anything but 33 bytes is refused).
        spake: Vec<u8>,
    },
    /// 2. Listener to dialer.
    Reply {
        /// Who is listening.
        from: NodeId,
        /// The listener's SPAKE2 message.
        spake: Vec<u8>,
    },
    /// 3. Dialer to listener: the dialer's key confirmation.
    Confirm {
        /// HMAC of the transcript under the dialer's confirmation key.
        mac: Bytes32,
    },
    /// 4. Listener to dialer: the listener's key confirmation; the link is open.
    Welcome {
        /// HMAC of the transcript under the listener's confirmation key.
        mac: Bytes32,
    },
    /// Either side: the link will not open, and why.
    Refused {
        /// Why (never secret material).
        reason: Refusal,
    },
}

/// Why a side refused to open a link, as sent in [`Handshake::Refused`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Refusal {
    /// The peer's key confirmation was wrong: it does not know the cluster secret.
    NotAuthenticated,
    /// The refusing side speaks another protocol version.
    Version {
        /// The refusing side's [`PROTOCOL_VERSION`].
        ours: u16,
    },
    /// The refusing side is configured for TLS and was sent plaintext.
    TlsRequired,
    /// The refusing side is configured for plaintext and was sent TLS.
    PlaintextOnly,
    /// Anything else (a malformed or unexpected message), in words.
    Other(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::NotAuthenticated => f.write_str("authentication failed"),
            Refusal::Version { ours } => write!(f, "the peer speaks protocol version {ours}"),
            Refusal::TlsRequired => f.write_str("the peer requires TLS"),
            Refusal::PlaintextOnly => f.write_str("the peer is configured for plaintext"),
            Refusal::Other(why) => f.write_str(why),
        }
    }
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

/// Encodes a schema value as one whole frame: the length prefix, then the payload (as
/// [`FrameWriter::push`] would write it), ready to be written to a link as it is.
///
/// # Errors
/// [`WireError::Malformed`] if the value does not serialize, [`WireError::Oversized`]
/// if its payload is longer than `max_frame` (the peer would refuse it).
pub fn encode_frame<T: Serialize>(value: &T, max_frame: usize) -> Result<Vec<u8>, WireError> {
    let mut frame = Vec::new();
    encode_frame_into(value, max_frame, &mut frame)?;
    Ok(frame)
}

/// [`encode_frame`] into `frame`, which is cleared first (so that a caller can reuse
/// one buffer for every frame).
///
/// # Errors
/// As [`encode_frame`].
pub fn encode_frame_into<T: Serialize>(
    value: &T,
    max_frame: usize,
    frame: &mut Vec<u8>,
) -> Result<(), WireError> {
    frame.clear();
    frame.extend_from_slice(&[0; frame::PREFIX]);
    let taken = std::mem::take(frame);
    *frame = postcard::to_extend(value, taken).map_err(|e| WireError::Malformed(e.to_string()))?;
    let len = frame.len() - frame::PREFIX;
    let prefix =
        u32::try_from(len)
            .ok()
            .filter(|_| len <= max_frame)
            .ok_or(WireError::Oversized {
                len,
                max: max_frame,
            })?;
    frame[..frame::PREFIX].copy_from_slice(&prefix.to_be_bytes());
    Ok(())
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
                spake: vec![1; 33],
            },
            Handshake::Reply {
                from: id,
                spake: vec![2; 33],
            },
            Handshake::Confirm { mac: [3; 32] },
            Handshake::Welcome { mac: [4; 32] },
            Handshake::Refused {
                reason: Refusal::NotAuthenticated,
            },
            Handshake::Refused {
                reason: Refusal::Version { ours: 1 },
            },
            Handshake::Refused {
                reason: Refusal::Other("no".into()),
            },
        ] {
            assert_eq!(decode::<Handshake>(&encode(&m).unwrap()).unwrap(), m);
        }
    }

    #[test]
    fn trailing_bytes_are_malformed() {
        let mut bytes = encode(&Handshake::Confirm { mac: [0; 32] }).unwrap();
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

    fn traced_frames() -> Vec<Traffic<'static>> {
        vec![
            Traffic::TracedTell {
                to: 9,
                message: "demo.Add".into(),
                payload: vec![5].into(),
                trace: WireTrace {
                    trace_id: [1; 16],
                    span_id: [2; 8],
                    flags: 1,
                },
            },
            Traffic::TracedAsk {
                to: 9,
                request: 12,
                message: "demo.Total".into(),
                payload: vec![].into(),
                trace: WireTrace {
                    trace_id: [3; 16],
                    span_id: [4; 8],
                    flags: 0,
                },
            },
            Traffic::TracedReply {
                request: 12,
                outcome: Outcome::Ok(vec![7].into()),
                trace: WireTrace {
                    trace_id: [3; 16],
                    span_id: [5; 8],
                    flags: 0,
                },
            },
        ]
    }

    #[test]
    fn traced_frames_round_trip_and_leave_the_untraced_encodings_alone() {
        for frame in traced_frames() {
            let bytes = encode(&frame).unwrap();
            assert_eq!(decode::<Traffic>(&bytes).unwrap(), frame);
        }
        // Appended after the last variant of version 3.
        let restart = encode(&Traffic::Restart {
            to: 1,
            state: vec![],
        })
        .unwrap()[0];
        let tags: Vec<u8> = traced_frames()
            .iter()
            .map(|f| encode(f).unwrap()[0])
            .collect();
        assert_eq!(tags, [restart + 1, restart + 2, restart + 3]);
        // A plain tell is what it always was: tag 4, token, name, payload.
        let tell = Traffic::Tell {
            to: 1,
            message: "m".into(),
            payload: vec![2].into(),
        };
        assert_eq!(encode(&tell).unwrap(), [4, 1, 1, b'm', 1, 2]);
    }

    #[test]
    fn version_two_variants_keep_their_encodings() {
        // postcard numbers variants in declaration order: appending must not renumber.
        assert_eq!(encode(&Traffic::Heartbeat).unwrap(), [17]);
        assert_eq!(encode(&Traffic::Lost).unwrap(), [18]);
        assert_eq!(encode(&Traffic::Unpin { to: 1 }).unwrap(), [33, 1]);
    }

    #[test]
    fn every_stop_reason_survives_a_round_trip_and_version_three_keeps_its_encodings() {
        let reasons = [
            WireStopReason::Normal,
            WireStopReason::Failed("text".into()),
            WireStopReason::Shutdown,
            WireStopReason::Panicked("boom".into()),
            WireStopReason::FailedWith("bad input".into()),
            WireStopReason::LinkFailed(42),
            WireStopReason::RestartLimit,
            WireStopReason::StartFailed("no db".into()),
            WireStopReason::NodeLost,
            WireStopReason::Killed,
            WireStopReason::Unreferenced,
            WireStopReason::ParentStopped,
        ];
        for reason in reasons {
            let frame = Traffic::Terminated {
                id: 1,
                key: 2,
                reason,
            };
            let bytes = encode(&frame).unwrap();
            assert_eq!(decode::<Traffic>(&bytes).unwrap(), frame);
        }
        assert_eq!(encode(&WireStopReason::Normal).unwrap(), [0]);
        assert_eq!(encode(&WireStopReason::Shutdown).unwrap(), [2]);
    }
}
