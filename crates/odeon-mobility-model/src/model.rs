//! The state of the modelled cluster: one mobile actor, a few nodes, FIFO links, the
//! clients that send to the actor, and the ghost bookkeeping the properties read.
//!
//! Everything here is plain data (`Clone + Eq + Hash`): the explorer fingerprints whole
//! states to know which it has seen. Bit masks stand for sets of nodes (bit `n` = node
//! `n`), which keeps states small and hashing cheap.

use std::collections::VecDeque;

/// The most nodes a configuration may have (bit masks are `u8`, arrays are this long).
pub const MAX_NODES: usize = 4;

/// The actor's birth node (its home, which keeps the directory entry).
pub const HOME: u8 = 0;

/// A node index, `0..nodes`.
pub type NodeIx = u8;

/// A set of nodes, one bit per node.
pub type NodeSet = u8;

/// The bit of node `n`.
pub const fn bit(n: NodeIx) -> NodeSet {
    1 << n
}

/// A deliberate defect, to show that the checker finds what each part of the protocol
/// prevents (tests/mutations.rs). An empty [`Config::bugs`] is the protocol as designed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bug {
    /// A sender switches to the hinted node at once, without a flush through its old
    /// route (the FIFO guard removed).
    SwitchWithoutFlush,
    /// One-phase hand-over: the source forgets the actor as soon as it ships the
    /// snapshot and the target activates on receipt (no Ready/Commit).
    SourceDiscardsBeforeCommit,
    /// The target activates on receipt of the snapshot while the source still runs the
    /// two-phase protocol (and may abort on a timeout).
    TargetActivatesWithoutCommit,
    /// A forwarder drops its entry right after hinting its route holders, without
    /// waiting for their flushes.
    GcWithoutFlush,
    /// The target answers Ready without first draining its own route to the source.
    ReadyWithoutDrain,
    /// The drain shortcut with its guard removed: a target whose route is direct
    /// answers Ready at once even if it sent or forwarded items on that route since
    /// it was last drained (the protocol skips the drain only for a clean route).
    SkipDrainOnUsedRoute,
    /// The host does not drop stragglers (a message older than one it already has
    /// from the same origin node).
    NoStragglerCheck,
}

/// One client: a sender that lives on a node and sends its script in order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Client {
    /// Where it runs.
    pub node: NodeIx,
    /// Its messages in sending order: `true` for an ask, `false` for a tell.
    pub asks: Vec<bool>,
}

/// What is explored.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Config {
    /// Number of nodes, 2..=[`MAX_NODES`]. Node [`HOME`] is the actor's birth node.
    pub nodes: u8,
    /// The senders.
    pub clients: Vec<Client>,
    /// How many moves may be started in one run (chains and repeats included).
    pub max_moves: u8,
    /// How many nodes may crash in one run.
    pub max_crashes: u8,
    /// The nodes allowed to crash.
    pub crashable: NodeSet,
    /// Nodes that refuse a hand-over (they do not know the actor type).
    pub refusers: NodeSet,
    /// Whether a frozen source may give up waiting (a timeout) at any moment.
    pub timeouts: bool,
    /// Deliberate defects; empty for the protocol as designed.
    pub bugs: Vec<Bug>,
}

/// A message: its client and its index in the client's script.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MsgId {
    /// The client.
    pub client: u8,
    /// Its index in the script (0-based).
    pub index: u8,
}

/// What flows along a route toward the actor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Item {
    /// A client's message.
    Msg {
        /// Which.
        id: MsgId,
        /// Whether it is an ask (its reply goes back to the client's node).
        ask: bool,
        /// The origin node's sequence number for this actor, 0 when it never left the
        /// owner's node (see the straggler rule in `node.rs`).
        seq: u8,
        /// How many hops it has made; ask binding reports carry it (newest wins).
        hops: u8,
    },
    /// The last item its origin sends on its old route before switching: whoever
    /// owns the actor when it arrives acknowledges it to the origin.
    Flush {
        /// The node switching (or relocating).
        origin: NodeIx,
        /// Which switch of the origin this is (stale acknowledgements are released).
        nonce: u8,
        /// For a relocation, the node the origin sent it through (a `Gone` names it);
        /// the origin itself for an ordinary switch.
        via: NodeIx,
    },
}

