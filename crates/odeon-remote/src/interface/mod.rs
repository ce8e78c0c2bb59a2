//! Remote interfaces: which messages an actor type accepts from other nodes, under
//! which stable wire names, and how each is encoded.
//!
//! Declared once per actor type with [`remote_actor!`](crate::remote_actor). The macro
//! checks at compile time that every listed message and its reply are
//! `Serialize + Deserialize` and that the actor handles the message; the interface it
//! builds is what a node uses to encode a tell or ask to a remote ref and to decode and
//! deliver one that arrives.
//!
//! A message type the actor handles but that is not listed stays local-only: sending it
//! through a ref to a remote actor fails with `TellError::NotRemote` (the message comes
//! back), and an unknown wire name arriving from the network is refused and logged.

mod entry;
mod mobility;
mod object;
mod sharing;

use std::any::{Any, TypeId};
use std::fmt;

use odeon::remote::RefCodec;
use odeon::{ActorId, ActorRef, RemoteActor, Terminated};

use crate::wire::{Outcome, WireFailure};

pub use entry::MessageEntry;
pub(crate) use entry::{DecodeReply, ReplyRoute, SharedCodec, WireUse, ask_error};
pub use mobility::Mobility;
pub use object::{ObjectEntry, ObjectInterface};
pub(crate) use sharing::{SharingOps, WireReply};

/// The remote interface of one actor type (built by `remote_actor!`).
pub struct Interface {
    pub(crate) actor_type: &'static str,
    pub(crate) type_id: TypeId,
    pub(crate) messages: Vec<MessageEntry>,
    pub(crate) ops: ActorOps,
    /// How actors of this type move (`None` for `remote_actor!`).
    pub(crate) mobility: Option<&'static Mobility>,
}

/// A local actor's ref, erased (an `ActorRef<A>` inside).
pub(crate) type ErasedRef = dyn Any + Send + Sync;
type Notify = Box<dyn FnOnce(Terminated) + Send>;

/// What a node does to an actor of this type, monomorphized for it.
pub(crate) struct ActorOps {
    pub(crate) stop: fn(&(dyn Any + Send + Sync)),
    pub(crate) stop_linked: fn(&ErasedRef, ActorId),
    pub(crate) watch: fn(&ErasedRef, Notify) -> Option<ActorId>,
    pub(crate) unwatch: fn(&(dyn Any + Send + Sync), ActorId),
    pub(crate) id: fn(&(dyn Any + Send + Sync)) -> Option<u64>,
    pub(crate) into_shared: fn(Box<dyn Any + Send>) -> Option<Box<ErasedRef>>,
    pub(crate) from_endpoint:
        fn(std::sync::Arc<dyn odeon::remote::Endpoint>) -> Box<dyn Any + Send>,
    pub(crate) clone_ref: fn(&(dyn Any + Send + Sync)) -> Box<dyn Any + Send>,
    /// Batches and reservations from other nodes (issue 16).
    pub(crate) sharing: SharingOps,
}

