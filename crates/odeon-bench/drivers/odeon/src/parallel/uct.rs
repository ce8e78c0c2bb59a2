//! Unbalanced Cobwebbed Tree (Savina #26, `shared/savina.md` §3.26): a tree of node
//! actors grows by asking a central root, which grants or denies each request by
//! drawing from `java.util.Random(2)`, until MAX_NODES would be exceeded; then the root
//! traverses the tree and terminates it.
//!
//! The root's decisions depend only on its generator and on how many requests it has
//! seen, not on their order, so the final size, the number of grants and of denials are
//! deterministic: `reference` replays them sequentially to validate every run.
//!
//! Savina's busy work, `loop(b, 40000)`, is an empty counting loop (`busy`): the JVM's
//! JIT deletes it and so does the Rust optimiser, so here as there it costs nothing
//! (kept, it would be about 10¹² iterations per run). Nodes are spawned at the top
//! level: a node exits right after passing `Terminate` to its children, and children
//! would be stopped with it, their `Traverse` still queued.

use std::sync::mpsc::{self, Sender};
use std::time::Instant;

use odeon::{Actor, ActorRef, Context, Handler, Message, Recipient};
use savina::rng::JavaRandom;
use savina::{Outcome, Params};

use super::exited::finish_exited;
use crate::common;

/// The second argument of every `loop` call in Savina's UCT.
const DUMMY: i64 = 40_000;

/// Savina's `loop(busywait, dummy)`: an empty loop, deleted by the optimiser (see the
/// module documentation).
fn busy(busywait: i64) {
    let mut k = 0;
    while k < busywait * DUMMY {
        k += 1;
    }
}

/// The parameters the root and every node share.
#[derive(Clone, Copy)]
struct Config {
    max_nodes: usize,
    avg: i64,
    stdev: i64,
    binomial: usize,
    urgent: i32,
}

/// A normal draw: `round(gaussian·sd + mean)` (Java's `Math.round`), repeated until > 0.
fn comp_size(rng: &mut JavaRandom, c: &Config) -> i64 {
    loop {
        let v = (rng.next_gaussian() * c.stdev as f64 + c.avg as f64 + 0.5).floor() as i64;
        if v > 0 {
            return v;
        }
    }
}

/// What the root answers a request with, drawn from its generator.
enum Decision {
    Deny,
    Grant {
        comp: i64,
        urgent_child: Option<usize>,
    },
}

/// One grant-or-deny decision (the cap is checked by the caller).
fn decide(rng: &mut JavaRandom, c: &Config) -> Decision {
    if !rng.next_boolean() {
        return Decision::Deny;
    }
    let comp = comp_size(rng, c);
    let urgent_child = if rng.next_int_bounded(100) > c.urgent {
        None
    } else {
        Some(rng.next_int_bounded(c.binomial as i32) as usize)
    };
    Decision::Grant { comp, urgent_child }
}

struct GenerateTree;
struct TryGenerateChildren;
struct ShouldGenerateChildren {
    sender: ActorRef<Node>,
    child_height: usize,
}
/// `GenerateChildren` and, with an urgent child, `UrgentGenerateChildren`.
struct GenerateChildren {
    urgent_child: Option<usize>,
    current_id: usize,
    comp_size: i64,
}
struct UpdateGrant(usize);
struct Traverse;
struct Terminate;

macro_rules! messages {
    ($($m:ty),*) => { $(impl Message for $m { type Reply = (); })* };
}
messages!(
    GenerateTree,
    TryGenerateChildren,
    ShouldGenerateChildren,
    GenerateChildren,
    UpdateGrant,
    Traverse,
    Terminate
);

/// What the root reports when the cap is reached.
struct Report {
    size: usize,
    height: usize,
    grants: usize,
    denials: usize,
}

struct Root {
    config: Config,
    rng: JavaRandom,
    height: usize,
    size: usize,
    children: Vec<ActorRef<Node>>,
    grants: usize,
    denials: usize,
    report: Sender<Report>,
}
impl Actor for Root {}

/// B new nodes with ids `current_id + 1 …`, each told to ask for children.
fn spawn_children<A: Actor>(
    cx: &Context<A>,
    parent: Recipient<UpdateGrant>,
    root: &ActorRef<Root>,
    g: GenerateChildren,
    height: usize,
    config: Config,
) -> Vec<ActorRef<Node>> {
    let system = cx.system();
    (0..config.binomial)
        .map(|i| {
            let child = system.spawn(Node {
                me: None,
                config,
                parent: parent.clone(),
                root: root.clone(),
                height,
                id: g.current_id + i + 1,
                comp_size: g.comp_size,
                urgent: g.urgent_child == Some(i),
                children: Vec::new(),
                has_grandchildren: vec![false; config.binomial],
            });
            let _ = child.tell(TryGenerateChildren);
            child
        })
        .collect()
}

impl Handler<GenerateTree> for Root {
    fn handle(&mut self, _: GenerateTree, cx: &mut Context<Self>) {
        self.height = 2;
        let g = GenerateChildren {
            urgent_child: None,
            current_id: self.size,
            comp_size: comp_size(&mut self.rng, &self.config),
        };
        let me = cx.myself();
        self.children = spawn_children(cx, me.recipient(), &me, g, 2, self.config);
        self.size += self.config.binomial;
    }
}

impl Handler<UpdateGrant> for Root {
    fn handle(&mut self, _: UpdateGrant, _: &mut Context<Self>) {}
}

