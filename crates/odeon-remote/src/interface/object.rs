//! Remote interfaces of bestowed objects: which messages an object type serves to
//! handles on other nodes ([`remote_object!`](crate::remote_object)).

use std::any::{Any, TypeId};
use std::fmt;

use odeon::remote::{RemoteObject, bestow_error_code, bestow_error_from_code};
use odeon::{Bestowed, Message, Serve};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::entry::{DecodeReply, Encode, ReplyRoute, SharedCodec, WireUse};
use super::{decode_message, decode_with, encode_erased, reply_outcome};
use crate::wire::WireFailure;

/// Decodes a use and runs it through the local handle (a `Bestowed<T>`): a `Deliver`
/// whose target is the handle.
pub(crate) type ServeUse = super::entry::Deliver;

/// One message an object type serves remotely. Built by `remote_object!`.
pub struct ObjectEntry {
    pub(crate) wire_name: &'static str,
    pub(crate) type_id: TypeId,
    pub(crate) encode: Encode,
    pub(crate) decode_reply: DecodeReply,
    pub(crate) serve: ServeUse,
}

impl ObjectEntry {
    /// The entry for message `M` served by `T`, under `wire_name`. The bounds are
    /// the compile-time check.
    pub fn new<T, M>(wire_name: &'static str) -> Self
    where
        T: RemoteObject + Serve<M>,
        M: Message + Serialize + DeserializeOwned,
        M::Reply: Serialize + DeserializeOwned,
    {
        Self {
            wire_name,
            type_id: TypeId::of::<M>(),
            encode: encode_erased::<M>,
            // The owner's node answers `Result<Reply, code>` (see `serve`).
            decode_reply: |bytes, codec| {
                decode_with::<Result<M::Reply, u8>>(bytes, codec)
                    .map(|r| Box::new(r.map_err(bestow_error_from_code)) as Box<dyn Any + Send>)
            },
            serve: serve::<T, M>,
        }
    }
}

impl ObjectEntry {
    /// What a node needs to send it (see `node/sharing.rs`, `send_use`).
    pub(crate) fn wire(&self) -> WireUse {
        (self.wire_name, self.encode, self.decode_reply)
    }
}

impl fmt::Debug for ObjectEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectEntry")
            .field("wire_name", &self.wire_name)
            .finish()
    }
}

fn serve<T, M>(
    object: &(dyn Any + Send + Sync),
    payload: &[u8],
    reply: Option<ReplyRoute>,
    codec: &SharedCodec,
) -> Result<(), WireFailure>
where
    T: RemoteObject + Serve<M>,
    M: Message + Serialize + DeserializeOwned,
    M::Reply: Serialize + DeserializeOwned,
{
    let Some(handle) = object.downcast_ref::<Bestowed<T>>() else {
        return Err(WireFailure::Rejected(format!("not a {}", T::TYPE_NAME)));
    };
    let msg: M = decode_message(payload, codec)?;
    let Some(route) = reply else {
        // A use that fails here (owner stopped, revoked) is dropped, as a tell is.
        return handle.tell(msg).map_err(|_| WireFailure::Stopped);
    };
    let ask = handle.ask(msg);
    let codec = codec.clone();
    crate::inline::run(async move {
        let res: Result<M::Reply, u8> = ask.await.map_err(bestow_error_code);
        route(reply_outcome(&res, &codec));
    });
    Ok(())
}

/// The remote interface of one object type (built by `remote_object!`).
pub struct ObjectInterface {
    pub(crate) type_name: &'static str,
    pub(crate) entries: Vec<ObjectEntry>,
    /// Whether a `Bestowed<T>` (erased) is still worth keeping exported: usable, or
    /// revoked (so that a use still reads `Revoked`, not `OwnerStopped`).
    pub(crate) usable: fn(&(dyn Any + Send + Sync)) -> bool,
    /// The owner's id of a `Bestowed<T>` (erased).
    pub(crate) owner: fn(&(dyn Any + Send + Sync)) -> Option<u64>,
    /// A clone of a `Bestowed<T>` (erased), boxed.
    pub(crate) clone_local: fn(&(dyn Any + Send + Sync)) -> Option<Box<dyn Any + Send>>,
}

