//! Mailboxes: lock-free MPSC queues whose push also decides scheduling.
//!
//! # Types
//! - [`queue::Queue`]: the intrusive queue (Vyukov's, with an embedded stub) plus an
//!   EMPTY mark in the low bit of its head (Pony's `messageq`). The head, which every
//!   sender writes, is a separate [`queue::Head`], so that the cell can keep it away
//!   from the lines its turn works on.
//! - [`node`]: one heap node per message with a static vtable; signals (restart, GC
//!   check, child events) and notices (`Terminated`) are nodes too, so all of an
//!   actor's input is one FIFO. Only user messages count against a bound.
//! - [`alloc`]: where nodes come from: first a per-thread stack of recycled nodes of
//!   the same size (`recycle`), then mimalloc.
//!
//! # The scheduling protocol
//! An actor is on a run queue **iff** its mailbox is not marked empty (or it is running).
//! 1. `tell` pushes a node. The push is one `swap`; if it found the EMPTY mark it
//!    returns [`queue::Push::WasEmpty`], and that sender, and only it, schedules the
//!    actor.
//! 2. A worker runs the actor's turn: it pops and delivers up to `budget` nodes.
//! 3. With mail left, the actor goes to the back of a run queue (fairness).
//! 4. With none, the worker tries [`queue::Queue::mark_empty`] (a CAS that succeeds only
//!    if nothing was pushed meanwhile). Success ends the turn; failure means a push got
//!    in, so the worker keeps the actor and pops again.
//!
//! So a message costs one atomic RMW to send and none to receive, and a busy actor is
//! never scheduled twice. An actor awaiting an async handler ends its turn *without*
//! marking the mailbox empty: senders then never schedule it, and the future's waker
//! does (see `cell/`).
//!
//! # Why hand-written
//! crossbeam's queues cannot say "the queue was empty" atomically with the push, so a
//! runtime built on them needs a second atomic (a scheduled flag) per message and a
//! fence to close the race between the two. `benches/core.rs` (`mailbox/*`) measures the
//! difference against `crossbeam_queue::SegQueue` plus such a flag.

pub(crate) mod alloc;
pub(crate) mod chain;
pub(crate) mod job;
pub(crate) mod node;
pub(crate) mod queue;
mod recycle;

#[doc(hidden)]
pub use node::{NodeVTable, NodeVTables};
