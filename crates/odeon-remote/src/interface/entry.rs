//! One message of a remote interface: its wire name and the functions, monomorphized
//! for the actor and message types, that encode it, deliver it and decode its reply.

use std::any::{Any, TypeId};
use std::fmt;
use std::sync::Arc;

use odeon::remote::RefCodec;
use odeon::{ActorRef, AskError, Handles, Message, RemoteActor, TellError};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{decode_message, decode_with, encode_erased};
use crate::wire::{Outcome, WireFailure};

/// Sends the outcome of a remote ask back to the asking node.
pub(crate) type ReplyRoute = Box<dyn FnOnce(Outcome<'static>) + Send>;

/// The codec a node resolves refs with, shareable with reply tasks.
pub(crate) type SharedCodec = Arc<dyn RefCodec + Send + Sync>;

/// Decodes a message and tells or asks the local actor (a boxed `ActorRef<A>`).
pub(crate) type Deliver = fn(
    &(dyn Any + Send + Sync),
    &[u8],
    Option<ReplyRoute>,
    &SharedCodec,
) -> Result<(), WireFailure>;

/// Encodes a message (erased) with postcard, resolving its refs with the codec.
pub(crate) type Encode =
    fn(&(dyn Any + Send), &(dyn RefCodec + 'static)) -> Result<Vec<u8>, String>;
pub(crate) type DecodeReply =
    fn(&[u8], &(dyn RefCodec + 'static)) -> Result<Box<dyn Any + Send>, String>;

/// A message's wire name, its encoder and its reply's decoder: what sending it to
/// another node takes, for an actor's message and a bestowed object's use alike.
pub(crate) type WireUse = (&'static str, Encode, DecodeReply);

/// One message type of an actor's remote interface. Built by `remote_actor!`.
pub struct MessageEntry {
    pub(crate) wire_name: &'static str,
    pub(crate) type_id: TypeId,
    pub(crate) type_name: &'static str,
    pub(crate) encode: Encode,
    pub(crate) decode_reply: DecodeReply,
    pub(crate) deliver: Deliver,
    pub(crate) batch_add: super::sharing::BatchAdd,
    pub(crate) deliver_reserved: super::sharing::DeliverReserved,
}

impl MessageEntry {
    /// The entry for message `M` of actor `A`, under `wire_name`. The bounds are the
    /// compile-time check: `M` and its reply must be serializable, and `A` must handle
    /// `M`.
    pub fn new<A, M, K>(wire_name: &'static str) -> Self
    where
        A: RemoteActor + Handles<M, K>,
        M: Message + Serialize + DeserializeOwned,
        M::Reply: Serialize + DeserializeOwned,
        K: 'static,
    {
        Self {
            wire_name,
            type_id: TypeId::of::<M>(),
            type_name: std::any::type_name::<M>(),
            encode: encode_erased::<M>,
            decode_reply: |bytes, codec| {
                decode_with::<M::Reply>(bytes, codec).map(|r| Box::new(r) as Box<dyn Any + Send>)
            },
            deliver: deliver::<A, M, K>,
            batch_add: super::sharing::batch_add::<A, M, K>,
            deliver_reserved: super::sharing::deliver_reserved::<A, M, K>,
        }
    }

    /// The message's wire name.
    pub fn wire_name(&self) -> &'static str {
        self.wire_name
    }

    /// What a node needs to send it (see `node/sharing.rs`, `send_use`).
    pub(crate) fn wire(&self) -> WireUse {
        (self.wire_name, self.encode, self.decode_reply)
    }
}

impl fmt::Debug for MessageEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MessageEntry")
            .field("wire_name", &self.wire_name)
            .field("type_name", &self.type_name)
            .finish()
    }
}

fn deliver<A, M, K>(
    target: &(dyn Any + Send + Sync),
    payload: &[u8],
    reply: Option<ReplyRoute>,
    codec: &SharedCodec,
) -> Result<(), WireFailure>
where
    A: RemoteActor + Handles<M, K>,
    M: Message + Serialize + DeserializeOwned,
    M::Reply: Serialize + DeserializeOwned,
    K: 'static,
{
    let Some(target) = target.downcast_ref::<ActorRef<A>>() else {
        return Err(WireFailure::Rejected(format!(
            "the target is not a {}",
            A::TYPE_NAME
        )));
    };
    let msg: M = decode_message(payload, codec)?;
    let Some(route) = reply else {
        return target.tell(msg).map_err(|e| tell_failure(&e));
    };
    // The reply is awaited off the reader task, so one slow actor does not hold up
    // the link; the message itself was enqueued here, in arrival order. It is encoded
    // and sent on the thread that completes the ask (the actor's worker, as it
    // replies), with no task of its own (see `inline.rs`).
    super::sharing::forward_reply(target.ask(msg), route, codec.clone());
    Ok(())
}

fn tell_failure<M>(e: &TellError<M>) -> WireFailure {
    match e {
        TellError::Full(_) => WireFailure::Full,
        _ => WireFailure::Stopped,
    }
}

pub(crate) fn ask_failure(e: &AskError) -> WireFailure {
    match e {
        AskError::Panicked => WireFailure::Panicked,
        AskError::Full => WireFailure::Full,
        AskError::Stopped => WireFailure::Stopped,
        other => WireFailure::Rejected(format!("on the serving node: {other}")),
    }
}

/// The asking node's view of a remote failure.
pub(crate) fn ask_error(f: WireFailure) -> AskError {
    match f {
        WireFailure::Stopped => AskError::Stopped,
        WireFailure::Panicked => AskError::Panicked,
        WireFailure::Full => AskError::Full,
        WireFailure::Rejected(why) => AskError::Rejected(why),
    }
}
