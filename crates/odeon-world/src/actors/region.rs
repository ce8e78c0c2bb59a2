//! A region: a square of cells, its objects' refs, and the tick's resolution.

use std::sync::Arc;

use odeon::{Actor, ActorRef, Context, Handler, Message};

use super::coordinator::{Coordinator, Done};
use super::object::{Home, ObjectActor, Step};
use crate::rules::{self, CellSummary, Field, Intent, Obj, Origin};

/// One object of the region: the state the region committed for it last, and its ref.
pub(crate) struct Member {
    obj: Obj,
    actor: ActorRef<ObjectActor>,
    /// Moved in from another region: its next `Step` is preceded by a [`Home`] with this
    /// region's ref. (A region gives the objects it spawns its ref at spawn.)
    fresh: bool,
}

/// The eight regions around this one (the torus may make some, or all, the same
/// region): a region sends exactly one [`Border`] to each slot per tick and expects
/// exactly eight, so it knows when every emigrant has arrived.
const NEIGHBOURS: usize = 8;

/// How many members ahead of the current send a region prefetches (enough misses in
/// flight to cover memory latency, few enough not to evict what is still needed).
const PREFETCH_AHEAD: usize = 8;

pub(crate) struct Region {
    field: Arc<Field>,
    at: (u16, u16),
    neighbours: Vec<((u16, u16), ActorRef<Region>)>,
    coordinator: Option<ActorRef<Coordinator>>,
    /// The region this one starts once it has resolved a tick (its start chain).
    chain_next: Option<ActorRef<Region>>,
    members: Vec<Member>,
    tick: u64,
    frame: bool,
    reports: Vec<Option<(Obj, Intent)>>,
    outstanding: usize,
    resolved: bool,
    next: Vec<Member>,
    /// The committed members' cell summaries (what `Start` hands out), and those of
    /// `next`, kept up to date as members are filed into it: the commit then needs no
    /// pass over the members to summarise them, and `Start` only one (sending).
    summaries: Vec<CellSummary>,
    next_summaries: Vec<CellSummary>,
    /// Wrapping sum of [`rules::obj_hash`] over `next`, kept as members are filed.
    next_checksum: u64,
    borders: usize,
}

/// Buffers `resolve` fills and empties within one turn, reused from turn to turn
/// (allocation showed in profiles). One set per worker thread rather than one per
/// region: at 100,000 objects the regions' own sets were 72 bytes per object that
/// were cold again at every resolution (about one last-level miss per object and
/// tick in callgrind); a thread's set stays in cache from region to region.
#[derive(Default)]
struct Scratch {
    input: Vec<(usize, u64, u32)>,
    pairs: Vec<(Obj, Intent)>,
    actors: Vec<Option<ActorRef<ObjectActor>>>,
    out: Vec<(Obj, Origin)>,
}

thread_local! {
    /// This thread's [`Scratch`]; `resolve` takes it and puts it back (empty).
    static SCRATCH: std::cell::Cell<Scratch> = const {
        std::cell::Cell::new(Scratch {
            input: Vec::new(),
            pairs: Vec::new(),
            actors: Vec::new(),
            out: Vec::new(),
        })
    };
}

impl Region {
    pub(crate) fn new(field: Arc<Field>, at: (u16, u16)) -> Self {
        Region {
            field,
            at,
            neighbours: Vec::new(),
            coordinator: None,
            chain_next: None,
            members: Vec::new(),
            tick: 0,
            frame: false,
            reports: Vec::new(),
            outstanding: 0,
            resolved: false,
            next: Vec::new(),
            summaries: Vec::new(),
            next_summaries: Vec::new(),
            next_checksum: 0,
            borders: 0,
        }
    }

    fn local_cell(&self, o: &Obj) -> usize {
        let r = self.field.region_side as usize;
        (o.y as usize % r) * r + o.x as usize % r
    }

