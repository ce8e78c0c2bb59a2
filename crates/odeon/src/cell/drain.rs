//! Stop after draining: `ActorRef::stop_gracefully`.
//!
//! Setting `DRAINING` makes every later send fail with `TellError::Stopped` (it is
//! tested on the same load as `STOPPED`), and a signal queued behind everything
//! already accepted requests the stop when the turn reaches it, so the actor handles
//! exactly what was in its mailbox (plus anything stashed and unstashed meanwhile).
//! A send that read the flags just before they changed may still land behind the
//! signal: it is accepted, then dropped at the stop like any queued message (its ask
//! fails with `Stopped`).
//!
//! A draining actor refuses to move (`NotFrozen::Stopped`, `migrate.rs`): the stop
//! signal is a closure in this node's mailbox and cannot travel with it.

use std::sync::atomic::Ordering;

use super::lifecycle::AnyCell;
use super::{Cell, DRAINING, MOVED, STOPPED};
use crate::{Actor, DrainError, StopReason};

impl<A: Actor> Cell<A> {
    pub(crate) fn is_draining(&self) -> bool {
        self.flags.load(Ordering::Acquire) & DRAINING != 0
    }

    /// Starts a drain; a second call while one runs does nothing.
    pub(crate) fn stop_gracefully(&self) -> Result<(), DrainError> {
        let flags = self.flags.load(Ordering::Acquire);
        if flags & STOPPED != 0 {
            return Err(DrainError::Stopped);
        }
        if flags & MOVED != 0 {
            // A stub would retire itself, not the actor: the drain must run where the
            // actor is, and the wire carries only stop requests.
            return Err(DrainError::NotLocal);
        }
        if self.flags.fetch_or(DRAINING, Ordering::AcqRel) & DRAINING != 0 {
            return Ok(());
        }
        // Signals bypass the bound and run in mailbox order. On a stopped cell the
        // signal is discarded with the rest of the mailbox, which is what we want.
        self.signal(|cell| AnyCell::request_stop(cell, StopReason::Normal));
        Ok(())
    }
}
