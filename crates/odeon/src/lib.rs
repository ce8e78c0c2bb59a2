//! # odeon: a fast, fair, isolated actor runtime
//!
//! ```
//! use odeon::{Actor, Context, Handler, Message, System};
//!
//! struct Counter { total: u64 }
//! impl Actor for Counter {}
//!
//! struct Add(u64);
//! impl Message for Add { type Reply = u64; }
//!
//! impl Handler<Add> for Counter {
//!     fn handle(&mut self, msg: Add, _cx: &mut Context<Self>) -> u64 {
//!         self.total += msg.0;
//!         self.total
//!     }
//! }
//!
//! let system = System::new();                  // one worker per core
//! let counter = system.spawn(Counter { total: 0 });
//! counter.tell(Add(40)).unwrap();              // never blocks
//! let total = system.block_on(counter.ask(Add(2))).unwrap();
//! assert_eq!(total, 42);
//! system.shutdown();                           // kills every actor, runs its hooks
//! ```
//!
//! ## Which type do I use?
//! | I want to… | use |
//! |---|---|
//! | define an actor | [`Actor`] (+ lifecycle hooks) |
//! | define a message and its reply | [`Message`], or `#[derive(Message)]` with `#[message(reply = T)]` |
//! | handle it right away | [`Handler`] |
//! | handle it by awaiting something (an ask, a timer, I/O) | [`AsyncHandler`] |
//! | reply later (from a task or a later message) while handling others | [`DeferredHandler`], [`ReplySender`] |
//! | await something before the first message (connect, load) | [`Actor::on_start`] |
//! | talk to an actor | [`ActorRef`]: `tell`, `ask`, `send` (bounded) |
//! | wait from outside until an actor stops, and learn why | [`ActorRef::wait_stopped`] |
//! | send to myself, behind my mailbox | [`Context::notify`] |
//! | name an actor for logs and `Debug` | [`SpawnOptions::name`], [`ActorRef::name`] |
//! | find an actor by name in this process | [`System::register`], [`System::lookup`] (also on [`SystemHandle`]) |
//! | hold a ref that does not keep it alive | [`WeakActorRef`] |
//! | accept any actor that handles `M` | [`Recipient`] |
//! | spawn children, watch, link, timers, stash | [`Context`] |
//! | feed an actor from a `Stream` | [`Context::add_stream`] |
//! | restart failing actors, build supervision trees | [`Supervisor`], [`SupervisorSpec`], [`Strategy`], [`Restart`], [`Children`] |
//! | bound a mailbox or give an actor its own thread | [`SpawnOptions`] |
//! | configure workers, budget, monitor | [`SystemBuilder`] |
//! | test actors: probes, a seeded deterministic scheduler, virtual time | [`testkit`] |
//! | messages handled back to back, with no other sender in between | [`ActorRef::atomic`] / [`Batch`] |
//! | exclusive use of an actor for a while (check, then act) | [`ActorRef::reserve`] / [`Reservation`] |
//! | lend out an object an actor owns, every use on its turn | [`Context::bestow`] / [`Bestowed`] |
//!
//! ## Guarantees
//! 1. **Macro-step:** one message at a time, with `&mut self`; an async handler keeps
//!    the actor to itself until it completes.
//! 2. **Isolation without copies:** messages are `Send + 'static` and moved. An `Rc`, a
//!    `RefCell` borrow or a `&mut` in a message does not compile.
//! 3. **Fairness:** a per-turn message budget, FIFO run queues, and a monitor that
//!    rescues actors stuck behind a worker that loops or blocks.
//! 4. **FIFO per sender–receiver pair.**
//! 7. **Failure is visible:** a panic fails that actor only; watchers, links,
//!    supervisors and pending asks are told. Runtime signals (`Terminated`, link
//!    failures, supervisor and GC signals) are never refused by a bounded mailbox.
//!
//! ## Stop and kill
//! [`ActorRef::stop`] lets the message being handled finish, including an async
//! handler that is awaiting, then stops the actor; [`ActorRef::kill`] cancels an
//! awaiting async handler at once. [`System::shutdown`] kills. A synchronous handler is
//! never interrupted.
//!
//! ## Safe sharing (Encore's `atomic` and `bestow`)
//! [`ActorRef::atomic`] sends a batch of messages that the actor handles back to back;
//! [`ActorRef::reserve`] gives one holder exclusive use of an actor for a while (ask,
//! look at the reply, tell again), ended by a drop or a lease; [`Context::bestow`]
//! lends out an object an actor owns, every use running on the owner's turn. All three
//! keep macro-step and isolation, and an actor that does not use them pays nothing.
//! They work on local actors only for now: a batch or reservation of a remote actor
//! fails with a `Remote` error, and a [`Bestowed`] handle cannot cross nodes.
//!
//! ## Inside a tokio application
//! A [`System`] may be created, used, dropped and shut down inside `#[tokio::main]`
//! (either flavour) without panicking; asks are awaited directly, and
//! [`System::shutdown_async`] shuts down without blocking the executor. By default
//! odeon runs its timers and I/O on a tokio runtime of its own
//! ([`SystemBuilder::io_threads`]); [`SystemBuilder::io_handle`] puts them on the
//! application's runtime instead (and its clock, paused in tests, drives the timers).
//!
//! ## Names, and beyond one process
//! [`System::register`] and [`System::lookup`] find actors by name inside one system,
//! with no node. Across processes and machines, the companion crate `odeon-remote`
//! adds nodes: the same [`ActorRef`] reaches actors on other nodes, a cluster-wide
//! registry (`Node::register`, `Node::lookup`), remote spawn, and mobile actors that
//! move between nodes with no message lost. [`testkit`] has probes and a seeded,
//! deterministic scheduler for tests.
//!
//! ## Features
//! - `macros` (default): `#[derive(Message)]`, re-exported beside the trait, so that
//!   `use odeon::Message;` brings both (as `use serde::Serialize;` does).
//! - `mimalloc` (default): mailbox nodes come from mimalloc, which handles memory
//!   allocated on one thread and freed on another (every message between two workers)
//!   far better than glibc's malloc. Needs a C compiler; without the feature nodes come
//!   from the global allocator.
//! - `serde`: `ActorRef<A>: Serialize + Deserialize`, for odeon-remote.
//! - `observe` (off by default): an `odeon.handle` span per handled message and
//!   `odeon_*` metrics through the `metrics` facade, once switched on with
//!   `SystemBuilder::observe(true)` (module `observe`, `docs/observe.md`). Without the
//!   feature none of it is compiled.
//!
//! The derive names the reply type in an attribute; without it, the reply is `()`:
//!
#![cfg_attr(feature = "macros", doc = "```")]
#![cfg_attr(not(feature = "macros"), doc = "```ignore")]
//! use odeon::Message;
//!
//! #[derive(Message)]
//! #[message(reply = u64)]
//! struct Add(u64);
//!
//! #[derive(Message)] // type Reply = ();
//! struct Reset;
//! ```
//!
//! ## Design
//! The subsystem roots are design documents: `mailbox/` (lock-free MPSC whose push
//! decides scheduling), `cell/` (an actor's state and its turn), `scheduler/` (workers,
//! stealing, parking, the fairness monitor), `supervision/`, `sharing/` (atomic
//! batches, reservations, bestow).

