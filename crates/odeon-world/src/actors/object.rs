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
    /// The region it reports to; set by the first `Step` from a region.
    pub(crate) region: Option<ActorRef<Region>>,
}

impl Actor for ObjectActor {}

/// From the region, once per tick: the state the region resolved for this object at
/// the end of the previous tick (applied first), the object's cell summary, and where
/// to send the intent (only in the first `Step` from a region: cloning a ref per
/// object per tick costs two atomic operations on a shared counter). `slot` is echoed so that the region files the reply without a
/// lookup; it does not influence any rule.
pub(crate) struct Step {
    pub(crate) tick: u64,
    pub(crate) slot: u32,
    pub(crate) state: Obj,
    pub(crate) summary: CellSummary,
    pub(crate) region: Option<ActorRef<Region>>,
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
        if msg.region.is_some() {
            self.region = msg.region;
        }
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
