//! What crosses an open link: the node-to-node protocol after the handshake.
//!
//! Every frame is one [`Traffic`] value. Actors are addressed by their export token on
//! the node that hosts them (a random number: see [`WireRef::token`]); message and actor types by their stable wire names (see
//! [`remote_actor!`](crate::remote_actor)), never by Rust type names, so two builds
//! agree as long as the names do.

use std::borrow::Cow;
use std::net::SocketAddr;

use serde::{Deserialize, Serialize};

use super::NodeId;

/// One frame of node-to-node traffic.
///
/// The bytes of a message (its wire name and payload, and a reply's) are borrowed
/// where they can be: a sender encodes a frame from its `&'static` wire name and the
/// payload it just encoded, and a reader decodes a frame in place, without a copy or
/// an allocation per message. A decoded frame lives as long as the
/// bytes it was read from; [`Outcome::into_owned`] detaches a reply.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Traffic<'a> {
    /// First frame from the dialer of a new link: where it listens, and which
    /// sessions it holds (see `node/peer.rs`: a session is one life of a node's state
    /// about a peer; a node that lost its peer starts a new one).
    Attach {
        /// The dialer's listen address (for links back and for refs it hands out).
        listen: SocketAddr,
        /// The dialer's session with the listener.
        session: u64,
        /// The listener's session the dialer last linked with, if any.
        known: Option<u64>,
        /// The longest the listener may stay silent on this link (it sends a
        /// heartbeat if it has nothing else): a fraction of the dialer's `lost_after`.
        /// Unit: milliseconds.
        quiet_ms: u32,
    },
    /// The listener keeps this link as the one link of the pair.
    Attached {
        /// The listener's listen address.
        listen: SocketAddr,
        /// The listener's session with the dialer.
        session: u64,
        /// The longest the dialer may stay silent on this link (see `Attach`). Unit:
        /// milliseconds.
        quiet_ms: u32,
    },
    /// The listener lost the dialer since their last link (the session the dialer
    /// knows is gone): the dialer loses the listener too, then links afresh.
    Reset,
    /// The listener already has the pair's link (or its own dial wins the race):
    /// the dialer closes this one and uses the other.
    Duplicate,
    /// A one-way message.
    Tell {
        /// The target's export token on this node ([`WireRef::token`]).
        to: u64,
        /// The message's wire name.
        #[serde(borrow)]
        message: Cow<'a, str>,
        /// The message, postcard-encoded.
        #[serde(borrow)]
        payload: Cow<'a, [u8]>,
    },
    /// A request; answered by exactly one [`Traffic::Reply`] with the same `request`.
    Ask {
        /// The target's export token on this node ([`WireRef::token`]).
        to: u64,
        /// Chosen by the asking node, unique among its pending requests to this node.
        request: u64,
        /// The message's wire name.
        #[serde(borrow)]
        message: Cow<'a, str>,
        /// The message, postcard-encoded.
        #[serde(borrow)]
        payload: Cow<'a, [u8]>,
    },
    /// The answer to an [`Traffic::Ask`], [`Traffic::Spawn`] or [`Traffic::Lookup`].
    Reply {
        /// The request answered.
        request: u64,
        /// The encoded reply, or why there is none.
        #[serde(borrow)]
        outcome: Outcome<'a>,
    },
    /// Stop the actor.
    Stop {
        /// The target's export token on this node ([`WireRef::token`]).
        to: u64,
    },
    /// Tell the sender when the actor stops (a [`Traffic::Terminated`] with `key`).
    Watch {
        /// The watched actor's id on this node.
        to: u64,
        /// The watcher's key, echoed back.
        key: u64,
    },
    /// Cancel a [`Traffic::Watch`].
    Unwatch {
        /// The watched actor's id on this node.
        to: u64,
        /// The key given to `Watch`.
        key: u64,
    },
    /// A watched actor stopped.
    Terminated {
        /// The actor's id on the sender.
        id: u64,
        /// The watch's key.
        key: u64,
        /// Why it stopped.
        reason: WireStopReason,
    },
    /// Link the actor `to` here with the actor `from` on the sender: `to` stops when
    /// `from` fails ([`Traffic::LinkFailed`]) or the sender is lost.
    Link {
        /// The actor's id on this node.
        to: u64,
        /// The linked actor's id on the sender.
        from: u64,
    },
    /// Cancel a [`Traffic::Link`].
    Unlink {
        /// The actor's id on this node.
        to: u64,
        /// The linked actor's id on the sender.
        from: u64,
    },
    /// The sender's actor `from`, linked with `to`, failed: stop `to`.
    LinkFailed {
        /// The actor's id on this node.
        to: u64,
        /// The failed actor's id on the sender.
        from: u64,
    },
    /// Spawn an actor of a type registered as spawnable on this node; the reply is a
    /// [`WireRef`] to it.
    Spawn {
        /// The request id (see `Ask`).
        request: u64,
        /// The actor type's wire name.
        actor_type: String,
        /// The constructor's arguments, postcard-encoded.
        args: Vec<u8>,
    },
    /// Find an actor registered under `name` on this node; the reply is a [`WireRef`].
    Lookup {
        /// The request id (see `Ask`).
        request: u64,
        /// The registered name.
        name: String,
    },
    /// The sender is leaving the cluster on purpose.
    Leaving,
    /// Sent on an idle link so that the other end can tell a quiet link from a dead
    /// one: a link that carries nothing for `lost_after` is declared dead.
    Heartbeat,
    /// The sender has declared the receiver lost (failed its asks, told its watchers)
    /// and is closing the link: the receiver loses the sender too, so that both ends
    /// agree and the next link between them starts empty.
    Lost,
}

impl Outcome<'_> {
    /// The same outcome, owning its bytes (to keep it past the frame it came in).
    pub fn into_owned(self) -> Outcome<'static> {
        match self {
            Outcome::Ok(bytes) => Outcome::Ok(Cow::Owned(bytes.into_owned())),
            Outcome::Failed(f) => Outcome::Failed(f),
        }
    }
}

/// The result carried by a [`Traffic::Reply`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Outcome<'a> {
    /// The postcard-encoded reply.
    Ok(#[serde(borrow)] Cow<'a, [u8]>),
    /// Why there is no reply.
    Failed(WireFailure),
}

/// Why a remote request failed, as the serving node saw it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum WireFailure {
    /// The actor stopped (or was never there).
    Stopped,
    /// Its handler panicked.
    Panicked,
    /// Its bounded mailbox was full.
    Full,
    /// The serving node refused the request (unknown type or name, bad payload).
    Rejected(String),
}

/// Why a watched actor stopped, as far as a remote watcher needs to know.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum WireStopReason {
    /// Asked to stop, or collected.
    Normal,
    /// A failure (panic, failed link, restart limit).
    Failed(String),
    /// The system shut down.
    Shutdown,
}

/// An actor ref on the wire: enough to reach the actor from any node of the cluster.
///
/// It carries no address: a node reaches the actor's node through the address
/// membership (or its own link to that node) gives, so a ref inside a message cannot
/// make a node dial anywhere. A ref to a node the receiver does not know resolves to a
/// dead ref.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct WireRef {
    /// The node hosting the actor.
    pub node: NodeId,
    /// The actor's id on that node: its identity (`ActorRef::id`), not an address.
    pub id: u64,
    /// The random token under which the node exported the actor, drawn from the OS
    /// when the actor is first exported. Frames address the actor by it, so a peer
    /// can reach only the actors it was given a ref to (or looked up by name).
    pub token: u64,
    /// The actor type's wire name.
    pub actor_type: String,
}
