//! The local registry: actors found by name within one system, no node needed.
//!
//! # What an entry holds
//! A name maps to a type-erased strong [`ActorRef`] (as `Box<dyn Any>`) and a stop
//! watch on the actor. The strong ref means a registered actor is not collected when
//! its other refs are dropped: a service registered by name and found later by name
//! lives, as a registered process does in Erlang and as `odeon-remote`'s cluster
//! registry already behaves. It lives until it stops or its name is unregistered
//! (after which it is collected as usual if nothing else refers to it). The watch
//! frees the name as soon as the actor stops, whatever the reason, so a stopped
//! actor's name can be taken again; `lookup` also treats an entry whose actor has
//! stopped as absent, which covers the moment between the stop and the watch
//! firing.
//!
//! The strong ref makes a cycle (system → registry → actor → system) that the stop
//! watch breaks: every actor stops at the latest at shutdown, and its entry goes then.
//!
//! # Locking
//! The map's lock is never held while the actor's own lock is taken (adding or
//! removing its watch): adding a watch to an actor that has already stopped runs the
//! watch's callback at once, on this thread, and that callback takes the map's lock.
//! Each entry carries a fresh key, so a watch that fires late never removes an entry
//! registered again under the same name since.
//!
//! A transport's cluster-wide registry can build on this one: an entry holds any
//! `ActorRef`, local or remote, and `lookup` is by name and type only.

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Weak};

use crate::refs::wait::StopWatch;
use crate::sync::Mutex;
use crate::system::SystemHandle;
use crate::{Actor, ActorId, ActorRef, System};

/// Why [`System::register`] refused a name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// Another actor (or the same one) is registered under this name; unregister it
    /// first, or wait for that actor to stop.
    #[error("the name {0:?} is already registered")]
    NameTaken(String),
    /// The actor has stopped: a stopped actor cannot hold a name.
    #[error("{0} has stopped and cannot be registered")]
    Stopped(ActorId),
}

type Names = Mutex<HashMap<String, Entry>>;

struct Entry {
    /// Distinguishes this registration from a later one under the same name.
    key: ActorId,
    /// An `ActorRef<A>` for the registered actor's `A` (strong: see the module docs).
    actor: Box<dyn Any + Send + Sync>,
    /// Whether that actor has stopped (the stop watch may not have fired yet).
    stopped: Box<dyn Fn() -> bool + Send + Sync>,
    /// `None` until installed (it is added outside the map's lock), and after it fired.
    watch: Option<StopWatch>,
}

/// The names of one system.
pub(crate) struct Registry {
    names: Arc<Names>,
}

impl Default for Registry {
    fn default() -> Self {
        Self {
            names: Arc::new(Mutex::new(HashMap::new())),
        }
    }
}

impl Registry {
    fn register<A: Actor>(&self, name: String, actor: &ActorRef<A>) -> Result<(), RegistryError> {
        if !actor.is_alive() {
            return Err(RegistryError::Stopped(actor.id()));
        }
        let key = ActorId::next();
        let probe = actor.downgrade();
        {
            let mut names = self.names.lock();
            if let Some(old) = names.get(&name) {
                if !(old.stopped)() {
                    return Err(RegistryError::NameTaken(name));
                }
            }
            let entry = Entry {
                key,
                actor: Box::new(actor.clone()),
                stopped: Box::new(move || !probe.is_alive()),
                watch: None,
            };
            // A stopped holder's entry is replaced; its watch (if it has not fired)
            // is cancelled below, outside the lock.
            let old = names.insert(name.clone(), entry);
            drop(names);
            if let Some(watch) = old.and_then(|o| o.watch) {
                watch.cancel();
            }
        }
        let names = Arc::downgrade(&self.names);
        let freed = name.clone();
        let notify = Box::new(move |_: crate::Terminated| free(&names, &freed, key));
        let watch = match actor.local() {
            Some(cell) => StopWatch::local(cell.clone(), notify),
            None => match actor.endpoint() {
                Some(endpoint) => StopWatch::remote(endpoint.clone(), notify),
                None => unreachable!("a ref is local or remote"),
            },
        };
        let mut names = self.names.lock();
        match names.get_mut(&name) {
            // Still ours: the watch has not fired (the actor is alive, or stops now and
            // its callback waits for this lock, then removes the entry).
            Some(entry) if entry.key == key => entry.watch = Some(watch),
            // The watch fired already (the actor stopped meanwhile): nothing to keep.
            _ => {}
        }
        Ok(())
    }

    fn lookup<A: Actor>(&self, name: &str) -> Option<ActorRef<A>> {
        let names = self.names.lock();
        names
            .get(name)?
            .actor
            .downcast_ref::<ActorRef<A>>()
            .filter(|actor| actor.is_alive())
            .cloned()
    }

