//! One node's view of one mobile actor: [`MobileEntry`], its [`Place`] and [`Route`],
//! the [`Item`]s that travel along routes, and the [`Out`]puts the state machine asks
//! its driver to perform. The transitions live in `route.rs` (steps 7–10),
//! `repair.rs` (step 11) and `handover.rs` (steps 1–6); this file holds the data, the
//! constructors, the two calls a driver makes first (`send`, `receive`) and the
//! helpers every transition uses.
//!
//! Field by field this is the model's `Node` (`odeon-mobility-model/src/model.rs`),
//! with real types: node sets are `BTreeSet<NodeId>`, pins a `BTreeMap`, messages
//! [`QueuedMessage`]s, nonces and move ids `u64`, epochs `u32`.

use std::collections::{BTreeMap, BTreeSet};
use std::mem;

use crate::wire::{NodeId, Outcome, QueuedMessage, Traffic, WireFailure, WireRef};

/// Per origin node, the largest sequence number the owner has taken (step 9).
pub(crate) type HighWater = BTreeMap<NodeId, u64>;

/// What flows along a route toward the actor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Item {
    /// A message, with its origin, sequence number, reply route and hops.
    Msg(QueuedMessage),
    /// The last item its origin sends on a route it leaves (step 8), or a relocation
    /// probe sent on its behalf (step 11): whoever owns the actor when it arrives
    /// acknowledges it to `origin`.
    Flush {
        /// The node switching or relocating.
        origin: NodeId,
        /// Which switch or relocation of the origin.
        nonce: u64,
        /// For a relocation, the node the probe was sent through; `origin` itself for
        /// a switch (the wire spells that `None`).
        via: NodeId,
    },
}

/// How a node reaches the actor when it does not have it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Route {
    /// Send to this node.
    Direct(NodeId),
    /// A flush is on its way through `old`; later items wait in `buffer` (step 8).
    Switching {
        /// The route being left.
        old: NodeId,
        /// Items waiting for the owner's acknowledgement, in order.
        buffer: Vec<Item>,
    },
    /// The route's node was lost: a probe went through every live node (step 11).
    Relocating {
        /// Items waiting, in order.
        buffer: Vec<Item>,
        /// Nodes whose probe was neither acknowledged nor answered `Gone`.
        waiting: BTreeSet<NodeId>,
    },
    /// No live node has the actor: sends are refused.
    Dead,
}

/// The source's side of a hand-over in progress (steps 1–4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Frozen {
    /// The move's id (unique per source node).
    pub(crate) migration: u64,
    /// Where the actor is going.
    pub(crate) target: NodeId,
    /// The mailbox at freeze (shipped in the offer; kept until commit).
    pub(crate) snapshot: Vec<QueuedMessage>,
    /// What arrived since freeze, in arrival order.
    pub(crate) held: Vec<QueuedMessage>,
    /// The high-water marks.
    pub(crate) hw: HighWater,
}

/// The target's side of a hand-over in progress (steps 3 and 5): a copy that does not
/// run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Prepared {
    /// The move's id (the source's).
    pub(crate) migration: u64,
    /// The source's epoch at freeze.
    pub(crate) src_epoch: u32,
    /// The source.
    pub(crate) from: NodeId,
    /// The encoded state, opaque here.
    pub(crate) state: Vec<u8>,
    /// The shipped mailbox.
    pub(crate) snapshot: Vec<QueuedMessage>,
    /// The shipped high-water marks.
    pub(crate) hw: HighWater,
    /// What arrived here meanwhile, in order (nothing is forwarded while prepared,
    /// except relocation probes while draining).
    pub(crate) held: Vec<Item>,
    /// This node's own route, kept for an abort (and drained, step 3).
    pub(crate) route: Route,
    /// Ready was sent: this copy is in the commit window.
    pub(crate) ready_sent: bool,
}

/// What this node is to the actor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    /// The actor runs here; its mailbox is the cell's ([`Out::Deliver`] fills it).
    Host {
        /// High-water marks.
        hw: HighWater,
    },
    /// Source of a hand-over, between freeze and commit or abort.
    Frozen(Frozen),
    /// Target of a hand-over, holding a copy it may not run yet.
    Prepared(Prepared),
    /// Elsewhere: this node forwards (if exported) and sends along `route`.
    Away {
        /// Its route to the actor.
        route: Route,
    },
}