impl ObjectInterface {
    /// Builds the interface of `T`. Used by `remote_object!`.
    ///
    /// # Panics
    /// If two entries share a wire name or a message type.
    pub fn new<T: RemoteObject>(entries: Vec<ObjectEntry>) -> Self {
        for (i, m) in entries.iter().enumerate() {
            for n in &entries[i + 1..] {
                assert!(
                    m.wire_name != n.wire_name && m.type_id != n.type_id,
                    "{}: message {} is declared twice",
                    T::TYPE_NAME,
                    m.wire_name
                );
            }
        }
        Self {
            type_name: T::TYPE_NAME,
            entries,
            // Revoked handles are kept (their object is gone; a use reads `Revoked`).
            usable: |b| {
                b.downcast_ref::<Bestowed<T>>()
                    .is_some_and(|b| b.is_usable() || b.is_revoked())
            },
            owner: |b| b.downcast_ref::<Bestowed<T>>().map(|b| b.owner().as_u64()),
            clone_local: |b| {
                b.downcast_ref::<Bestowed<T>>()
                    .map(|b| Box::new(b.clone()) as Box<dyn Any + Send>)
            },
        }
    }

    /// The object type's wire name.
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }

    pub(crate) fn by_type(&self, type_id: TypeId) -> Option<&ObjectEntry> {
        self.entries.iter().find(|m| m.type_id == type_id)
    }

    pub(crate) fn by_name(&self, wire_name: &str) -> Option<&ObjectEntry> {
        self.entries.iter().find(|m| m.wire_name == wire_name)
    }

    pub(crate) fn of(any: &'static (dyn Any + Send + Sync)) -> Option<&'static ObjectInterface> {
        any.downcast_ref::<ObjectInterface>()
    }
}

impl fmt::Debug for ObjectInterface {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectInterface")
            .field("type_name", &self.type_name)
            .field("entries", &self.entries)
            .finish()
    }
}

/// Declares an object type usable through `Bestowed` handles from other nodes, with
/// its stable wire name and the messages it serves remotely (each must be `Serve`d
/// by the type and be `Serialize + Deserialize`, with its reply).
///
/// A `Bestowed<T>` of such a type is `Serialize + Deserialize`: it can travel inside
/// a remote message, and each use at another node runs inside the owner's turn at
/// the owner's node.
///
/// ```
/// use odeon::{Message, Serve};
/// use serde::{Deserialize, Serialize};
///
/// struct Cursor { items: Vec<u32>, at: usize }
/// #[derive(Serialize, Deserialize)]
/// struct Next;
/// impl Message for Next { type Reply = Option<u32>; }
/// impl Serve<Next> for Cursor {
///     fn serve(&mut self, _: Next) -> Option<u32> {
///         let item = self.items.get(self.at).copied();
///         self.at += 1;
///         item
///     }
/// }
/// odeon_remote::remote_object!(Cursor = "doc.Cursor" { Next = "doc.Next" });
///
/// use odeon::remote::RemoteObject;
/// assert_eq!(Cursor::TYPE_NAME, "doc.Cursor");
/// ```
#[macro_export]
macro_rules! remote_object {
    ($object:ty = $name:literal { $($msg:ty = $wire:literal),* $(,)? }) => {
        impl ::odeon::remote::RemoteObject for $object {
            const TYPE_NAME: &'static str = $name;
            fn interface() -> &'static (dyn ::std::any::Any + Send + Sync) {
                static INTERFACE: ::std::sync::OnceLock<$crate::interface::ObjectInterface> =
                    ::std::sync::OnceLock::new();
                INTERFACE.get_or_init(|| {
                    $crate::interface::ObjectInterface::new::<$object>(vec![
                        $($crate::interface::ObjectEntry::new::<$object, $msg>($wire)),*
                    ])
                })
            }
        }
    };
}
