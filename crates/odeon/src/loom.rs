//! The one place the lock-free code takes its atomics from.
//!
//! Under `RUSTFLAGS="--cfg loom"` the same code runs on loom's model-checked atomics,
//! so the `loom_tests` modules (`mailbox/queue.rs`, `cell/wake.rs`) can explore every
//! interleaving of the mailbox protocol and of a cell's freeze transitions.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicPtr, AtomicU8, Ordering};

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicPtr, AtomicU8, Ordering};