/// One frame on a link. Links are FIFO per ordered pair of nodes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Frame {
    /// An item, sent or forwarded toward the actor.
    Fwd(Item),
    /// "I am no longer where the actor is; flush through me and switch." `at` is the
    /// sender's best guess of where the actor went (the protocol does not need it:
    /// the flush finds the owner; only [`Bug::SwitchWithoutFlush`] jumps there).
    Hint {
        /// Where the sender's own route leads.
        at: NodeIx,
    },
    /// The owner got `origin`'s flush: route to the sender of this frame.
    FlushAck {
        /// The owner's epoch (number of committed moves).
        epoch: u8,
        /// The flush's nonce.
        nonce: u8,
        /// The move the owner is frozen for, 0 if it runs the actor.
        frozen_for: u8,
    },
    /// Phase 1 of a hand-over: the snapshot (state and pending mailbox).
    Handover {
        /// The move's id (one per started move).
        mv: u8,
        /// The source's epoch (moves committed before this one).
        epoch: u8,
        /// The queued messages, in order.
        snapshot: Vec<Item>,
        /// The actor's per-origin high-water marks.
        hw: [u8; MAX_NODES],
    },
    /// The target holds the snapshot, its own route is drained: the source may commit.
    Ready {
        /// The move.
        mv: u8,
    },
    /// The target does not take the actor (unknown type, busy repairing its route).
    Refuse {
        /// The move.
        mv: u8,
    },
    /// Phase 2: the source has committed; the target activates.
    Commit {
        /// The move.
        mv: u8,
        /// The new epoch.
        epoch: u8,
        /// Messages the source received while frozen, in order.
        held: Vec<Item>,
        /// The high-water marks at commit.
        hw: [u8; MAX_NODES],
    },
    /// The source gave up (timeout): the target drops its copy.
    Abort {
        /// The move.
        mv: u8,
    },
    /// The reply to an ask (or its failure), to the ask's origin node.
    Reply {
        /// The ask.
        id: MsgId,
        /// Handled (`true`) or failed.
        ok: bool,
    },
    /// Where an ask is: "sent to `at`" by the node passing it on (the caller binds it
    /// to both the sender and `at`), or "received" by `at` itself (`confirmed`: bound
    /// to `at` alone). The caller fails the ask when a node it is bound to is lost.
    AskAt {
        /// The ask.
        id: MsgId,
        /// The node it went to.
        at: NodeIx,
        /// Its hop count then (a report with more hops wins).
        hops: u8,
        /// Sent by `at` on receipt.
        confirmed: bool,
    },
    /// The new host tells the birth node's directory (a hint with an epoch).
    Located {
        /// The new epoch.
        epoch: u8,
    },
    /// "Where is the actor?": sent to every live node by one whose route died. Each
    /// receiver pins the sender and sends a flush (with `via` = itself) along its own
    /// route on the sender's behalf: the owner acknowledges it, wherever the actor went
    /// meanwhile.
    Locate {
        /// The relocation's nonce.
        nonce: u8,
        /// Sent again after a `Reflush`: the receiver has pinned the sender already.
        again: bool,
    },
    /// Releases a pin taken by an acknowledgement or an answer that was not used.
    Unpin,
    /// "I declared a node lost: a flush you sent through me may have died with it."
    /// A switching holder sends its flush again; every holder passes it on (`ttl`
    /// more hops), since the flush may be a holder's holder's.
    Reflush {
        /// Hops left.
        ttl: u8,
    },
    /// A flush reached a node whose route is dead (its relocation found no copy).
    Gone {
        /// The flush's nonce.
        nonce: u8,
        /// The flush's `via`.
        via: NodeIx,
    },
}

/// How a node reaches the actor when it does not have it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Route {
    /// Send to this node.
    Direct(NodeIx),
    /// A flush is on its way through `old`; new items wait in `buffer`.
    Switching {
        /// The route being left.
        old: NodeIx,
        /// Items waiting for the acknowledgement, in order.
        buffer: Vec<Item>,
    },
    /// The route's node was lost: a flush goes through every live node; the first
    /// acknowledgement (from the owner) is the new route.
    Relocating {
        /// Items waiting, in order.
        buffer: Vec<Item>,
        /// Nodes whose flush has neither been acknowledged nor come back `Gone`.
        waiting: NodeSet,
    },
    /// No live node has the actor: it is lost.
    Dead,
}