impl Handler<ShouldGenerateChildren> for Root {
    fn handle(&mut self, msg: ShouldGenerateChildren, cx: &mut Context<Self>) {
        if self.size + self.config.binomial <= self.config.max_nodes {
            match decide(&mut self.rng, &self.config) {
                Decision::Grant { comp, urgent_child } => {
                    let _ = msg.sender.tell(GenerateChildren {
                        urgent_child,
                        current_id: self.size,
                        comp_size: comp,
                    });
                    self.size += self.config.binomial;
                    self.height = self.height.max(msg.child_height + 1);
                    self.grants += 1;
                }
                Decision::Deny => {
                    self.height = self.height.max(msg.child_height);
                    self.denials += 1;
                }
            }
            return;
        }
        // The cap: reached once, since the root exits here and later requests are
        // dropped.
        let _ = self.report.send(Report {
            size: self.size,
            height: self.height,
            grants: self.grants,
            denials: self.denials,
        });
        for child in &self.children {
            let _ = child.tell(Traverse);
        }
        for child in &self.children {
            let _ = child.tell(Terminate);
        }
        cx.stop();
    }
}

struct Node {
    /// Held until this actor exits: Savina's actors live until they exit, while odeon's
    /// local GC collects an actor with no references left, and that can race with the
    /// last message sent through the last reference (its sender's final message just
    /// before the sender exits and drops it), leaving the message unhandled.
    me: Option<ActorRef<Self>>,
    config: Config,
    parent: Recipient<UpdateGrant>,
    root: ActorRef<Root>,
    height: usize,
    id: usize,
    comp_size: i64,
    /// Savina's urgent flag: only `UrgentTraverse` reads it, and nobody sends that.
    #[allow(dead_code)]
    urgent: bool,
    children: Vec<ActorRef<Node>>,
    /// Which children have children of their own (`UpdateGrant`).
    has_grandchildren: Vec<bool>,
}
impl Actor for Node {
    fn started(&mut self, cx: &mut Context<Self>) {
        self.me = Some(cx.myself());
    }
}

impl Handler<TryGenerateChildren> for Node {
    fn handle(&mut self, _: TryGenerateChildren, cx: &mut Context<Self>) {
        busy(100);
        let _ = self.root.tell(ShouldGenerateChildren {
            sender: cx.myself(),
            child_height: self.height,
        });
    }
}

impl Handler<GenerateChildren> for Node {
    fn handle(&mut self, g: GenerateChildren, cx: &mut Context<Self>) {
        let _ = self
            .parent
            .tell(UpdateGrant(self.id % self.config.binomial));
        let me = cx.myself().recipient();
        let (root, height) = (self.root.clone(), self.height + 1);
        self.children = spawn_children(cx, me, &root, g, height, self.config);
    }
}

impl Handler<UpdateGrant> for Node {
    fn handle(&mut self, UpdateGrant(child): UpdateGrant, _: &mut Context<Self>) {
        self.has_grandchildren[child] = true;
    }
}

impl Handler<Traverse> for Node {
    fn handle(&mut self, _: Traverse, _: &mut Context<Self>) {
        busy(self.comp_size);
        for child in &self.children {
            let _ = child.tell(Traverse);
        }
    }
}

impl Handler<Terminate> for Node {
    fn handle(&mut self, _: Terminate, cx: &mut Context<Self>) {
        for child in &self.children {
            let _ = child.tell(Terminate);
        }
        cx.stop();
    }
}

/// The root's decisions replayed in sequence: (size, grants, denials) at the cap, or
/// `None` if the tree stops asking before it (every pending request denied).
fn reference(c: &Config) -> Option<(usize, usize, usize)> {
    let mut rng = JavaRandom::new(2);
    comp_size(&mut rng, c);
    let (mut size, mut pending, mut grants, mut denials) = (1 + c.binomial, c.binomial, 0, 0);
    while pending > 0 {
        pending -= 1;
        if size + c.binomial > c.max_nodes {
            return Some((size, grants, denials));
        }
        match decide(&mut rng, c) {
            Decision::Grant { .. } => {
                size += c.binomial;
                pending += c.binomial;
                grants += 1;
            }
            Decision::Deny => denials += 1,
        }
    }
    None
}

pub(crate) fn run(params: &Params) -> Outcome {
    let config = Config {
        max_nodes: params.get("nodes"),
        avg: params.get("avg"),
        stdev: params.get("stdev"),
        binomial: params.get("binomial"),
        urgent: params.get("urgent"),
    };
    let Some(expected) = (config.binomial >= 1 && config.binomial < 1 << 20)
        .then(|| reference(&config))
        .flatten()
    else {
        let e = "the tree stops growing before MAX_NODES (or BINOMIAL_PARAM < 1)";
        return Outcome::new(Default::default(), Err(e.to_owned()));
    };

    let start = Instant::now();
    let system = common::system(params);
    let (tx, rx) = mpsc::channel();
    let root = system.spawn(Root {
        config,
        rng: JavaRandom::new(2),
        height: 0,
        size: 1,
        children: Vec::new(),
        grants: 0,
        denials: 0,
        report: tx,
    });
    let _ = root.tell(GenerateTree);
    let (elapsed, report) = finish_exited(system, &rx, 1, start);
    drop(root);

    let check = report.and_then(|mut r| {
        let r = r.remove(0);
        let got = (r.size, r.grants, r.denials);
        if got != expected {
            return Err(format!(
                "size, grants, denials {got:?}: expected {expected:?}"
            ));
        }
        let defaults = (config.max_nodes, config.avg, config.stdev) == (200_000, 500, 100)
            && (config.binomial, config.urgent) == (10, 50);
        if defaults && got != (199_991, 19_998, 19_938) {
            return Err(format!(
                "{got:?}: expected (199991, 19998, 19938), savina.md §3.26"
            ));
        }
        Ok(format!(
            "final size {} ({} grants, {} denials), height {}",
            r.size, r.grants, r.denials, r.height
        ))
    });
    Outcome::new(elapsed, check)
}
