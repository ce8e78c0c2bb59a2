//! A deterministic cluster for the state machines: one [`MobileEntry`] per node, FIFO
//! links per ordered pair (like the model's), each node's mailbox, and clients that
//! send numbered messages. Every frame is encoded and decoded with the wire codec on
//! its way. One call is one step; the tests choose the steps (scripted) or proptest
//! does (random schedules). The checks at the end are the model's properties
//! (`props.rs`) for runs without crashes.

use std::collections::{BTreeMap, VecDeque};

use crate::migration::entry::{MobileEntry, MoveFailed, Out, Place, Route};
use crate::wire::{self, NodeId, Outcome, QueuedMessage, Traffic, WireMigrateRefusal, WireRef};

/// The message name every client uses.
const MSG: &str = "test.Msg";

/// Node `i`'s identity.
pub(super) fn id(i: usize) -> NodeId {
    NodeId {
        name: format!("n{i}"),
        incarnation: 1,
    }
}

/// A sender: where it lives and its script (`true` for an ask).
#[derive(Clone, Debug)]
pub(super) struct Client {
    pub(super) node: usize,
    pub(super) script: Vec<bool>,
    pub(super) sent: usize,
}

/// One node: its entry, the actor's mailbox (meaningful while it is the host), its
/// pending asks, and what its entry reported.
#[derive(Debug)]
pub(super) struct SimNode {
    pub(super) entry: MobileEntry,
    pub(super) alive: bool,
    pub(super) mailbox: VecDeque<QueuedMessage>,
    pending: BTreeMap<u64, (usize, usize)>,
    next_request: u64,
    pub(super) outs: Vec<Out>,
}

/// The cluster. Node 0 is the actor's birth node.
#[derive(Debug)]
pub(super) struct Sim {
    pub(super) nodes: Vec<SimNode>,
    links: BTreeMap<(usize, usize), VecDeque<Vec<u8>>>,
    pub(super) clients: Vec<Client>,
    /// Per message (client, index): accepted, times handled, replies, failures.
    pub(super) accepted: BTreeMap<(usize, usize), bool>,
    pub(super) handled: BTreeMap<(usize, usize), u32>,
    pub(super) replies: BTreeMap<(usize, usize), u32>,
    pub(super) failed_asks: BTreeMap<(usize, usize), u32>,
    /// Per client, the index of the last message handled plus one.
    last_handled: Vec<usize>,
    pub(super) fifo_broken: bool,
    /// Nodes that refuse hand-overs (as if they did not know the type).
    pub(super) refusers: Vec<usize>,
    pub(super) moves_started: u64,
    /// The move each frozen node is in (for its timeout).
    frozen_for: BTreeMap<usize, u64>,
    /// Every step, for a failing test's message.
    pub(super) log: Vec<String>,
}

/// One step of the cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step {
    Send(usize),
    Deliver(usize, usize),
    Handle(usize),
    Migrate(usize, usize),
    Timeout(usize),
}

impl Sim {
    /// `nodes` nodes, the actor born and running on node 0, every other node holding
    /// a ref (its route leads to node 0).
    pub(super) fn new(nodes: usize, clients: Vec<(usize, Vec<bool>)>) -> Self {
        let actor = WireRef {
            node: id(0),
            id: 1,
            token: 0xfeed,
            actor_type: "test.Actor".into(),
        };
        let peers: Vec<NodeId> = (0..nodes).map(id).collect();
        let nodes = (0..nodes)
            .map(|i| SimNode {
                entry: if i == 0 {
                    MobileEntry::born(actor.clone(), peers.clone())
                } else {
                    MobileEntry::away(id(i), actor.clone(), peers.clone())
                },
                alive: true,
                mailbox: VecDeque::new(),
                pending: BTreeMap::new(),
                next_request: 0,
                outs: Vec::new(),
            })
            .collect();
        let clients: Vec<Client> = clients
            .into_iter()
            .map(|(node, script)| Client {
                node,
                script,
                sent: 0,
            })
            .collect();
        Sim {
            nodes,
            links: BTreeMap::new(),
            last_handled: vec![0; clients.len()],
            clients,
            accepted: BTreeMap::new(),
            handled: BTreeMap::new(),
            replies: BTreeMap::new(),
            failed_asks: BTreeMap::new(),
            fifo_broken: false,
            refusers: Vec::new(),
            moves_started: 0,
            frozen_for: BTreeMap::new(),
            log: Vec::new(),
        }
    }