#![deny(unsafe_op_in_unsafe_fn)]

mod actor;
mod cell;
pub mod defaults;
mod loom;
mod mailbox;
#[cfg(feature = "observe")]
pub mod observe;
mod refs;
mod registry;
mod scheduler;
mod sharing;
mod stream;
mod supervision;
mod sync;
mod system;
pub mod testkit;
mod timer;

pub use actor::context::Context;
pub use actor::{
    Actor, ActorId, AsyncHandler, DeferredHandler, Handler, Handles, Message, ReplySender,
    StartError, StopReason, Terminated, marker,
};
pub use cell::SpawnOptions;
/// Derives [`Message`](trait@Message); see the trait for what an impl means.
#[cfg(feature = "macros")]
pub use odeon_macros::Message;
// The seam odeon-remote implements: unstable, not for users (see the module's docs).
#[doc(hidden)]
pub use refs::remote;
pub use refs::remote::{MobileActor, RemoteActor};
pub use refs::{
    ActorRef, Ask, AskError, DrainError, Recipient, TellError, WaitStopped, WeakActorRef,
};
pub use registry::RegistryError;
pub use sharing::{
    Batch, BatchError, BestowError, Bestowed, BestowedAsk, Ended, Reservation, Reserve,
    ReserveError, Serve,
};
pub use stream::StreamHandle;
pub use supervision::{Children, Restart, Strategy, Supervisor, SupervisorSpec};
pub use system::{System, SystemBuilder, SystemHandle};
pub use timer::TimerHandle;

/// Support for the crate's own generated code. Not a public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::mailbox::{NodeVTable, NodeVTables};
}
