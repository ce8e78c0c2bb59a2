//! The wire forms of sharing across nodes (issue 16): what one message of a
//! [`Traffic::Batch`](super::Traffic::Batch) carries, and a bestowed handle.
//!
//! The sharing variants (`Batch`, `Reserve`, `SessionTell`, `SessionAsk`, `Release`,
//! `ObjectTell`, `ObjectAsk`)
//! are appended last to [`Traffic`](super::Traffic), so every earlier variant keeps
//! its encoding byte for byte. They are sent only when an application uses a batch
//! or a reservation on a remote ref, or a bestowed handle from another node; a node of an earlier build does not know them
//! and closes the link at the first one (as with the traced variants), so the
//! protocol version is not bumped: a cluster uses remote batches and reservations
//! once all its nodes run a build that has them.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::NodeId;

/// One message of an atomic batch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchItem<'a> {
    /// For an ask: the request id its [`Traffic::Reply`](super::Traffic::Reply) answers.
    pub request: Option<u64>,
    /// The message's wire name.
    #[serde(borrow)]
    pub message: Cow<'a, str>,
    /// The message, postcard-encoded.
    #[serde(borrow)]
    pub payload: Cow<'a, [u8]>,
}

/// A bestowed handle on the wire: the owner's node and the object's export token
/// there (random, like an actor's: a peer reaches only the objects it was given).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObjectRef {
    /// The owner's node.
    pub node: NodeId,
    /// The object's export token on that node.
    pub token: u64,
    /// The owner's actor id on that node.
    pub owner: u64,
    /// The object type's wire name (`remote_object!`).
    pub object_type: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{Outcome, Traffic, WireTrace, decode, encode};

    /// One value of every sharing variant, in declaration order.
    fn sharing_frames() -> Vec<Traffic<'static>> {
        let item = |request| BatchItem {
            request,
            message: "demo.Add".into(),
            payload: vec![5].into(),
        };
        vec![
            Traffic::Batch {
                to: 9,
                items: vec![item(None), item(Some(12))],
            },
            Traffic::Reserve {
                to: 9,
                request: 13,
                lease_ms: 5_000,
            },
            Traffic::SessionTell {
                session: 13,
                message: "demo.Add".into(),
                payload: vec![1].into(),
            },
            Traffic::SessionAsk {
                session: 13,
                request: 14,
                message: "demo.Total".into(),
                payload: vec![].into(),
            },
            Traffic::Release { session: 13 },
            Traffic::ObjectTell {
                object: 7,
                message: "demo.Skip".into(),
                payload: vec![1].into(),
            },
            Traffic::ObjectAsk {
                object: 7,
                request: 15,
                message: "demo.Next".into(),
                payload: vec![].into(),
            },
        ]
    }

    #[test]
    fn sharing_frames_round_trip_and_follow_the_traced_variants() {
        for frame in sharing_frames() {
            let bytes = encode(&frame).unwrap();
            assert_eq!(decode::<Traffic>(&bytes).unwrap(), frame);
        }
        let traced_reply = encode(&Traffic::TracedReply {
            request: 1,
            outcome: Outcome::Ok(vec![].into()),
            trace: WireTrace {
                trace_id: [0; 16],
                span_id: [0; 8],
                flags: 0,
            },
        })
        .unwrap()[0];
        let tags: Vec<u8> = sharing_frames()
            .iter()
            .map(|f| encode(f).unwrap()[0])
            .collect();
        assert_eq!(tags, (1..=7).map(|i| traced_reply + i).collect::<Vec<_>>());
    }
}
