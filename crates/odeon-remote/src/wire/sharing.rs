//! The wire forms of sharing across nodes (issue 16): what one message of a
//! [`Traffic::Batch`](super::Traffic::Batch) carries.
//!
//! The sharing variants (`Batch`, `Reserve`, `SessionTell`, `SessionAsk`, `Release`)
//! are appended last to [`Traffic`](super::Traffic), so every earlier variant keeps
//! its encoding byte for byte. They are sent only when an application uses a batch
//! or a reservation on a remote ref; a node of an earlier build does not know them
//! and closes the link at the first one (as with the traced variants), so the
//! protocol version is not bumped: a cluster uses remote batches and reservations
//! once all its nodes run a build that has them.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

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
