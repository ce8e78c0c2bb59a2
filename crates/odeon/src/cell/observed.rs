//! A delivery with its `odeon.handle` span and metrics (feature `observe`, switched on).
//!
//! Out of line and cold on purpose: the turn's hot loop keeps only the branch on the
//! switch, with no guard object, drop flag or unwinding cleanup of its own for the span.
//! (A guard local in the loop measured slower on Savina Counting with the switch off
//! than this, on a loaded machine: `docs/observe.md`.)

use std::ptr::NonNull;
use std::sync::atomic::Ordering;

use super::{Cell, RUNNING};
use crate::Actor;
use crate::mailbox::node::{Delivered, Header, Kind, NodeVTable};

impl<A: Actor> Cell<A> {
    /// Delivers `node` inside its span, timing the handler (for an async handler, up
    /// to its first suspension). Returns `true` if an async handler is now pending
    /// and the turn must park.
    ///
    /// # Safety
    /// As for `vtable.deliver` in the turn: the node came from this cell's mailbox or
    /// held queue, is of this vtable's type, and no borrow of state/context is live.
    #[cold]
    #[inline(never)]
    pub(super) unsafe fn deliver_observed(
        &self,
        node: NonNull<Header<A>>,
        vtable: &'static NodeVTable<A>,
    ) -> bool {
        let actor = std::any::type_name::<A>();
        self.obs.count_handled();
        // Only user messages have a sender that counted them and may have traced them.
        let parent = if vtable.kind == Kind::User {
            let (depth, parent) = self.obs.taking(node.as_ptr() as usize);
            // SAFETY: on the actor's own turn (exclusive, see `cell/mod.rs`); no other borrow of this field is live.
            unsafe { self.life() }.obs.depth(actor, depth);
            parent
        } else {
            None
        };
        // Dropped on return or unwind: span exited (on unwind, time recorded too).
        let mut handling =
            crate::observe::Handling::begin(actor, self.name(), (vtable.message)(), parent);
        // SAFETY: on the actor's own turn (exclusive, see `cell/mod.rs`); no other borrow of this field is live.
        let start = unsafe { self.life() }.obs.start();
        handling.started(actor, start);
        // SAFETY: caller contract.
        let pending = match unsafe { (vtable.deliver)(node, self) } {
            Delivered::Done => false,
            Delivered::Suspended(fut) => {
                // As the turn does for an unobserved delivery (`turn.rs`).
                // SAFETY: on the actor's own turn (exclusive, see `cell/mod.rs`); no other borrow of this field is live.
                unsafe { *self.pending.get() = Some(fut) };
                self.wake.store(RUNNING, Ordering::Release);
                self.poll_pending().is_pending()
            }
        };
        // Recorded inside the span, as a recorder that reads span context expects.
        // SAFETY: on the actor's own turn (exclusive, see `cell/mod.rs`); the handler returned, so no other borrow of this field is live.
        unsafe { self.life() }.obs.handled(actor, start);
        handling.finish();
        pending
    }

    /// The turn did something between two handlers other than handle a message (see
    /// `observe/handling.rs`): the next handler's time starts at its own clock read.
    #[inline]
    pub(super) fn observe_gap(&self) {
        if self.shared.config.observe {
            // SAFETY: on the actor's own turn (caller: `turn.rs`); no other borrow of this field is live.
            unsafe { self.life() }.obs.gap();
        }
    }
}

impl<A: Actor> Cell<A> {
    /// A user message node is about to enter the mailbox (observing systems only).
    pub(crate) fn observe_send(&self, node: NonNull<Header<A>>) {
        self.obs.sending(node.as_ptr() as usize);
    }
}

impl<A: Actor> crate::observe::Probe for Cell<A> {
    fn obs(&self) -> &crate::observe::CellObs {
        &self.obs
    }

    fn stopping(&self) -> bool {
        self.stop_requested()
    }
}