    /// Every step enabled now, in a fixed order. `moves` says whether new moves (and
    /// timeouts) may start.
    pub(super) fn enabled(&self, moves: bool, timeouts: bool) -> Vec<Step> {
        let mut out = Vec::new();
        for (c, client) in self.clients.iter().enumerate() {
            if client.sent < client.script.len() && self.nodes[client.node].alive {
                out.push(Step::Send(c));
            }
        }
        for (&(from, to), link) in &self.links {
            if !link.is_empty() && self.nodes[to].alive {
                out.push(Step::Deliver(from, to));
            }
        }
        for (n, node) in self.nodes.iter().enumerate() {
            if !node.alive {
                continue;
            }
            if node.entry.is_host() {
                if !node.mailbox.is_empty() {
                    out.push(Step::Handle(n));
                }
                if moves {
                    out.extend(
                        (0..self.nodes.len())
                            .filter(|&t| t != n)
                            .map(|t| Step::Migrate(n, t)),
                    );
                }
            }
            if timeouts && matches!(node.entry.place, Place::Frozen(_)) {
                out.push(Step::Timeout(n));
            }
        }
        out
    }

    pub(super) fn step(&mut self, step: Step) {
        self.log.push(format!("{step:?}"));
        match step {
            Step::Send(c) => self.send(c),
            Step::Deliver(from, to) => self.deliver(from, to),
            Step::Handle(n) => self.handle(n),
            Step::Migrate(n, t) => self.migrate(n, t),
            Step::Timeout(n) => {
                let mv = self.frozen_for[&n];
                let outs = self.nodes[n].entry.timeout(mv);
                self.apply(n, outs);
            }
        }
    }

    /// Delivers every frame and handles every message (no new sends, moves or
    /// timeouts) until nothing is left to do.
    pub(super) fn settle(&mut self) {
        self.run_out(false);
    }

    /// [`Sim::settle`], and the clients send the rest of their scripts.
    pub(super) fn finish(&mut self) {
        self.run_out(true);
    }

    fn run_out(&mut self, sends: bool) {
        let mut budget = 100_000;
        while let Some(&s) = self
            .enabled(false, false)
            .iter()
            .find(|s| sends || !matches!(s, Step::Send(_)))
        {
            self.step(s);
            budget -= 1;
            assert!(budget > 0, "no progress: livelock?");
        }
    }

    /// Client `c` sends its next message.
    pub(super) fn send(&mut self, c: usize) {
        let client = &mut self.clients[c];
        let (n, index, ask) = (client.node, client.sent, client.script[client.sent]);
        client.sent += 1;
        let node = &mut self.nodes[n];
        let request = ask.then(|| {
            node.next_request += 1;
            node.pending.insert(node.next_request, (c, index));
            node.next_request
        });
        let payload = vec![c as u8, index as u8];
        match node.entry.send(MSG.into(), payload, request) {
            Ok(outs) => {
                self.accepted.insert((c, index), true);
                self.apply(n, outs);
            }
            Err(e) => {
                assert_eq!(e.payload, [c as u8, index as u8], "the message comes back");
                if let Some(r) = request {
                    node.pending.remove(&r);
                }
            }
        }
    }

    /// The frame at the head of link `from -> to` is read by `to`.
    pub(super) fn deliver(&mut self, from: usize, to: usize) {
        let bytes = self
            .links
            .get_mut(&(from, to))
            .and_then(VecDeque::pop_front)
            .expect("deliver on an empty link");
        let frame: Traffic<'_> = wire::decode(&bytes).expect("frames decode");
        self.log.push(format!("  {frame:?}"));
        match frame {
            Traffic::Reply { request, outcome } => {
                let ok = matches!(outcome, Outcome::Ok(_));
                self.complete(to, request, ok);
            }
            Traffic::AskAt { .. } => {}
            Traffic::MigrateOffer { migration, .. } if self.refusers.contains(&to) => {
                let why = WireMigrateRefusal::UnknownType {
                    actor_type: "test.Actor".into(),
                };
                self.push(to, from, &Traffic::MigrateRefused { migration, why });
            }
            frame => {
                let outs = self.nodes[to].entry.receive(&id(from), frame);
                self.apply(to, outs);
            }
        }
    }