/// What a node is to the actor.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Place {
    /// It runs here.
    Host {
        /// Queued messages.
        mailbox: VecDeque<Item>,
        /// Per-origin high-water marks (largest `seq` received).
        hw: [u8; MAX_NODES],
    },
    /// Source of a hand-over, between freeze and commit (or abort).
    Frozen {
        /// The move.
        mv: u8,
        /// Where it is going.
        target: NodeIx,
        /// The mailbox at freeze (shipped; kept until commit).
        snapshot: Vec<Item>,
        /// What arrived since, in order.
        held: Vec<Item>,
        /// High-water marks.
        hw: [u8; MAX_NODES],
    },
    /// Target of a hand-over, holding a copy it may not run yet.
    Prepared {
        /// The move.
        mv: u8,
        /// The source's epoch at freeze.
        src_epoch: u8,
        /// The source.
        from: NodeIx,
        /// The shipped mailbox.
        snapshot: Vec<Item>,
        /// The shipped high-water marks.
        hw: [u8; MAX_NODES],
        /// What arrived here meanwhile, in order (no message is forwarded while
        /// prepared; a draining target passes relocation probes on, see `route_push`).
        held: Vec<Item>,
        /// This node's own route, kept for an abort.
        route: Route,
        /// Ready was sent (the copy is now part of the commit window).
        ready_sent: bool,
    },
    /// Elsewhere: this node forwards (if exported) and sends along `route`.
    Away {
        /// Its route to the actor.
        route: Route,
    },
}

/// One node's view of the actor.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Node {
    /// Not crashed.
    pub alive: bool,
    /// Nodes it has declared lost.
    pub lost: NodeSet,
    /// Its role.
    pub place: Place,
    /// The newest epoch it knows.
    pub epoch: u8,
    /// Route holders: per node, the pins that node holds on this one (it routes via
    /// this node, or an acknowledgement to it is unreleased).
    pub holders: [u8; MAX_NODES],
    /// Whether it accepts the actor's frames from other nodes (host, forwarder, home).
    pub export: bool,
    /// Holders already hinted since it last stopped being the host.
    pub hinted: NodeSet,
    /// A hint arrived while it could not switch (prepared): switch on discard.
    pub hint_due: bool,
    /// The last sequence number it gave an item of its own clients.
    pub seq_out: u8,
    /// It put a message (its own or forwarded; a flush does not count) on a link
    /// along its route since the route was last known drained: since a switch ended
    /// with nothing buffered, or since it stopped owning the actor, or ever. A
    /// prepared target whose route is clean (`false`) skips the drain (hand-over step
    /// 3): everything it ever sent toward the actor is already in the actor's custody.
    pub route_used: bool,
    /// Its current switch or relocation.
    pub nonce: u8,
    /// Asks of its clients not answered yet: (ask, nodes it is bound to, hops).
    pub pending: Vec<(MsgId, NodeSet, u8)>,
}

/// What the properties need to know that no node knows.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct MsgGhost {
    /// Its node took it (the send call returned `Ok`).
    pub accepted: bool,
    /// Every node that has held it or had it addressed to it.
    pub custody: NodeSet,
    /// How many times the actor handled it.
    pub handled: u8,
    /// For an ask: answered (a reply or an error reached the caller).
    pub answered: bool,
    /// For an ask: the answer was a reply.
    pub answered_ok: bool,
    /// For an ask: replies (not errors) that reached its node, counted even late.
    pub replies: u8,
}

/// Global bookkeeping for the properties (never read by the protocol).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Ghost {
    /// Per message (index `client * 8 + index`).
    pub msgs: Vec<MsgGhost>,
    /// Per client: the script index of the last message handled, plus one.
    pub last_handled: Vec<u8>,
    /// A handled message came before one handled earlier from its client.
    pub fifo_broken: bool,
    /// Moves started, and how each ended.
    pub moves: u8,
    /// Outcomes reported: moved, refused, failed.
    pub moved: u8,
    /// Refused outcomes.
    pub refused: u8,
    /// Failed outcomes.
    pub failed: u8,
    /// Crashes so far.
    pub crashes: u8,
    /// A node crashed while it had custody of the actor itself (see `props.rs`).
    pub actor_at_risk: bool,
    /// The commit of this (source, target) is on its way.
    pub commit_in_flight: Option<(NodeIx, NodeIx)>,
    /// A frame reached a forwarder that had dropped its entry.
    pub stray: u8,
}