    fn unregister(&self, name: &str) -> bool {
        let removed = self.names.lock().remove(name);
        match removed {
            Some(entry) => {
                let stopped = (entry.stopped)();
                if let Some(watch) = entry.watch {
                    watch.cancel();
                }
                !stopped
            }
            None => false,
        }
    }

    fn names(&self) -> Vec<String> {
        let names = self.names.lock();
        let mut out: Vec<String> = names
            .iter()
            .filter(|(_, e)| !(e.stopped)())
            .map(|(n, _)| n.clone())
            .collect();
        out.sort();
        out
    }
}

/// The watch of registration `key` fired: its actor stopped. Frees the name unless it
/// was registered again since.
fn free(names: &Weak<Names>, name: &str, key: ActorId) {
    let Some(names) = names.upgrade() else {
        return;
    };
    let mut names = names.lock();
    if names.get(name).is_some_and(|e| e.key == key) {
        let entry = names.remove(name);
        drop(names);
        // The watch has fired: dropping it cancels nothing.
        drop(entry);
        tracing::trace!(name, "registered actor stopped; name freed");
    }
}

impl SystemHandle {
    /// Registers `actor` under `name` in this system's local registry, so that any
    /// code holding the system (a handler through
    /// [`Context::system`](crate::Context::system)) can find it with
    /// [`SystemHandle::lookup`].
    ///
    /// The name stays taken until [`SystemHandle::unregister`] or until the actor
    /// stops, whatever the reason: a stopped actor's name is freed by itself. The
    /// registry holds a strong reference: a registered actor is not collected when
    /// its other refs are dropped, so a service can be registered and found later by
    /// name alone. After [`SystemHandle::unregister`], an actor nobody else refers to
    /// is collected as usual.
    ///
    /// # Errors
    /// [`RegistryError::NameTaken`] if a live actor holds the name (even the same
    /// actor), [`RegistryError::Stopped`] if `actor` has stopped.
    pub fn register<A: Actor>(
        &self,
        name: impl Into<String>,
        actor: &ActorRef<A>,
    ) -> Result<(), RegistryError> {
        self.shared.registry.register(name.into(), actor)
    }

    /// The actor registered under `name`, if there is one, it has not stopped, and it
    /// is an `A`. A name held by an actor of another type gives `None`, as an unknown
    /// name does: names are looked up by name *and* type.
    pub fn lookup<A: Actor>(&self, name: &str) -> Option<ActorRef<A>> {
        self.shared.registry.lookup(name)
    }

    /// Frees `name`. Returns whether a live actor held it.
    pub fn unregister(&self, name: &str) -> bool {
        self.shared.registry.unregister(name)
    }

    /// The names held by live actors, sorted.
    pub fn registered_names(&self) -> Vec<String> {
        self.shared.registry.names()
    }
}

impl System {
    /// Registers `actor` under `name`: see [`SystemHandle::register`].
    ///
    /// ```
    /// use odeon::{Actor, RegistryError, System};
    ///
    /// struct Logger;
    /// impl Actor for Logger {}
    /// struct Other;
    /// impl Actor for Other {}
    ///
    /// let system = System::new();
    /// let logger = system.spawn(Logger);
    /// system.register("logger", &logger).unwrap();
    /// assert_eq!(system.lookup::<Logger>("logger"), Some(logger.clone()));
    /// // Wrong type: not found.
    /// assert!(system.lookup::<Other>("logger").is_none());
    /// // Taken until unregistered or stopped.
    /// let other = system.spawn(Logger);
    /// assert_eq!(
    ///     system.register("logger", &other),
    ///     Err(RegistryError::NameTaken("logger".into())),
    /// );
    /// logger.stop();
    /// system.block_on(logger.wait_stopped());
    /// assert!(system.lookup::<Logger>("logger").is_none());
    /// system.register("logger", &other).unwrap();
    /// ```
    ///
    /// # Errors
    /// As [`SystemHandle::register`].
    pub fn register<A: Actor>(
        &self,
        name: impl Into<String>,
        actor: &ActorRef<A>,
    ) -> Result<(), RegistryError> {
        self.handle().register(name, actor)
    }

    /// The actor registered under `name`: see [`SystemHandle::lookup`].
    pub fn lookup<A: Actor>(&self, name: &str) -> Option<ActorRef<A>> {
        self.handle().lookup(name)
    }

    /// Frees `name`: see [`SystemHandle::unregister`].
    pub fn unregister(&self, name: &str) -> bool {
        self.handle().unregister(name)
    }

    /// The names held by live actors, sorted.
    pub fn registered_names(&self) -> Vec<String> {
        self.handle().registered_names()
    }
}