impl Interface {
    /// Builds the interface of `A` from its message entries. Used by `remote_actor!`.
    ///
    /// # Panics
    /// If two entries share a wire name or a message type: a declaration error that
    /// would make decoding ambiguous.
    pub fn new<A: RemoteActor>(messages: Vec<MessageEntry>) -> Self {
        for (i, m) in messages.iter().enumerate() {
            for n in &messages[i + 1..] {
                assert!(
                    m.wire_name != n.wire_name && m.type_id != n.type_id,
                    "{}: message {} is declared twice",
                    A::TYPE_NAME,
                    m.wire_name
                );
            }
        }
        Self {
            actor_type: A::TYPE_NAME,
            type_id: TypeId::of::<A>(),
            messages,
            ops: ActorOps {
                stop: |r| {
                    if let Some(r) = r.downcast_ref::<ActorRef<A>>() {
                        r.stop();
                    }
                },
                stop_linked: |r, failed| {
                    if let Some(r) = r.downcast_ref::<ActorRef<A>>() {
                        odeon::remote::stop_linked(r, failed);
                    }
                },
                watch: |r, notify| {
                    r.downcast_ref::<ActorRef<A>>()
                        .and_then(|r| odeon::remote::watch_local(r, notify))
                },
                unwatch: |r, key| {
                    if let Some(r) = r.downcast_ref::<ActorRef<A>>() {
                        odeon::remote::unwatch_local(r, key);
                    }
                },
                id: |r| r.downcast_ref::<ActorRef<A>>().map(|r| r.id().as_u64()),
                into_shared: |b| {
                    b.downcast::<ActorRef<A>>()
                        .ok()
                        .map(|r| r as Box<dyn Any + Send + Sync>)
                },
                from_endpoint: |ep| Box::new(ActorRef::<A>::from_endpoint(ep)),
                clone_ref: |r| match r.downcast_ref::<ActorRef<A>>() {
                    Some(r) => Box::new(r.clone()),
                    None => Box::new(()),
                },
                sharing: SharingOps::of::<A>(),
            },
            mobility: None,
        }
    }

    /// This interface, for a mobile type. Used by `mobile_actor!`, which is how it
    /// should be built:
    ///
    /// ```
    /// use odeon::{Actor, Context, Handler, Message, RemoteActor};
    /// use odeon_remote::interface::Interface;
    /// use serde::{Deserialize, Serialize};
    /// #[derive(Serialize, Deserialize)]
    /// struct Rover;
    /// impl Actor for Rover {}
    /// #[derive(Serialize, Deserialize)]
    /// struct Ping;
    /// impl Message for Ping { type Reply = (); }
    /// impl Handler<Ping> for Rover { fn handle(&mut self, _: Ping, _: &mut Context<Self>) {} }
    /// odeon_remote::mobile_actor!(Rover = "doc.Rover" { Ping = "doc.Ping" });
    /// let interface = Rover::interface().downcast_ref::<Interface>().unwrap();
    /// assert_eq!(interface.actor_type(), "doc.Rover");
    /// ```
    pub fn with_mobility(mut self, mobility: &'static Mobility) -> Self {
        self.mobility = Some(mobility);
        self
    }

    /// The actor type's wire name.
    pub fn actor_type(&self) -> &'static str {
        self.actor_type
    }

    /// The wire names of the messages, in declaration order.
    pub fn message_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.messages.iter().map(|m| m.wire_name)
    }

    pub(crate) fn by_type(&self, type_id: TypeId) -> Option<&MessageEntry> {
        self.messages.iter().find(|m| m.type_id == type_id)
    }

    pub(crate) fn by_name(&self, wire_name: &str) -> Option<&MessageEntry> {
        self.messages.iter().find(|m| m.wire_name == wire_name)
    }

    /// The interface of `A`, as its `RemoteActor` impl published it.
    pub(crate) fn of(any: &'static (dyn Any + Send + Sync)) -> Option<&'static Interface> {
        any.downcast_ref::<Interface>()
    }
}

impl fmt::Debug for Interface {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Interface")
            .field("actor_type", &self.actor_type)
            .field("messages", &self.message_names().collect::<Vec<_>>())
            .finish()
    }
}

