//! The coordinator: starts every tick at every region and ends it when all reported.

use std::sync::mpsc::Sender;

use odeon::{Actor, ActorRef, Context, Handler, Message};

use super::region::{Region, Start};
use crate::rules::Obj;

/// What the coordinator reports at the end of every tick.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TickReport {
    /// The tick that ended (the first is 1).
    pub tick: u64,
    /// Wrapping sum of [`obj_hash`](crate::rules::obj_hash) over every object.
    pub checksum: u64,
    /// Objects alive at the end of the tick.
    pub objects: usize,
    /// Every object (unsorted), if a frame was asked for this tick.
    pub frame: Option<Vec<Obj>>,
}

pub(crate) struct Coordinator {
    pub(crate) regions: Vec<ActorRef<Region>>,
    /// How many regions the coordinator starts itself (the heads of the start chains,
    /// `regions[..heads]`); each region starts the next of its chain once resolved.
    heads: usize,
    pub(crate) out: Sender<TickReport>,
    tick: u64,
    last: u64,
    frame_every: u64,
    pending: usize,
    checksum: u64,
    objects: usize,
    frame: Option<Vec<Obj>>,
}

impl Coordinator {
    pub(crate) fn new(
        regions: Vec<ActorRef<Region>>,
        heads: usize,
        out: Sender<TickReport>,
    ) -> Self {
        Coordinator {
            regions,
            heads,
            out,
            tick: 0,
            last: 0,
            frame_every: 0,
            pending: 0,
            checksum: 0,
            objects: 0,
            frame: None,
        }
    }

    fn start(&mut self, cx: &mut Context<Self>) {
        self.tick += 1;
        self.pending = self.regions.len();
        self.checksum = 0;
        self.objects = 0;
        let frame = self.frame_every != 0 && self.tick.is_multiple_of(self.frame_every);
        self.frame = frame.then(Vec::new);
        for r in &self.regions[..self.heads] {
            if r.tell(Start {
                tick: self.tick,
                frame,
            })
            .is_err()
            {
                cx.fail("a region stopped during the run");
                return;
            }
        }
    }
}

impl Actor for Coordinator {}

/// From the environment: run `ticks` more ticks, with a frame every `frame_every`
/// ticks (0: none).
pub(crate) struct Run {
    pub(crate) ticks: u64,
    pub(crate) frame_every: u64,
}

impl Message for Run {
    type Reply = ();
}

impl Handler<Run> for Coordinator {
    fn handle(&mut self, msg: Run, cx: &mut Context<Self>) {
        self.last = self.tick + msg.ticks;
        self.frame_every = msg.frame_every;
        if msg.ticks > 0 {
            self.start(cx);
        }
    }
}

/// From a region: it has committed `tick`; its share of the checksum.
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct Done {
    pub(crate) tick: u64,
    pub(crate) checksum: u64,
    pub(crate) objects: usize,
    pub(crate) frame: Option<Vec<Obj>>,
}

impl Message for Done {
    type Reply = ();
}

impl Handler<Done> for Coordinator {
    fn handle(&mut self, msg: Done, cx: &mut Context<Self>) {
        debug_assert_eq!(msg.tick, self.tick);
        // Wrapping add commutes: the order regions report in does not matter.
        self.checksum = self.checksum.wrapping_add(msg.checksum);
        self.objects += msg.objects;
        if let (Some(all), Some(part)) = (&mut self.frame, msg.frame) {
            all.extend(part);
        }
        self.pending -= 1;
        if self.pending > 0 {
            return;
        }
        let report = TickReport {
            tick: self.tick,
            checksum: self.checksum,
            objects: self.objects,
            frame: self.frame.take(),
        };
        if self.out.send(report).is_err() {
            return; // nobody listens any more
        }
        if self.tick < self.last {
            self.start(cx);
        }
    }
}

// Regions on other nodes (`--nodes K`) report to the coordinator over a link.
odeon_remote::remote_actor!(Coordinator = "odeon_world.Coordinator" { Done = "odeon_world.Done" });