    /// The host handles the head of its mailbox; an ask is answered.
    pub(super) fn handle(&mut self, n: usize) {
        let m = self.nodes[n].mailbox.pop_front().expect("a queued message");
        let key = (usize::from(m.payload[0]), usize::from(m.payload[1]));
        *self.handled.entry(key).or_default() += 1;
        let last = &mut self.last_handled[key.0];
        if key.1 < *last {
            self.fifo_broken = true;
        }
        *last = (*last).max(key.1 + 1);
        if let Some((origin, request)) = m.reply {
            if origin == id(n) {
                self.complete(n, request, true);
            } else {
                let o = self.index(&origin);
                let reply = Traffic::Reply {
                    request,
                    outcome: Outcome::Ok(vec![1].into()),
                };
                self.push(n, o, &reply);
            }
        }
    }

    /// The host `n` freezes and offers the actor to `t`.
    pub(super) fn migrate(&mut self, n: usize, t: usize) {
        self.moves_started += 1;
        let mv = self.moves_started;
        let snapshot: Vec<QueuedMessage> = self.nodes[n].mailbox.drain(..).collect();
        match self.nodes[n]
            .entry
            .freeze(mv, &id(t), vec![7, 7], snapshot.clone())
        {
            Ok(outs) => {
                self.frozen_for.insert(n, mv);
                self.apply(n, outs);
            }
            Err(_) => self.nodes[n].mailbox.extend(snapshot),
        }
    }

    /// Node `k` stops: frames to it are lost; frames it sent may still arrive until
    /// their receiver declares it lost.
    pub(super) fn crash(&mut self, k: usize) {
        self.log.push(format!("crash {k}"));
        self.nodes[k].alive = false;
        for ((_, to), link) in self.links.iter_mut() {
            if *to == k {
                link.clear();
            }
        }
    }

    /// Node `n` declares `k` lost.
    pub(super) fn detect(&mut self, n: usize, k: usize) {
        self.log.push(format!("{n} declares {k} lost"));
        if let Some(link) = self.links.get_mut(&(k, n)) {
            link.clear();
        }
        let outs = self.nodes[n].entry.node_lost(&id(k));
        self.apply(n, outs);
    }

    fn complete(&mut self, n: usize, request: u64, ok: bool) {
        if let Some(key) = self.nodes[n].pending.remove(&request) {
            let count = if ok {
                &mut self.replies
            } else {
                &mut self.failed_asks
            };
            *count.entry(key).or_default() += 1;
        }
    }

    fn index(&self, node: &NodeId) -> usize {
        (0..self.nodes.len())
            .find(|&i| id(i) == *node)
            .expect("a known node")
    }

    fn push(&mut self, from: usize, to: usize, frame: &Traffic<'_>) {
        if !self.nodes[to].alive {
            return;
        }
        let bytes = wire::encode(frame).expect("frames encode");
        self.links.entry((from, to)).or_default().push_back(bytes);
    }

    /// Performs node `n`'s outputs, in order.
    pub(super) fn apply(&mut self, n: usize, outs: Vec<Out>) {
        for out in outs {
            match &out {
                Out::Send { to, frame } => {
                    let to = self.index(to);
                    self.push(n, to, frame);
                }
                Out::Deliver(m) => self.nodes[n].mailbox.push_back(m.clone()),
                Out::FailAsk { request } => self.complete(n, *request, false),
                Out::Resumed { messages, .. } | Out::Activate { messages, .. } => {
                    assert!(
                        self.nodes[n].mailbox.is_empty(),
                        "nothing queued while away"
                    );
                    self.nodes[n].mailbox.extend(messages.iter().cloned());
                }
                _ => {}
            }
            self.nodes[n].outs.push(out);
        }
    }

    /// How many times node `n` reported an output matching `f`.
    pub(super) fn count(&self, n: usize, f: impl Fn(&Out) -> bool) -> usize {
        self.nodes[n].outs.iter().filter(|o| f(o)).count()
    }