    /// Files a member for the next tick, counting it in the next tick's summaries and
    /// checksum while its state is in cache. Summaries and checksum are sums, so the
    /// order members are filed in (own cells, then borders as they arrive) does not
    /// matter.
    fn file_next(&mut self, member: Member) {
        let cell = self.local_cell(&member.obj);
        self.next_summaries[cell].add(&member.obj);
        self.next_checksum = self
            .next_checksum
            .wrapping_add(rules::obj_hash(&member.obj));
        self.next.push(member);
    }

    /// Makes `next` (filled, summarised) the members, and starts an empty `next`,
    /// reusing the old members' buffers (empty by now: `resolve` drained them).
    fn commit_next(&mut self) {
        debug_assert!(self.members.is_empty());
        std::mem::swap(&mut self.members, &mut self.next);
        std::mem::swap(&mut self.summaries, &mut self.next_summaries);
        let cells = self.field.region_side as usize * self.field.region_side as usize;
        self.next_summaries.clear();
        self.next_summaries.resize(cells, CellSummary::default());
        self.next_checksum = 0;
    }

    /// Resolves every cell of the region once every object has reported, in cell
    /// order and within a cell in id order, then hands emigrants to the neighbours.
    fn resolve(&mut self, cx: &mut Context<Self>) {
        let mut sc = SCRATCH.with(|s| s.take());
        let (input, pairs, actors, out) =
            (&mut sc.input, &mut sc.pairs, &mut sc.actors, &mut sc.out);
        input.clear();
        for (slot, r) in self.reports.iter().enumerate() {
            if let Some((o, _)) = r {
                input.push((self.field.cell(o.x, o.y), o.id, slot as u32));
            }
        }
        input.sort_unstable();
        pairs.clear();
        pairs.extend(
            input
                .iter()
                .filter_map(|&(_, _, s)| self.reports[s as usize]),
        );
        actors.clear();
        actors.extend(self.members.drain(..).map(|m| Some(m.actor)));
        let mut borders: Vec<Vec<Member>> = (0..NEIGHBOURS).map(|_| Vec::new()).collect();
        let mut a = 0;
        while a < pairs.len() {
            let cell = input[a].0;
            let b = a + input[a..].iter().take_while(|e| e.0 == cell).count();
            out.clear();
            rules::resolve_cell(&pairs[a..b], &self.field, self.tick, out);
            for &(obj, origin) in out.iter() {
                let actor = match origin {
                    Origin::Survivor(i) => actors[input[a + i].2 as usize].take(),
                    Origin::Born => Some(cx.system().spawn(ObjectActor {
                        obj,
                        field: self.field.clone(),
                        region: Some(cx.myself()),
                    })),
                };
                let Some(actor) = actor else { continue };
                let to = self.field.region_of(obj.x, obj.y);
                let fresh = to != self.at;
                let member = Member { obj, actor, fresh };
                if to == self.at {
                    self.file_next(member);
                } else if let Some(k) = self.neighbours.iter().position(|(at, _)| *at == to) {
                    borders[k].push(member);
                }
            }
            a = b;
        }
        // The objects that did not come out of their cell died: stop their actors.
        for dead in actors.drain(..).flatten() {
            dead.stop();
        }
        SCRATCH.with(|s| s.set(sc));
        for (k, batch) in borders.into_iter().enumerate() {
            let to = &self.neighbours[k].1;
            let sent = if to.is_local() {
                to.tell(Border {
                    tick: self.tick,
                    members: batch,
                })
                .is_ok()
            } else {
                // A region on another node (`--nodes K`): the emigrants' states go over
                // the link and that region spawns their actors anew; the actors here
                // stop. An object is its state and its rules, not its actor's address.
                let objs = batch
                    .into_iter()
                    .map(|m| {
                        m.actor.stop();
                        m.obj
                    })
                    .collect();
                to.tell(Emigrants {
                    tick: self.tick,
                    objs,
                })
                .is_ok()
            };
            if !sent {
                cx.fail("a neighbouring region stopped during the run");
                return;
            }
        }
        self.reports.clear();
        self.resolved = true;
        // Only now start the next region of the chain: its objects' cells and messages
        // are then touched after this region's are done with, so a few regions' worth
        // are in cache at a time rather than the whole world's (see `Start`).
        if let Some(next) = &self.chain_next {
            let start = Start {
                tick: self.tick,
                frame: self.frame,
            };
            if next.tell(start).is_err() {
                cx.fail("a region of the start chain stopped during the run");
                return;
            }
        }
        self.finish_if_done();
    }

