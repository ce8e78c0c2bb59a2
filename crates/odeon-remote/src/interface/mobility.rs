//! How a node moves actors of one mobile type: encode and decode the state, install an
//! arriving actor, compare refs. Built by [`mobile_actor!`](crate::mobile_actor).

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use odeon::remote::{BirthId, RefCodec, prepare};
use odeon::{ActorRef, MobileActor, SystemHandle};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{ErasedRef, decode_with, encode_with};

/// A prepared arrival: a `Prepared<A>` and a ref to it, erased.
type Installed = (Box<dyn Any + Send>, Arc<ErasedRef>);

/// Encodes a state (`&A`, erased) with the node's codec.
type EncodeState = fn(&(dyn Any + Send), &(dyn RefCodec + 'static)) -> Result<Vec<u8>, String>;
/// Decodes a state into a boxed `A`.
type DecodeState = fn(&[u8], &(dyn RefCodec + 'static)) -> Result<Box<dyn Any + Send>, String>;

/// The transport's description of how to move actors of one type (design §1.1): its
/// state's encoding, and how to install or freeze one. Built by
/// [`mobile_actor!`](crate::mobile_actor); published by
/// [`MobileActor::mobility`](odeon::MobileActor::mobility).
pub struct Mobility {
    pub(crate) actor_type: &'static str,
    pub(crate) encode_state: EncodeState,
    pub(crate) decode_state: DecodeState,
    /// Installs a decoded state as a cell that does not run yet.
    pub(crate) prepare: fn(&SystemHandle, Box<dyn Any + Send>, BirthId) -> Option<Installed>,
    /// Runs a prepared arrival (`migrated` first).
    pub(crate) activate: fn(Box<dyn Any + Send>),
    /// Whether two erased `ActorRef<A>`s are equal.
    pub(crate) same: fn(&ErasedRef, &ErasedRef) -> bool,
    /// Stops (or kills) a local actor after what its mailbox holds (a forwarded stop).
    pub(crate) stop_in_order: fn(&ErasedRef, odeon::StopReason),
    /// Kills a local actor now (a forwarded kill).
    pub(crate) kill: fn(&ErasedRef),
    /// Moves a local actor (a forwarded `migrate_to`).
    pub(crate) migrate: fn(&ErasedRef, &crate::wire::NodeId) -> Option<crate::Migration>,
    /// The birth identity a local `ActorRef<A>`'s cell knows (an arrived actor, or a
    /// stub).
    pub(crate) identity: fn(&ErasedRef) -> Option<BirthId>,
}

impl Mobility {
    /// The mobility of `A`. The bounds are the compile-time check that its state can
    /// travel: a state that is not `Serialize + DeserializeOwned` does not compile.
    ///
    /// ```
    /// use odeon::{Actor, Context, Handler, Message, MobileActor};
    /// use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Serialize, Deserialize)]
    /// struct Counter(u64);
    /// impl Actor for Counter {}
    /// #[derive(Serialize, Deserialize)]
    /// struct Add(u64);
    /// impl Message for Add { type Reply = u64; }
    /// impl Handler<Add> for Counter {
    ///     fn handle(&mut self, m: Add, _: &mut Context<Self>) -> u64 { self.0 += m.0; self.0 }
    /// }
    /// odeon_remote::mobile_actor!(Counter = "doc.Counter" { Add = "doc.Add" });
    ///
    /// let mobility = odeon_remote::interface::Mobility::of::<Counter>();
    /// assert_eq!(mobility.actor_type(), "doc.Counter");
    /// ```
    pub fn new<A: MobileActor + Serialize + DeserializeOwned>() -> Self {
        Self {
            actor_type: A::TYPE_NAME,
            encode_state: |state, codec| match state.downcast_ref::<A>() {
                Some(a) => encode_with(a, codec),
                None => Err(format!("the state is not a {}", A::TYPE_NAME)),
            },
            decode_state: |bytes, codec| {
                decode_with::<A>(bytes, codec).map(|a| Box::new(a) as Box<dyn Any + Send>)
            },
            prepare: |system, state, birth| {
                let state = *state.downcast::<A>().ok()?;
                let prepared = prepare(system, state, birth);
                let actor: Arc<ErasedRef> = Arc::new(prepared.actor_ref());
                Some((Box::new(prepared), actor))
            },
            activate: |prepared| {
                if let Ok(p) = prepared.downcast::<odeon::remote::Prepared<A>>() {
                    p.activate();
                }
            },
            same: |a, b| match (
                a.downcast_ref::<ActorRef<A>>(),
                b.downcast_ref::<ActorRef<A>>(),
            ) {
                (Some(a), Some(b)) => a == b,
                _ => false,
            },
            stop_in_order: |r, reason| {
                if let Some(r) = r.downcast_ref::<ActorRef<A>>() {
                    odeon::remote::stop_in_order(r, reason);
                }
            },
            kill: |r| {
                if let Some(r) = r.downcast_ref::<ActorRef<A>>() {
                    r.kill();
                }
            },
            migrate: |r, to| {
                use crate::MigrateExt;
                r.downcast_ref::<ActorRef<A>>().map(|r| r.migrate_to(to))
            },
            identity: |a| {
                a.downcast_ref::<ActorRef<A>>()
                    .and_then(ActorRef::birth_identity)
            },
        }
    }

    /// The mobility `A` published (declared with [`mobile_actor!`](crate::mobile_actor)).
    ///
    /// # Panics
    /// If `A`'s `MobileActor` impl was written by hand rather than by `mobile_actor!`.
    pub fn of<A: MobileActor>() -> &'static Mobility {
        match A::mobility().downcast_ref::<Mobility>() {
            Some(m) => m,
            None => panic!("{} was not declared with mobile_actor!", A::TYPE_NAME),
        }
    }

    /// The actor type's wire name.
    pub fn actor_type(&self) -> &'static str {
        self.actor_type
    }
}

impl fmt::Debug for Mobility {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mobility")
            .field("actor_type", &self.actor_type)
            .finish()
    }
}

/// Declares a **mobile** actor type: everything [`remote_actor!`](crate::remote_actor)
/// declares (same syntax), and the actor can move between nodes with its state
/// (`migrate_to`, see [`MigrateExt`](crate::MigrateExt)). The state must be
/// `Serialize + DeserializeOwned` (a compile error otherwise); refs inside it travel
/// like refs inside messages. The messages listed are also all a stub may forward
/// after the actor left a node.
///
/// ```
/// use odeon::{Actor, Context, Handler, Message, MobileActor};
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize)]
/// struct Counter { total: u64 }
/// impl Actor for Counter {}
/// #[derive(Serialize, Deserialize)]
/// struct Add(u64);
/// impl Message for Add { type Reply = u64; }
/// impl Handler<Add> for Counter {
///     fn handle(&mut self, m: Add, _: &mut Context<Self>) -> u64 { self.total += m.0; self.total }
/// }
/// odeon_remote::mobile_actor!(Counter = "example.MobileCounter" { Add = "example.Add" });
/// assert!(Counter::mobility().is::<odeon_remote::interface::Mobility>());
/// ```
///
/// A state that does not serialize is a compile error:
/// ```compile_fail
/// use odeon::{Actor, Context, Handler, Message};
/// use serde::{Deserialize, Serialize};
/// struct Counter(std::sync::Mutex<u64>); // no Serialize
/// impl Actor for Counter {}
/// #[derive(Serialize, Deserialize)]
/// struct Add(u64);
/// impl Message for Add { type Reply = (); }
/// impl Handler<Add> for Counter { fn handle(&mut self, _: Add, _: &mut Context<Self>) {} }
/// odeon_remote::mobile_actor!(Counter = "c" { Add = "a" });
/// ```
#[macro_export]
macro_rules! mobile_actor {
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
                    .with_mobility($crate::interface::Mobility::of::<$actor>())
                })
            }
        }
        impl ::odeon::MobileActor for $actor {
            fn mobility() -> &'static (dyn ::std::any::Any + Send + Sync) {
                static MOBILITY: ::std::sync::OnceLock<$crate::interface::Mobility> =
                    ::std::sync::OnceLock::new();
                MOBILITY.get_or_init($crate::interface::Mobility::new::<$actor>)
            }
        }
    };
}