/// Why a hand-over ended without a move, as the source reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum MoveFailed {
    /// The target refused.
    Refused(crate::wire::WireMigrateRefusal),
    /// The target was declared lost before Ready.
    TargetLost,
    /// The driver's timeout fired before Ready.
    Timeout,
    /// The driver could not send the offer (the link refused the frame).
    NotSent(String),
}

/// What the state machine asks its driver to do, in order.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Out {
    /// Put `frame` on the link to `to`.
    Send {
        /// The peer.
        to: NodeId,
        /// The frame.
        frame: Traffic<'static>,
    },
    /// Push a message into the local actor's mailbox (this node is the host).
    Deliver(QueuedMessage),
    /// Fail a local pending ask (its origin is this node) with `Unreachable`.
    FailAsk {
        /// The request id here.
        request: u64,
    },
    /// A local ask's binding changed (§3.3; the node-level table applies it).
    Rebind {
        /// The request id here.
        request: u64,
        /// The node that reported.
        reporter: NodeId,
        /// Where the ask went.
        at: NodeId,
        /// Its hops then.
        hops: u8,
        /// Reported by `at` on receipt.
        confirmed: bool,
    },
    /// The move committed (source): report `Moved` to its caller.
    Moved {
        /// The move.
        migration: u64,
        /// The new host.
        to: NodeId,
        /// The epoch now.
        epoch: u32,
    },
    /// The move did not happen (source): the actor runs here again; `messages` go back
    /// into the mailbox in this order (the snapshot, then what was held).
    Resumed {
        /// The move.
        migration: u64,
        /// Why.
        why: MoveFailed,
        /// The mailbox to restore.
        messages: Vec<QueuedMessage>,
    },
    /// The actor runs here now (target, step 5): install `state`, run `migrated`, then
    /// `messages`, in order; later [`Out::Deliver`]s follow them.
    Activate {
        /// The move.
        migration: u64,
        /// The encoded state.
        state: Vec<u8>,
        /// The epoch now.
        epoch: u32,
        /// The shipped mailbox and what the source held, in order.
        messages: Vec<QueuedMessage>,
    },
    /// The target dropped its copy (abort, or the source left or was lost).
    Discarded {
        /// The move.
        migration: u64,
    },
    /// This node dropped its forwarding entry (step 10): its export can go.
    Collected,
    /// A relocation found no copy: the actor is lost (watchers get `NodeLost`).
    ActorLost,
    /// A straggler was dropped (step 9).
    Straggler {
        /// Its origin.
        origin: NodeId,
        /// Its sequence number.
        seq: u64,
    },
    /// A frame reached this node after it dropped its entry (never expected: step
    /// 10's invariant). The item was dropped as for a stopped actor.
    Stray {
        /// The sender.
        from: NodeId,
    },
}

/// A send was refused at the call: the actor is known to be lost.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the actor is unreachable (its route is dead)")]
pub(crate) struct Unreachable {
    /// The message, given back.
    pub(crate) message: String,
    /// Its payload, given back.
    pub(crate) payload: Vec<u8>,
}

/// One node's view of one mobile actor (design §3, `MobileEntry`).
#[derive(Clone, Debug)]
pub(crate) struct MobileEntry {
    /// This node.
    pub(crate) me: NodeId,
    /// The actor's identity: birth node, id there, token, type.
    pub(crate) actor: WireRef,
    /// What this node is to the actor.
    pub(crate) place: Place,
    /// The newest epoch known here (moves committed).
    pub(crate) epoch: u32,
    /// Pins per holder node: it routes through this node, or an acknowledgement or a
    /// probe to it is not released yet (step 10).
    pub(crate) holders: BTreeMap<NodeId, u32>,
    /// Whether this node accepts the actor's frames (host, forwarder, birth node).
    pub(crate) exported: bool,
    /// Holders hinted since this node last stopped being the host (step 7).
    pub(crate) hinted: BTreeSet<NodeId>,
    /// A hint arrived while prepared: switch on discard.
    pub(crate) hint_due: bool,
    /// The last sequence number given to a message of this node's senders.
    pub(crate) seq_out: u64,
    /// A message (this node's own or forwarded; a flush does not count) went out
    /// along the route since the route was last known drained: since a switch ended
    /// with nothing buffered, since this node stopped owning the actor, or ever
    /// (model: `Node::route_used`). A target whose direct route is clean answers
    /// Ready without a drain (step 3).
    pub(crate) route_used: bool,
    /// The current switch or relocation.
    pub(crate) nonce: u64,
    /// The other nodes of the cluster this node knows.
    pub(crate) peers: BTreeSet<NodeId>,
    /// Nodes declared lost.
    pub(crate) lost: BTreeSet<NodeId>,
    /// Outputs of the transition under way; every entry point returns them.
    pub(crate) out: Vec<Out>,
}