    /// Ends the tick once this region resolved and all eight borders arrived.
    fn finish_if_done(&mut self) {
        if !self.resolved || self.borders < NEIGHBOURS {
            return;
        }
        // Reset here, not at `Start`: all eight borders of the next tick may arrive
        // before its `Start` does.
        self.borders = 0;
        self.resolved = false;
        let checksum = self.next_checksum;
        self.commit_next();
        let frame = self
            .frame
            .then(|| self.members.iter().map(|m| m.obj).collect());
        let done = Done {
            tick: self.tick,
            checksum,
            objects: self.members.len(),
            frame,
        };
        if let Some(c) = &self.coordinator {
            let _ = c.tell(done);
        }
    }
}

impl Actor for Region {}

/// From the builder, once: the eight neighbours (with their coordinates), the
/// coordinator and the region's initial objects.
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct Wire {
    pub(crate) neighbours: Vec<((u16, u16), ActorRef<Region>)>,
    pub(crate) coordinator: ActorRef<Coordinator>,
    /// The next region of this one's start chain, if any (see [`Start`]).
    pub(crate) chain_next: Option<ActorRef<Region>>,
    pub(crate) objects: Vec<Obj>,
}

impl Message for Wire {
    type Reply = ();
}

impl Handler<Wire> for Region {
    fn handle(&mut self, msg: Wire, cx: &mut Context<Self>) {
        self.neighbours = msg.neighbours;
        self.coordinator = Some(msg.coordinator);
        self.chain_next = msg.chain_next;
        let system = cx.system();
        let me = cx.myself();
        self.commit_next(); // sizes the summaries
        for obj in msg.objects {
            let actor = system.spawn(ObjectActor {
                obj,
                field: self.field.clone(),
                region: Some(me.clone()),
            });
            self.file_next(Member {
                obj,
                actor,
                fresh: false,
            });
        }
        self.commit_next();
    }
}

/// From the coordinator (a chain's head) or the previous region of its start chain:
/// start `tick`.
///
/// Regions are started in a few chains rather than all at once: a region sends each of
/// its objects a `Step`, which touches the object's cell and allocates a message, and
/// the object's turn touches them again. With every region started at once, every
/// object's cell and message is touched before the first turn runs, and at 100,000
/// objects that is more than the last-level cache holds: the turn misses again. A
/// chain starts its next region once this one has resolved (its creatures have all
/// run), so only about one region per chain is in flight. The rules do not see the
/// order: a region computes its `Step`s from its state committed at `tick - 1`, and
/// borders of `tick` that arrive before its `Start` are kept apart (see [`Border`]).
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct Start {
    pub(crate) tick: u64,
    pub(crate) frame: bool,
}

impl Message for Start {
    type Reply = ();
}