    /// The frames waiting on link `from -> to`, decoded.
    pub(super) fn frames(&self, from: usize, to: usize) -> Vec<Traffic<'_>> {
        self.links
            .get(&(from, to))
            .into_iter()
            .flatten()
            .map(|b| wire::decode(b).expect("frames decode"))
            .collect()
    }

    /// The end-of-run properties for a run without crashes (the model's `props.rs`):
    /// one host; every accepted message handled exactly once, in per-client order;
    /// every ask answered once with a reply; nothing frozen, prepared or repairing;
    /// no forwarding entry or pin left but on the host and the birth node; no frame
    /// reached a dropped entry.
    pub(super) fn check_clean_end(&self) {
        let log = || self.log.join("\n");
        let hosts: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| self.nodes[i].entry.is_host())
            .collect();
        assert_eq!(
            hosts.len(),
            1,
            "SingleOwner/Progress: hosts {hosts:?}\n{}",
            log()
        );
        assert!(!self.fifo_broken, "Fifo\n{}", log());
        for (c, client) in self.clients.iter().enumerate() {
            for (i, ask) in client.script.iter().enumerate() {
                let key = (c, i);
                assert!(
                    self.accepted.contains_key(&key),
                    "sent and accepted: {key:?}"
                );
                assert_eq!(
                    self.handled.get(&key),
                    Some(&1),
                    "ExactlyOnce {key:?}\n{}",
                    log()
                );
                if *ask {
                    assert_eq!(
                        self.replies.get(&key),
                        Some(&1),
                        "AsksAnswered {key:?}\n{}",
                        log()
                    );
                    assert_eq!(self.failed_asks.get(&key), None, "no ask fails {key:?}");
                }
            }
        }
        for (i, node) in self.nodes.iter().enumerate() {
            let e = &node.entry;
            match &e.place {
                Place::Host { .. } => {}
                Place::Away {
                    route: Route::Direct(_),
                } => {}
                other => panic!("Progress: node {i} ends in {other:?}\n{}", log()),
            }
            if i != 0 && !e.is_host() {
                assert!(
                    !e.exported && e.pins() == 0,
                    "ForwardersCollected: node {i} exported {} pins {:?}\n{}",
                    e.exported,
                    e.holders,
                    log()
                );
            }
            // Pins name only nodes that route here (step 10), the birth node's
            // first-contact pins included (issue 14): a pin held for a node whose
            // route leads elsewhere would never be released.
            for (k, other) in self.nodes.iter().enumerate() {
                if !e.holders.contains_key(&id(k)) {
                    continue;
                }
                let routes_here = matches!(
                    &other.entry.place,
                    Place::Away { route: Route::Direct(h) } if *h == id(i)
                );
                assert!(
                    routes_here,
                    "PinsMatchRoutes: node {i} pins node {k}, which is {:?}\n{}",
                    other.entry.place,
                    log()
                );
            }
            let stray = self.count(i, |o| matches!(o, Out::Stray { .. }));
            assert_eq!(stray, 0, "NoStrayFrames at node {i}\n{}", log());
            let stragglers = self.count(i, |o| matches!(o, Out::Straggler { .. }));
            assert_eq!(stragglers, 0, "no straggler without a crash\n{}", log());
        }
    }

    /// How each move ended, summed over the nodes: (moved, resumed, activated,
    /// discarded).
    pub(super) fn outcomes(&self) -> (usize, usize, usize, usize) {
        let sum = |f: &dyn Fn(&Out) -> bool| (0..self.nodes.len()).map(|n| self.count(n, f)).sum();
        (
            sum(&|o| matches!(o, Out::Moved { .. })),
            sum(&|o| matches!(o, Out::Resumed { .. })),
            sum(&|o| matches!(o, Out::Activate { .. })),
            sum(&|o| matches!(o, Out::Discarded { .. })),
        )
    }

    /// Whether node `n`'s last move ended with `why`.
    pub(super) fn resumed_with(&self, n: usize, why: &MoveFailed) -> bool {
        self.nodes[n]
            .outs
            .iter()
            .any(|o| matches!(o, Out::Resumed { why: w, .. } if w == why))
    }
}