/// The whole modelled cluster.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct State {
    /// The nodes.
    pub nodes: Vec<Node>,
    /// Link `from -> to` is `links[from * MAX_NODES + to]`.
    pub links: Vec<VecDeque<Frame>>,
    /// Per client: how many of its messages it has sent.
    pub sent: Vec<u8>,
    /// Bookkeeping for the properties.
    pub ghost: Ghost,
}

/// Messages per client the ghost has room for.
pub const MAX_SCRIPT: usize = 8;

impl State {
    /// The initial state: the actor runs on [`HOME`], every other node routes to it.
    pub fn initial(cfg: &Config) -> Self {
        assert!((2..=MAX_NODES as u8).contains(&cfg.nodes), "2..=4 nodes");
        assert!(cfg.clients.iter().all(|c| c.asks.len() <= MAX_SCRIPT));
        let nodes = (0..cfg.nodes)
            .map(|n| Node {
                alive: true,
                lost: 0,
                place: if n == HOME {
                    Place::Host {
                        mailbox: VecDeque::new(),
                        hw: [0; MAX_NODES],
                    }
                } else {
                    Place::Away {
                        route: Route::Direct(HOME),
                    }
                },
                epoch: 0,
                holders: [0; MAX_NODES],
                export: n == HOME,
                hinted: 0,
                hint_due: false,
                seq_out: 0,
                route_used: false,
                nonce: 0,
                pending: Vec::new(),
            })
            .collect();
        State {
            nodes,
            links: vec![VecDeque::new(); MAX_NODES * MAX_NODES],
            sent: vec![0; cfg.clients.len()],
            ghost: Ghost {
                msgs: vec![MsgGhost::default(); cfg.clients.len() * MAX_SCRIPT],
                last_handled: vec![0; cfg.clients.len()],
                ..Ghost::default()
            },
        }
    }

    /// The ghost of message `id`.
    pub fn msg(&mut self, id: MsgId) -> &mut MsgGhost {
        &mut self.ghost.msgs[usize::from(id.client) * MAX_SCRIPT + usize::from(id.index)]
    }

    /// The link `from -> to`.
    pub fn link(&mut self, from: NodeIx, to: NodeIx) -> &mut VecDeque<Frame> {
        &mut self.links[usize::from(from) * MAX_NODES + usize::from(to)]
    }

    /// Sends `frame` on `from -> to`. A frame to a crashed node is lost at once (the
    /// link is closed); a frame to itself is a bug in the model.
    pub fn send(&mut self, from: NodeIx, to: NodeIx, frame: Frame) {
        debug_assert_ne!(from, to, "a node sends to itself: {frame:?}");
        if let Frame::Fwd(Item::Msg { id, .. }) = &frame {
            self.msg(*id).custody |= bit(to);
        }
        if self.nodes[usize::from(to)].alive {
            self.link(from, to).push_back(frame);
        }
    }

    /// Records that node `n` holds `item` now.
    pub fn hold(&mut self, n: NodeIx, item: &Item) {
        if let Item::Msg { id, .. } = item {
            self.msg(*id).custody |= bit(n);
        }
    }

    /// The owner (host or frozen source) among live nodes, if exactly one; the
    /// properties check there is never more than one.
    pub fn owners(&self) -> impl Iterator<Item = NodeIx> + '_ {
        self.nodes.iter().enumerate().filter_map(|(i, n)| {
            (n.alive && matches!(n.place, Place::Host { .. } | Place::Frozen { .. }))
                .then_some(i as NodeIx)
        })
    }

    /// Whether node `n` holds the actor itself (its loss would lose the actor): the
    /// host, a frozen source, a prepared target that sent Ready, or a source whose
    /// commit is still on its way.
    pub fn has_actor_custody(&self, n: NodeIx) -> bool {
        match &self.nodes[usize::from(n)].place {
            Place::Host { .. } | Place::Frozen { .. } => true,
            Place::Prepared { ready_sent, .. } => *ready_sent,
            Place::Away { .. } => self.ghost.commit_in_flight.is_some_and(|(s, _)| s == n),
        }
    }
}