impl Handler<Start> for Region {
    fn handle(&mut self, msg: Start, cx: &mut Context<Self>) {
        self.tick = msg.tick;
        self.frame = msg.frame;
        self.resolved = false;
        let r = self.field.region_side as usize;
        self.reports.clear();
        self.reports.resize(self.members.len(), None);
        self.outstanding = 0;
        let me = cx.myself();
        for slot in 0..self.members.len() {
            // The refs ahead are likely cold (100,000 actors do not fit in a cache):
            // start loading them now so that their misses overlap this send's.
            if let Some(ahead) = self.members.get(slot + PREFETCH_AHEAD) {
                ahead.actor.prefetch();
            }
            let m = &mut self.members[slot];
            let local = (m.obj.y as usize % r) * r + m.obj.x as usize % r;
            let report = rules::decides(m.obj.kind);
            if report {
                self.outstanding += 1;
            } else {
                // What the object would report: its state as given, and `Stay`.
                self.reports[slot] = Some((m.obj, Intent::Stay));
            }
            // A moved-in object learns where to report before its first step here
            // (one mailbox, one sender: the two arrive in this order).
            let home = !std::mem::take(&mut m.fresh) || m.actor.tell(Home(me.clone())).is_ok();
            let step = Step {
                tick: msg.tick,
                slot: slot as u32,
                state: m.obj,
                summary: self.summaries[local],
                report,
            };
            if !home || m.actor.tell(step).is_err() {
                cx.fail("an object stopped outside the rules");
                return;
            }
        }
        if self.outstanding == 0 {
            self.resolve(cx);
        }
    }
}

/// From an object: its state and intent for `tick`.
pub(crate) struct Report {
    pub(crate) tick: u64,
    pub(crate) slot: u32,
    pub(crate) obj: Obj,
    pub(crate) intent: Intent,
}

impl Message for Report {
    type Reply = ();
}

impl Handler<Report> for Region {
    fn handle(&mut self, msg: Report, cx: &mut Context<Self>) {
        debug_assert_eq!(msg.tick, self.tick);
        self.reports[msg.slot as usize] = Some((msg.obj, msg.intent));
        self.outstanding -= 1;
        if self.outstanding == 0 {
            self.resolve(cx);
        }
    }
}

/// From a neighbour (or itself, on a small torus): the objects that moved in at `tick`.
/// May arrive before this region's own [`Start`] of that tick; it is kept apart from
/// the members until the tick ends, so it never changes this tick's summaries.
pub(crate) struct Border {
    tick: u64,
    members: Vec<Member>,
}

impl Message for Border {
    type Reply = ();
}

impl Handler<Border> for Region {
    fn handle(&mut self, msg: Border, _cx: &mut Context<Self>) {
        debug_assert!(msg.tick == self.tick || msg.tick == self.tick + 1);
        for member in msg.members {
            self.file_next(member);
        }
        self.borders += 1;
        self.finish_if_done();
    }
}

/// From a neighbour on another node (`--nodes K`): the states of the objects that moved
/// in at `tick`, whose actors stopped there. Counts as that neighbour's [`Border`].
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct Emigrants {
    tick: u64,
    objs: Vec<Obj>,
}

impl Message for Emigrants {
    type Reply = ();
}

impl Handler<Emigrants> for Region {
    fn handle(&mut self, msg: Emigrants, cx: &mut Context<Self>) {
        debug_assert!(msg.tick == self.tick || msg.tick == self.tick + 1);
        let system = cx.system();
        let me = cx.myself();
        for obj in msg.objs {
            let actor = system.spawn(ObjectActor {
                obj,
                field: self.field.clone(),
                region: Some(me.clone()),
            });
            self.file_next(Member {
                obj,
                actor,
                fresh: false,
            });
        }
        self.borders += 1;
        self.finish_if_done();
    }
}

/// What a node needs to build a region for another node (`--nodes K`): the world's
/// size and seed (each process computes the same static [`Field`]) and where it is.
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct RegionArgs {
    pub(crate) objects: usize,
    pub(crate) seed: u64,
    pub(crate) at: (u16, u16),
}

impl odeon_remote::Spawnable for Region {
    type Args = RegionArgs;

    fn create(args: RegionArgs) -> Result<Self, String> {
        Ok(Region::new(
            rules::field_for(args.objects, args.seed),
            args.at,
        ))
    }
}

odeon_remote::remote_actor!(Region = "odeon_world.Region" {
    Wire = "odeon_world.Wire",
    Start = "odeon_world.Start",
    Emigrants = "odeon_world.Emigrants",
});
