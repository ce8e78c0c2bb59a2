//! The one place the lock-free code takes its atomics from.
//!
//! Under `RUSTFLAGS="--cfg loom"` the same code runs on loom's model-checked atomics,
//! so `tests/loom_mailbox.rs` can explore every interleaving of the mailbox protocol.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicPtr, Ordering};

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicPtr, Ordering};
