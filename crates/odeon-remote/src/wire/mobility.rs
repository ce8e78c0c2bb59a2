//! The wire forms of mobility (version 3; `crate::migration`, docs/design/mobility.md
//! §5): a queued message as it travels with a moving actor, and why a target refused
//! a hand-over. The mobility variants themselves (`MTell` through `Restart`) stand in
//! [`Traffic`](super::Traffic), in the order that gives them their encodings.

use serde::{Deserialize, Serialize};

use super::NodeId;

/// A message queued for a mobile actor, as it travels in a snapshot, a commit or a
/// [`Traffic::Relay`](super::Traffic::Relay).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct QueuedMessage {
    /// The message's wire name ("odeon.Terminated" for a runtime notice).
    pub message: String,
    /// The message, postcard-encoded.
    pub payload: Vec<u8>,
    /// The sender's node.
    pub origin: NodeId,
    /// The origin's sequence number for this actor; 0 for a message sent on the node
    /// that owned the actor then (never numbered, never a straggler).
    pub seq: u64,
    /// For an ask: where the reply goes (origin node, request id there).
    pub reply: Option<(NodeId, u64)>,
    /// Hops made so far (binding reports, §3.3: the most hops wins).
    pub hops: u8,
}

/// Why a target refused a hand-over ([`Traffic::MigrateRefused`](super::Traffic::MigrateRefused)); mirrors the
/// API's `MigrateRefusal`, with types as strings. The refusing node is the peer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum WireMigrateRefusal {
    /// The target does not know the actor type.
    UnknownType {
        /// The actor type's wire name.
        actor_type: String,
    },
    /// A node on the way cannot be reached.
    Unreachable(NodeId),
    /// The actor type is not mobile on the target.
    NotMobile,
    /// The target's own route to the actor is being repaired.
    Busy,
    /// A queued message type cannot leave its node.
    LocalOnlyMail {
        /// Its name.
        message: String,
    },
    /// The actor has children.
    HasChildren,
    /// The actor is a supervised child.
    Supervised,
    /// The actor is already on the target (or the target holds a copy).
    AlreadyThere,
    /// The target uses the actor's token for another actor.
    TokenClash,
    /// The target could not decode the state.
    Decode(String),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{Traffic, WireRef, WireStopReason, decode, encode};

    fn node(name: &str) -> NodeId {
        NodeId {
            name: name.into(),
            incarnation: 42,
        }
    }

    fn queued(seq: u64, ask: bool) -> QueuedMessage {
        QueuedMessage {
            message: "demo.Add".into(),
            payload: vec![1, 2, 3],
            origin: node("c"),
            seq,
            reply: ask.then(|| (node("c"), 77)),
            hops: 2,
        }
    }

    /// One value of every variant version 3 added, with non-default fields.
    fn mobility_frames() -> Vec<Traffic<'static>> {
        let refusals = [
            WireMigrateRefusal::UnknownType {
                actor_type: "demo.Counter".into(),
            },
            WireMigrateRefusal::Unreachable(node("x")),
            WireMigrateRefusal::NotMobile,
            WireMigrateRefusal::Busy,
            WireMigrateRefusal::LocalOnlyMail {
                message: "Local".into(),
            },
            WireMigrateRefusal::HasChildren,
            WireMigrateRefusal::Supervised,
            WireMigrateRefusal::AlreadyThere,
            WireMigrateRefusal::TokenClash,
            WireMigrateRefusal::Decode("eof".into()),
        ];
        let mut frames = vec![
            Traffic::MTell {
                to: 9,
                seq: 3,
                message: "demo.Add".into(),
                payload: vec![5],
            },
            Traffic::MAsk {
                to: 9,
                seq: 4,
                request: 11,
                message: "demo.Total".into(),
                payload: vec![],
            },
            Traffic::Relay {
                to: 9,
                msg: queued(5, true),
            },
            Traffic::Notice {
                to: 9,
                origin: node("a"),
                seq: 6,
                id: 12,
                reason: WireStopReason::Failed("boom".into()),
            },
            Traffic::MigrateOffer {
                migration: 1,
                actor: WireRef {
                    node: node("a"),
                    id: 3,
                    token: 9,
                    actor_type: "demo.Counter".into(),
                },
                epoch: 2,
                state: vec![0, 255],
                mailbox: vec![queued(0, false), queued(7, true)],
                high_water: vec![(node("b"), 7), (node("c"), 1)],
                watchers: vec![(node("w"), 4)],
                links: vec![(node("l"), 8)],
                names: vec!["counter".into()],
                chunks: 0,
            },
            Traffic::MigrateChunk {
                migration: 1,
                index: 3,
                bytes: vec![9; 10],
            },
            Traffic::MigrateReady { migration: 1 },
            Traffic::MigrateCommit {
                migration: 1,
                epoch: 3,
                held: vec![queued(8, false)],
                high_water: vec![(node("b"), 8)],
            },
            Traffic::MigrateAbort { migration: 1 },
            Traffic::Hint {
                to: 9,
                at: node("b"),
                epoch: 3,
            },
            Traffic::Flush {
                to: 9,
                origin: node("c"),
                nonce: 2,
                via: None,
            },
            Traffic::Flush {
                to: 9,
                origin: node("c"),
                nonce: 3,
                via: Some(node("d")),
            },
            Traffic::FlushAck {
                to: 9,
                nonce: 2,
                epoch: 3,
                frozen_for: Some(1),
            },
            Traffic::Gone {
                to: 9,
                nonce: 3,
                via: node("d"),
            },
            Traffic::Unpin { to: 9 },
            Traffic::Reflush { to: 9, ttl: 4 },
            Traffic::Locate {
                to: 9,
                nonce: 3,
                again: true,
            },
            Traffic::Located { to: 9, epoch: 3 },
            Traffic::AskAt {
                request: 77,
                at: node("b"),
                hops: 2,
                confirmed: false,
            },
            Traffic::WatchAt {
                actor: 3,
                key: 4,
                at: node("b"),
                hops: 1,
                confirmed: true,
            },
            Traffic::ChildFailed {
                to: 9,
                reason: WireStopReason::Shutdown,
            },
            Traffic::Restart {
                to: 9,
                state: vec![1],
            },
        ];
        frames.extend(
            refusals
                .into_iter()
                .map(|why| Traffic::MigrateRefused { migration: 1, why }),
        );
        frames
    }

    #[test]
    fn every_mobility_frame_survives_a_round_trip() {
        let frames = mobility_frames();
        assert_eq!(frames.len(), 32, "22 variants, 10 refusals");
        for frame in frames {
            let bytes = encode(&frame).unwrap();
            assert_eq!(decode::<Traffic>(&bytes).unwrap(), frame);
        }
    }

    #[test]
    fn a_queued_message_with_a_lying_length_is_malformed_not_allocated() {
        // A mailbox claiming u32::MAX entries in a 9-byte frame: the decoder runs out
        // of bytes instead of reserving room for them.
        let mut bytes = encode(&Traffic::MigrateCommit {
            migration: 1,
            epoch: 1,
            held: vec![],
            high_water: vec![],
        })
        .unwrap();
        bytes.truncate(bytes.len() - 2);
        bytes.extend([0xff, 0xff, 0xff, 0xff, 0x0f]);
        assert!(decode::<Traffic>(&bytes).is_err());
    }
}