impl MobileEntry {
    /// The entry on the actor's birth node, where it was spawned and runs.
    pub(crate) fn born(actor: WireRef, peers: impl IntoIterator<Item = NodeId>) -> Self {
        let me = actor.node.clone();
        Self::new(
            me,
            actor,
            Place::Host {
                hw: HighWater::new(),
            },
            true,
            peers,
        )
    }

    /// The entry on a node `me` that got a ref to the actor: routes to the birth node.
    pub(crate) fn away(
        me: NodeId,
        actor: WireRef,
        peers: impl IntoIterator<Item = NodeId>,
    ) -> Self {
        let route = Route::Direct(actor.node.clone());
        Self::new(me, actor, Place::Away { route }, false, peers)
    }

    fn new(
        me: NodeId,
        actor: WireRef,
        place: Place,
        exported: bool,
        peers: impl IntoIterator<Item = NodeId>,
    ) -> Self {
        let peers = peers.into_iter().filter(|p| *p != me).collect();
        MobileEntry {
            me,
            actor,
            place,
            epoch: 0,
            holders: BTreeMap::new(),
            exported,
            hinted: BTreeSet::new(),
            hint_due: false,
            seq_out: 0,
            route_used: false,
            nonce: 0,
            peers,
            lost: BTreeSet::new(),
            out: Vec::new(),
        }
    }

    /// A sender on this node sends a message (an ask if `request` is set; its reply
    /// comes back here under that id). Messages that may leave the node are numbered
    /// (step 9); on the owner's node they go straight into the mailbox, unnumbered.
    ///
    /// # Errors
    /// [`Unreachable`] (the message given back) once this node knows the actor is lost.
    #[must_use = "the outputs must be performed"]
    pub(crate) fn send(
        &mut self,
        message: String,
        payload: Vec<u8>,
        request: Option<u64>,
    ) -> Result<Vec<Out>, Unreachable> {
        if matches!(self.place, Place::Away { route: Route::Dead }) {
            return Err(Unreachable { message, payload });
        }
        let owner = matches!(self.place, Place::Host { .. } | Place::Frozen(_));
        let seq = if owner {
            0
        } else {
            self.seq_out += 1;
            self.seq_out
        };
        let msg = QueuedMessage {
            message,
            payload,
            origin: self.me.clone(),
            seq,
            reply: request.map(|r| (self.me.clone(), r)),
            hops: 0,
        };
        match &mut self.place {
            Place::Host { .. } => self.out.push(Out::Deliver(msg)),
            Place::Frozen(f) => f.held.push(msg),
            Place::Prepared(p) => p.held.push(Item::Msg(msg)),
            Place::Away { .. } => self.route_push(Item::Msg(msg)),
        }
        Ok(self.take_out())
    }