/// Encodes `value` with postcard, with `codec` resolving the refs inside it.
pub(crate) fn encode_with<T: serde::Serialize>(
    value: &T,
    codec: &(dyn RefCodec + 'static),
) -> Result<Vec<u8>, String> {
    odeon::remote::with_codec(codec, || postcard::to_stdvec(value)).map_err(|e| e.to_string())
}

/// Decodes exactly one `T` (trailing bytes are an error), resolving refs with `codec`.
pub(crate) fn decode_with<T: serde::de::DeserializeOwned>(
    bytes: &[u8],
    codec: &(dyn RefCodec + 'static),
) -> Result<T, String> {
    odeon::remote::with_codec(codec, || match postcard::take_from_bytes::<T>(bytes) {
        Ok((v, [])) => Ok(v),
        Ok((_, rest)) => Err(format!("{} trailing bytes", rest.len())),
        Err(e) => Err(e.to_string()),
    })
}

/// Encodes a message handed over erased (an `M` inside): a message entry's `encode`.
pub(crate) fn encode_erased<M: serde::Serialize + 'static>(
    msg: &(dyn Any + Send),
    codec: &(dyn RefCodec + 'static),
) -> Result<Vec<u8>, String> {
    match msg.downcast_ref::<M>() {
        Some(m) => encode_with(m, codec),
        None => Err(format!("not a {}", std::any::type_name::<M>())),
    }
}

/// Decodes a message that arrived from another node: a payload that does not decode
/// is refused, naming the message type.
pub(crate) fn decode_message<M: serde::de::DeserializeOwned>(
    payload: &[u8],
    codec: &SharedCodec,
) -> Result<M, WireFailure> {
    decode_with(payload, &**codec).map_err(|e| {
        WireFailure::Rejected(format!("malformed {}: {e}", std::any::type_name::<M>()))
    })
}

/// A reply encoded for the asking node, or why it could not be.
pub(crate) fn reply_outcome<R: serde::Serialize>(
    reply: &R,
    codec: &SharedCodec,
) -> Outcome<'static> {
    match encode_with(reply, &**codec) {
        Ok(bytes) => Outcome::Ok(bytes.into()),
        Err(e) => Outcome::Failed(WireFailure::Rejected(format!(
            "the reply did not encode: {e}"
        ))),
    }
}

/// Declares an actor type reachable from other nodes, with its stable wire name and
/// the messages it accepts remotely, each with its own wire name.
///
/// Every listed message and its reply must be `Serialize + Deserialize`, and the actor
/// must handle it: otherwise this does not compile. Refs to the actor
/// (`ActorRef<Counter>`) become serializable, so they can travel inside messages.
///
/// ```
/// use odeon::{Actor, Context, Handler, Message};
/// use serde::{Deserialize, Serialize};
///
/// struct Counter(u64);
/// impl Actor for Counter {}
///
/// #[derive(Serialize, Deserialize)]
/// struct Add(u64);
/// impl Message for Add { type Reply = u64; }
/// impl Handler<Add> for Counter {
///     fn handle(&mut self, m: Add, _: &mut Context<Self>) -> u64 { self.0 += m.0; self.0 }
/// }
///
/// odeon_remote::remote_actor!(Counter = "example.Counter" { Add = "example.Add" });
///
/// use odeon::RemoteActor;
/// assert_eq!(Counter::TYPE_NAME, "example.Counter");
/// ```
///
/// A message without `Serialize` is a compile error:
/// ```compile_fail
/// use odeon::{Actor, Context, Handler, Message};
/// struct Counter;
/// impl Actor for Counter {}
/// struct Local; // no Serialize
/// impl Message for Local { type Reply = (); }
/// impl Handler<Local> for Counter { fn handle(&mut self, _: Local, _: &mut Context<Self>) {} }
/// odeon_remote::remote_actor!(Counter = "c" { Local = "l" });
/// ```
#[macro_export]
macro_rules! remote_actor {
    ($actor:ty = $name:literal { $($msg:ty = $wire:literal),* $(,)? }) => {
        impl ::odeon::RemoteActor for $actor {
            const TYPE_NAME: &'static str = $name;
            fn interface() -> &'static (dyn ::std::any::Any + Send + Sync) {
                static INTERFACE: ::std::sync::OnceLock<$crate::interface::Interface> =
                    ::std::sync::OnceLock::new();
                INTERFACE.get_or_init(|| {
                    $crate::interface::Interface::new::<$actor>(vec![
                        $($crate::interface::MessageEntry::new::<$actor, $msg, _>($wire)),*
                    ])
                })
            }
        }
    };
}
