//! One object of the world (planet, tree or creature) as an actor.

use std::sync::Arc;

use odeon::{Actor, ActorRef, Context, Handler, Message};

use super::region::{Region, Report};
use crate::rules::{self, CellSummary, Field, Obj};

/// An object: it owns its state between ticks and decides its intent from its state
/// and its cell's summary only; it never sees another object.
pub(crate) struct ObjectActor {
    pub(crate) obj: Obj,
    pub(crate) field: Arc<Field>,
    /// The region it reports to: given at spawn, and by a [`Home`] when it moves into
    /// another region.
    pub(crate) region: Option<ActorRef<Region>>,
}

impl Actor for ObjectActor {}

/// From the region, once per tick: the state the region resolved for this object at
/// the end of the previous tick (applied first) and the object's cell summary. `slot`
/// is echoed so that the region files the reply without a lookup; it does not
/// influence any rule.
///
/// Kept to 48 bytes, so that its mailbox node (16 bytes of header) fits odeon's
/// recycled 64-byte class: the region's ref, which made it 64 (an 80-byte node from
/// the general allocator), travels in a [`Home`] only when the object changes region.
pub(crate) struct Step {
    pub(crate) tick: u64,
    pub(crate) slot: u32,
    pub(crate) state: Obj,
    pub(crate) summary: CellSummary,
    /// Whether the region waits for a [`Report`]: only for objects that decide
    /// ([`rules::decides`]); the intent of a tree or a planet is always `Stay`, so the
    /// region files it itself and the `Step` is a one-way tell.
    pub(crate) report: bool,
}

impl Message for Step {
    type Reply = ();
}

impl Handler<Step> for ObjectActor {
    fn handle(&mut self, msg: Step, cx: &mut Context<Self>) {
        self.obj = msg.state;
        if !msg.report {
            return;
        }
        let intent = rules::decide(&self.obj, msg.summary, &self.field, msg.tick);
        let report = Report {
            tick: msg.tick,
            slot: msg.slot,
            obj: self.obj,
            intent,
        };
        let sent = self.region.as_ref().map(|r| r.tell(report).is_ok());
        if sent != Some(true) {
            // The region is gone: the world is being shut down.
            cx.stop();
        }
    }
}

/// From a region an object moved into, before its first [`Step`] there: where to send
/// its reports from now on. (Objects spawned by a region get its ref at spawn.)
pub(crate) struct Home(pub(crate) ActorRef<Region>);

impl Message for Home {
    type Reply = ();
}

impl Handler<Home> for ObjectActor {
    fn handle(&mut self, msg: Home, _cx: &mut Context<Self>) {
        self.region = Some(msg.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_fits_the_recycled_node_class() {
        // odeon recycles nodes of up to 64 bytes; a node is a 16-byte header (queue
        // link and vtable pointer) and the message. A `Step` of more than 48 bytes
        // goes to the general allocator for every object and tick.
        assert!(
            std::mem::size_of::<Step>() <= 48,
            "{}",
            std::mem::size_of::<Step>()
        );
    }
}
