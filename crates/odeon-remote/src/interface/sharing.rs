//! The parts of a remote interface that serve sharing across nodes (issue 16): how
//! a batch that arrived in one frame is rebuilt as one local batch, and how a message
//! sent inside a remote reservation is handed to the local reservation.

use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use odeon::remote::DetachedBatch;
use odeon::{Ask, BatchError, Handles, Message, RemoteActor, Reservation, ReserveError};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::entry::{ReplyRoute, SharedCodec, ask_failure};
use super::{decode_message, reply_outcome};
use crate::wire::{Outcome, WireFailure};

/// Sends an ask's reply back once it arrives, on the thread that completes it (see
/// `inline.rs`).
pub(crate) type WireReply = Box<dyn FnOnce(ReplyRoute) + Send>;

/// Decodes a message and adds it to a batch (a `DetachedBatch<A>`); for an ask,
/// returns what routes its reply once the batch is sent.
pub(crate) type BatchAdd =
    fn(&mut dyn Any, &[u8], bool, &SharedCodec) -> Result<Option<WireReply>, WireFailure>;

/// Decodes a message and sends it through a reservation (a `Reservation<A>`): a
/// `Deliver` whose target is the reservation.
pub(crate) type DeliverReserved = super::entry::Deliver;

/// A reservation being opened at this node: its `Reservation<A>`, erased.
pub(crate) type Opening =
    Pin<Box<dyn Future<Output = Result<Arc<dyn Any + Send + Sync>, ReserveError>> + Send>>;

/// Awaits `ask` and routes its outcome, encoded, to the asking node.
pub(crate) fn forward_reply<R>(ask: Ask<R>, route: ReplyRoute, codec: SharedCodec)
where
    R: Serialize + Send + 'static,
{
    crate::inline::run(async move {
        let outcome = match ask.await {
            Ok(value) => reply_outcome(&value, &codec),
            Err(e) => Outcome::Failed(ask_failure(&e)),
        };
        route(outcome);
    });
}

pub(crate) fn batch_add<A, M, K>(
    batch: &mut dyn Any,
    payload: &[u8],
    ask: bool,
    codec: &SharedCodec,
) -> Result<Option<WireReply>, WireFailure>
where
    A: RemoteActor + Handles<M, K>,
    M: Message + Serialize + DeserializeOwned,
    M::Reply: Serialize + DeserializeOwned,
    K: 'static,
{
    let Some(batch) = batch.downcast_mut::<DetachedBatch<A>>() else {
        return Err(WireFailure::Rejected(format!(
            "the batch is not for a {}",
            A::TYPE_NAME
        )));
    };
    let msg: M = decode_message(payload, codec)?;
    if !ask {
        batch.tell(msg);
        return Ok(None);
    }
    let reply = batch.ask(msg);
    let codec = codec.clone();
    Ok(Some(Box::new(move |route| {
        forward_reply(reply, route, codec)
    })))
}

pub(crate) fn deliver_reserved<A, M, K>(
    reservation: &(dyn Any + Send + Sync),
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
    let Some(r) = reservation.downcast_ref::<Reservation<A>>() else {
        return Err(WireFailure::Rejected(format!(
            "the reservation is not of a {}",
            A::TYPE_NAME
        )));
    };
    let msg: M = decode_message(payload, codec)?;
    match reply {
        // A tell through an ended reservation is dropped, as a tell to a stopped
        // actor is (at most once).
        None => r.tell(msg).map_err(|_| WireFailure::Stopped),
        Some(route) => {
            forward_reply(r.ask(msg), route, codec.clone());
            Ok(())
        }
    }
}

/// The actor-type half: a fresh batch, sending it, opening a reservation.
pub(crate) struct SharingOps {
    pub(crate) new_batch: fn(&(dyn Any + Send + Sync)) -> Option<Box<dyn Any>>,
    pub(crate) send_batch: fn(Box<dyn Any>) -> Result<(), WireFailure>,
    pub(crate) reserve: fn(&(dyn Any + Send + Sync), Duration) -> Option<Opening>,
}

impl SharingOps {
    pub(crate) fn of<A: RemoteActor>() -> Self {
        Self {
            new_batch: |r| {
                r.downcast_ref::<odeon::ActorRef<A>>()
                    .map(|r| Box::new(DetachedBatch::new(r)) as Box<dyn Any>)
            },
            send_batch: |b| match b.downcast::<DetachedBatch<A>>() {
                Ok(b) => b.send().map_err(|e| match e {
                    BatchError::Full => WireFailure::Full,
                    BatchError::Stopped => WireFailure::Stopped,
                    other => WireFailure::Rejected(format!("on the serving node: {other}")),
                }),
                Err(_) => Err(WireFailure::Rejected("not a batch".into())),
            },
            reserve: |r, lease| {
                let r = r.downcast_ref::<odeon::ActorRef<A>>()?.clone();
                Some(Box::pin(async move {
                    r.reserve()
                        .lease(lease)
                        .await
                        .map(|held| Arc::new(held) as Arc<dyn Any + Send + Sync>)
                }))
            },
        }
    }
}