    /// A frame about this actor arrived from `from`. Frames that are not the
    /// migration protocol's (replies, `AskAt`, the actor-independent ones) are the
    /// node's, and ignored here.
    #[must_use = "the outputs must be performed"]
    pub(crate) fn receive(&mut self, from: &NodeId, frame: Traffic<'_>) -> Vec<Out> {
        match frame {
            Traffic::MTell {
                seq,
                message,
                payload,
                ..
            } => self.receive_item(
                from,
                Item::Msg(first_hop(from, seq, message, payload, None)),
            ),
            Traffic::MAsk {
                seq,
                request,
                message,
                payload,
                ..
            } => {
                let msg = first_hop(from, seq, message, payload, Some(request));
                self.receive_item(from, Item::Msg(msg));
            }
            Traffic::Relay { msg, .. } => self.receive_item(from, Item::Msg(msg)),
            Traffic::Flush {
                origin, nonce, via, ..
            } => {
                let via = via.unwrap_or_else(|| origin.clone());
                self.receive_item(from, Item::Flush { origin, nonce, via });
            }
            Traffic::Hint { .. } => self.receive_hint(from),
            Traffic::FlushAck {
                nonce,
                epoch,
                frozen_for,
                ..
            } => self.receive_flush_ack(from, epoch, nonce, frozen_for),
            Traffic::Located { epoch, .. } => self.receive_located(from, epoch),
            Traffic::Unpin { .. } => self.receive_unpin(from),
            Traffic::Reflush { ttl, .. } => self.receive_reflush(from, ttl),
            Traffic::Locate { nonce, again, .. } => self.receive_locate(from, nonce, again),
            Traffic::Gone { nonce, via, .. } => self.receive_gone(nonce, &via),
            Traffic::MigrateOffer {
                migration,
                epoch,
                state,
                mailbox,
                high_water,
                ..
            } => self.receive_offer(from, migration, epoch, state, mailbox, high_water),
            Traffic::MigrateReady { migration } => self.receive_ready(from, migration),
            Traffic::MigrateRefused { migration, why } => {
                self.receive_refused(from, migration, why);
            }
            Traffic::MigrateCommit {
                migration,
                epoch,
                held,
                high_water,
            } => self.receive_commit(from, migration, epoch, held, high_water),
            Traffic::MigrateAbort { migration } => self.receive_abort(from, migration),
            other => tracing::debug!(frame = ?other, "not a migration frame; ignored"),
        }
        self.take_out()
    }

    /// Whether this node is the host (runs the actor).
    pub(crate) fn is_host(&self) -> bool {
        matches!(self.place, Place::Host { .. })
    }

    /// Pins held on this node, all holders together.
    pub(crate) fn pins(&self) -> u32 {
        self.holders.values().sum()
    }

    pub(crate) fn take_out(&mut self) -> Vec<Out> {
        mem::take(&mut self.out)
    }

    /// Queues `frame` for `to`.
    pub(crate) fn send_frame(&mut self, to: &NodeId, frame: Traffic<'static>) {
        debug_assert_ne!(*to, self.me, "a node sends to itself: {frame:?}");
        self.out.push(Out::Send {
            to: to.clone(),
            frame,
        });
    }

    /// The frame that carries `item` from this node (hops already counted).
    pub(crate) fn item_frame(&self, item: Item) -> Traffic<'static> {
        let to = self.actor.token;
        match item {
            Item::Msg(m) if m.origin == self.me && m.hops == 1 && m.seq != 0 => match m.reply {
                // First hop from its origin: the peer is the origin, no need to say so.
                None => Traffic::MTell {
                    to,
                    seq: m.seq,
                    message: m.message,
                    payload: m.payload,
                },
                Some((_, request)) => Traffic::MAsk {
                    to,
                    seq: m.seq,
                    request,
                    message: m.message,
                    payload: m.payload,
                },
            },
            Item::Msg(msg) => Traffic::Relay { to, msg },
            Item::Flush { origin, nonce, via } => {
                let via = (via != origin).then_some(via);
                Traffic::Flush {
                    to,
                    origin,
                    nonce,
                    via,
                }
            }
        }
    }

    pub(crate) fn is_lost(&self, n: &NodeId) -> bool {
        self.lost.contains(n)
    }

    /// Adds a pin of `holder`. Callers never pin a node already declared lost (its
    /// pin could never be released): frames from it are no longer read, and the two
    /// places that pin without a frame from it check.
    pub(crate) fn pin(&mut self, holder: &NodeId) {
        *self.holders.entry(holder.clone()).or_default() += 1;
    }
}

/// A message as its origin `from` sent it on its first hop (`MTell`/`MAsk`).
fn first_hop(
    from: &NodeId,
    seq: u64,
    message: String,
    payload: Vec<u8>,
    request: Option<u64>,
) -> QueuedMessage {
    QueuedMessage {
        message,
        payload,
        origin: from.clone(),
        seq,
        reply: request.map(|r| (from.clone(), r)),
        hops: 1,
    }
}

/// The failure reply to an ask that cannot reach the actor.
pub(crate) fn failed_reply(request: u64) -> Traffic<'static> {
    Traffic::Reply {
        request,
        outcome: Outcome::Failed(WireFailure::Stopped),
    }
}
