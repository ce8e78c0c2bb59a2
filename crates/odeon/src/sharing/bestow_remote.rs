//! Bestowed handles across nodes: uses of an object whose owner is on another node,
//! and the handle's wire form (feature `serde`).
//!
//! A use travels as a message to the owner's node (the transport's
//! [`ObjectEndpoint`]); there it becomes an ordinary local use, run inside the
//! owner's turn. The reply of an ask comes back as a `Result<M::Reply, BestowError>`,
//! so a revoke or the owner's stop there reads as it would here.

use std::any::TypeId;

use tokio::sync::oneshot;

use super::BestowError;
use super::bestow::BestowedAsk;
use crate::remote::{ObjectEndpoint, Outgoing, Refusal, ReplySlot};
use crate::{AskError, Message};

fn outgoing<M: Message>(msg: M, reply: Option<ReplySlot>) -> Outgoing {
    Outgoing {
        message: Box::new(msg),
        type_id: TypeId::of::<M>(),
        type_name: std::any::type_name::<M>(),
        reply,
    }
}

fn refusal(why: &Refusal) -> BestowError {
    match why {
        Refusal::Stopped => BestowError::OwnerStopped,
        Refusal::Unreachable | Refusal::Full => BestowError::Unreachable,
        _ => BestowError::NotRemote,
    }
}

/// The error code a use's failure travels as (`BestowError` is not serializable).
#[doc(hidden)]
pub fn error_code(e: BestowError) -> u8 {
    match e {
        BestowError::Revoked => 1,
        _ => 0,
    }
}

/// The error a code read back stands for.
#[doc(hidden)]
pub fn error_from_code(code: u8) -> BestowError {
    match code {
        1 => BestowError::Revoked,
        _ => BestowError::OwnerStopped,
    }
}

pub(super) fn tell<M: Message>(ep: &dyn ObjectEndpoint, msg: M) -> Result<(), BestowError> {
    ep.send(outgoing(msg, None))
        .map_err(|(why, _)| refusal(&why))
}

pub(super) fn ask<M: Message>(ep: &dyn ObjectEndpoint, msg: M) -> BestowedAsk<M::Reply> {
    let (tx, rx) = oneshot::channel::<Result<M::Reply, BestowError>>();
    let slot = ReplySlot::from_fn(move |res| {
        let out = match res {
            Ok(value) => match value.downcast::<Result<M::Reply, BestowError>>() {
                Ok(v) => *v,
                Err(_) => Err(BestowError::NotRemote),
            },
            Err(AskError::Stopped) => Err(BestowError::OwnerStopped),
            Err(AskError::NotRemote | AskError::Rejected(_)) => Err(BestowError::NotRemote),
            Err(_) => Err(BestowError::Unreachable),
        };
        let _ = tx.send(out);
    });
    match ep.send(outgoing(msg, Some(slot))) {
        Ok(()) => BestowedAsk::waiting(rx),
        Err((why, _)) => BestowedAsk::failed(refusal(&why)),
    }
}

#[cfg(feature = "serde")]
mod wire {
    use serde::de::Error as _;
    use serde::ser::Error as _;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::super::Bestowed;
    use super::super::bestow::Handle;
    use crate::refs::serde::serde_bytes_like;
    use crate::remote::{ImportedObject, RemoteObject, current_codec};

    const NO_CODEC: &str = "a Bestowed can only be (de)serialized by an odeon-remote node";

    impl<T: RemoteObject> Serialize for Bestowed<T> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let wire = current_codec(|codec| {
                let codec = codec.ok_or_else(|| NO_CODEC.to_string())?;
                match &self.handle {
                    Handle::Local(_) => codec.export_object(
                        T::TYPE_NAME,
                        T::interface(),
                        Some(Box::new(self.clone())),
                        None,
                    ),
                    Handle::Remote(ep) => {
                        codec.export_object(T::TYPE_NAME, T::interface(), None, Some(ep))
                    }
                }
            })
            .map_err(S::Error::custom)?;
            serializer.serialize_bytes(&wire)
        }
    }

    impl<'de, T: RemoteObject> Deserialize<'de> for Bestowed<T> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            let wire: Vec<u8> = serde_bytes_like(deserializer)?;
            current_codec(|codec| {
                let codec = codec.ok_or_else(|| NO_CODEC.to_string())?;
                match codec.import_object(&wire, T::TYPE_NAME, T::interface())? {
                    ImportedObject::Remote(ep) => Ok(Bestowed {
                        handle: Handle::Remote(ep),
                    }),
                    ImportedObject::Local(any) => any
                        .downcast::<Bestowed<T>>()
                        .map(|b| *b)
                        .map_err(|_| format!("not a Bestowed<{}>", T::TYPE_NAME)),
                }
            })
            .map_err(D::Error::custom)
        }
    }
}
