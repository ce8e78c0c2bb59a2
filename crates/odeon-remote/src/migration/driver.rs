//! The driver: one node's [`Mobile`] per mobile actor it has touched, wrapping the
//! pure [`MobileEntry`] and performing its [`Out`]puts on links, cells and the node's
//! tables (design §7 steps 2–3).
//!
//! # Who holds what
//! - The entry's lock ([`Mobile::state`]) serializes everything about one actor on
//!   this node: sends through the route (so `seq` order is link order), frames from
//!   peers, the freeze, the commit and the activation.
//! - **Held messages have one owner per path, and every sender uses exactly one
//!   path.** A sender with a direct local ref pushes into the cell: what it pushes
//!   while the actor is frozen waits in the cell's mailbox (the core holds it), and
//!   after a commit the stub hands it, in push order, to the entry
//!   ([`MobileEntry::send`]: numbered, on the link after `MigrateCommit`); after an
//!   abort the core runs it after the snapshot. Frames from other nodes, and sends
//!   through a remote ref's endpoint or a stub, go through the entry, which holds
//!   them while frozen (`Frozen.held`) and ships them in the commit, or delivers them
//!   after the resumed snapshot. So per sender the order is: the snapshot, then that
//!   sender's path's held queue.
//! - Replies to asks sent through an entry come back to the node-level table
//!   `NodeInner::mobile_asks` (the reply may come from any node the actor moved to;
//!   the per-peer tables are looked up first, unchanged).

use std::any::Any;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::time::Instant;

use odeon::ActorId;
use odeon::remote::{BirthId, FrozenActor, Outgoing, Refusal};
use parking_lot::Mutex;
use tokio::sync::oneshot;

use super::api::{MigrateError, MigrateFailure, MigrateResult, Moved};
use super::control::CONTROL;
use super::entry::{MobileEntry, MoveFailed, Out};
use super::stub::Stub;
use super::trace::Carried;
use crate::interface::{DecodeReply, ErasedRef, Interface, Mobility, ReplyRoute};
use crate::node::{NodeInner, Pending};
use crate::wire::{NodeId, Outcome, QueuedMessage, Traffic, WireFailure, WireRef};

/// One node's view of one mobile actor, with what the driver keeps beside the entry.
pub(crate) struct Mobile {
    /// The actor's export token (the same on every node, design §2.2).
    pub(crate) token: u64,
    /// Its identity and token, as refs to it are written: a copy of the entry's, read
    /// without the entry's lock (encoding and decoding refs happen under it).
    pub(crate) wire: WireRef,
    pub(crate) interface: &'static Interface,
    pub(crate) mobility: &'static Mobility,
    /// The actor's cell on this node: the running actor (host), or the stub it left.
    /// Its own lock, so that finding a mobile actor by its local ref never waits for
    /// an entry's lock (an encoding under that lock may look it up).
    pub(crate) local: Mutex<Option<Arc<ErasedRef>>>,
    pub(crate) state: Mutex<Driver>,
    /// Watches, links and controls waiting for the lock (`control.rs`).
    pub(crate) control: super::control::ControlState,
    /// Local senders that route through this entry: live [`MobileEndpoint`]s and the
    /// stub's route (`collect.rs`: the table keeps the entry while any is left).
    ///
    /// [`MobileEndpoint`]: super::stub::MobileEndpoint
    pub(crate) users: AtomicUsize,
    /// The entry was collected (step 10) and has not been needed since: written under
    /// `state`'s lock after every transition, read under the table's (`collect.rs`).
    pub(crate) collectable: AtomicBool,
}

/// The entry and the hand-over in progress, under one lock.
pub(crate) struct Driver {
    pub(crate) entry: MobileEntry,
    /// Source: the frozen actor, between freeze and commit or abort.
    pub(crate) moving: Option<Moving>,
    /// Target: the decoded state, between offer and commit or abort.
    pub(crate) arriving: Option<(u64, Box<dyn Any + Send>)>,
    /// `seq_out` when this node last flushed its route to forget the entry
    /// (`collect.rs`).
    pub(crate) flushed_at: Option<u64>,
    /// The entry was forgotten (`collect.rs`): it left the table and released its pin
    /// at its route's node, so its route may lead to a node that forgot the actor too.
    /// A thread that found it in a table before that finds it retired once it holds
    /// the lock, and looks the token up again ([`NodeInner::lock_live`]).
    pub(crate) retired: bool,
}

/// The source's side of a move the driver is carrying out.
pub(crate) struct Moving {
    pub(crate) migration: u64,
    pub(crate) target: NodeId,
    pub(crate) frozen: FrozenActor,
    /// Asks in the snapshot: (index, request id here, reply decoder).
    pub(crate) asks: Vec<(usize, u64, DecodeReply)>,
    pub(crate) snapshot_len: usize,
    /// Messages the entry held at commit (frames that arrived while frozen).
    pub(crate) held: usize,
    pub(crate) bytes: usize,
    /// The encoded state alone, in bytes (traced).
    pub(crate) state_bytes: usize,
    pub(crate) started: Instant,
    pub(crate) caller: Option<oneshot::Sender<MigrateResult>>,
    /// The move's `migration` span (design §3.9), closed at commit or abort.
    pub(crate) span: tracing::Span,
}

impl Moving {
    /// What the move carried, for its trace.
    fn carried(&self) -> Carried {
        Carried {
            state_bytes: self.state_bytes,
            queued: self.snapshot_len,
            held: self.held,
        }
    }
}

impl Mobile {
    pub(crate) fn new(
        entry: MobileEntry,
        interface: &'static Interface,
        mobility: &'static Mobility,
        local: Option<Arc<ErasedRef>>,
    ) -> Arc<Self> {
        Arc::new(Mobile {
            token: entry.actor.token,
            wire: entry.actor.clone(),
            interface,
            mobility,
            local: Mutex::new(local),
            state: Mutex::new(Driver {
                entry,
                moving: None,
                arriving: None,
                flushed_at: None,
                retired: false,
            }),
            control: Default::default(),
            users: AtomicUsize::new(0),
            collectable: AtomicBool::new(false),
        })
    }

    pub(crate) fn local(&self) -> Option<Arc<ErasedRef>> {
        self.local.lock().clone()
    }

    /// The actor's identity on every node.
    pub(crate) fn birth(&self) -> BirthId {
        let a = &self.wire;
        BirthId {
            node: a.node.name.as_str().into(),
            incarnation: a.node.incarnation,
            id: ActorId::from_u64(a.id),
        }
    }
}

impl NodeInner {
    /// Sends a message from this node to a mobile actor through its entry (a remote
    /// ref's endpoint, or a stub's route): numbered along the route, or delivered here
    /// if the actor runs here.
    pub(crate) fn mobile_send(
        self: &Arc<Self>,
        mobile: &Arc<Mobile>,
        mut out: Outgoing,
    ) -> Result<(), (Refusal, Outgoing)> {
        let Some(entry) = mobile.interface.by_type(out.type_id) else {
            return Err((Refusal::NotRemote, out));
        };
        // Encoded outside the entry's lock: refs inside may need this node's tables.
        let payload = match (entry.encode)(&*out.message, &*self.codec()) {
            Ok(p) => p,
            Err(e) => {
                tracing::error!(message = entry.wire_name, error = %e, "message did not encode");
                return Err((Refusal::NotRemote, out));
            }
        };
        let request = out.reply.take().map(|slot| {
            let request = self.next_request();
            let decode = entry.decode_reply;
            self.mobile_asks
                .lock()
                .insert(request, Pending::Ask { slot, decode });
            request
        });
        let mut d = mobile.state.lock();
        // Control items sent from under this lock go first: they were sent first.
        self.drain_controls(mobile, &mut d);
        match d.entry.send(entry.wire_name.to_string(), payload, request) {
            Ok(outs) => {
                self.perform(mobile, &mut d, outs);
                Ok(())
            }
            Err(_) => {
                if let Some(r) = request
                    && let Some(Pending::Ask { slot, .. }) = self.mobile_asks.lock().remove(&r)
                {
                    out.reply = Some(slot);
                }
                Err((Refusal::Unreachable, out))
            }
        }
    }

    /// Performs what the entry asked for, in order, under its lock. One exception to
    /// the order: a commit (`Out::Moved`) is carried out first, so that the shipped
    /// asks' reply slots are in the table before `MigrateCommit` leaves (the target may
    /// answer at once).
    pub(crate) fn perform(self: &Arc<Self>, mobile: &Arc<Mobile>, d: &mut Driver, outs: Vec<Out>) {
        let (moved, rest): (Vec<Out>, Vec<Out>) = outs
            .into_iter()
            .partition(|o| matches!(o, Out::Moved { .. }));
        for out in moved.into_iter().chain(rest) {
            self.perform_one(mobile, d, out);
        }
        self.after_transition(mobile, d);
    }

    fn perform_one(self: &Arc<Self>, mobile: &Arc<Mobile>, d: &mut Driver, out: Out) {
        match out {
            Out::Send { to, frame } => {
                if let Traffic::Relay { msg, .. } = &frame
                    && msg.origin != self.me
                {
                    super::abort::reached(super::abort::Step::Forward);
                    self.migration_stats.forwarded();
                }
                match &frame {
                    Traffic::MigrateOffer { .. } => {
                        super::abort::reached(super::abort::Step::Offer)
                    }
                    Traffic::MigrateReady { .. } => {
                        super::abort::reached(super::abort::Step::Ready)
                    }
                    Traffic::MigrateCommit { .. } => {
                        super::abort::reached(super::abort::Step::Commit)
                    }
                    _ => {}
                }
                // A state larger than half a frame goes in chunks after its offer,
                // on the same link (`chunk.rs`); any other frame is sent as it is.
                let (frame, chunks) = super::chunk::split(frame, self.link.max_frame);
                // Before the send: the other side may act on the frame before this
                // thread runs again.
                super::steps::sending(&frame);
                let sent = match self.known_peer(&to) {
                    Some(peer) => peer
                        .send_pushed(&frame)
                        .and_then(|pushed| {
                            chunks
                                .iter()
                                .try_for_each(|f| peer.send(f))
                                .map(|()| pushed)
                        })
                        .map_err(|e| e.to_string()),
                    None => Err(format!("{to} is not a known node")),
                };
                drop(chunks);
                if matches!(sent, Ok(crate::node::Pushed::Queued)) {
                    super::steps::queued(&frame);
                }
                if let Err(e) = sent {
                    if self.resend_after_loss(mobile, d, &to, &frame) {
                        return;
                    }
                    tracing::warn!(peer = %to, error = %e, "mobility frame not sent");
                    // An offer the link refused would otherwise keep the actor frozen
                    // until the request timeout: the move fails now.
                    if let Traffic::MigrateOffer { migration, .. } = frame {
                        let outs = d.entry.offer_not_sent(migration, e);
                        self.perform(mobile, d, outs);
                    }
                }
            }
            Out::Deliver(msg) => self.deliver_mobile(mobile, msg),
            Out::FailAsk { request } => self.fail_bound_ask(request),
            // Ask bindings (design §3.3, `binding.rs`).
            Out::Rebind {
                request,
                reporter,
                at,
                hops,
                confirmed,
            } => self.rebind_ask(request, &reporter, &at, hops, confirmed),
            Out::Moved {
                migration,
                to,
                epoch,
            } => self.committed(mobile, d, migration, to, epoch),
            Out::Resumed {
                migration,
                why,
                messages,
            } => self.resumed(mobile, d, migration, why, messages),
            Out::Activate {
                migration,
                epoch,
                messages,
                ..
            } => {
                super::abort::reached(super::abort::Step::Activate);
                self.activate_arrival(mobile, d, migration, epoch, messages)
            }
            Out::Discarded { migration } => {
                if d.arriving.as_ref().is_some_and(|(m, _)| *m == migration) {
                    d.arriving = None;
                }
                // The watchers and links the offer shipped stay with the source.
                let _ = (mobile.control.incoming.lock()).take_if(|(m, _)| *m == migration);
                self.forget_migration(mobile, migration);
            }
            Out::Collected => self.collected(mobile),
            Out::ActorLost => tracing::warn!(token = mobile.token, "mobile actor lost"),
            Out::Straggler { origin, seq } => {
                tracing::debug!(%origin, seq, "straggler dropped");
            }
            Out::Stray { from } => tracing::warn!(%from, "frame for a dropped mobile entry"),
        }
    }

    /// Hands a message to the actor running here (a control item is applied instead).
    fn deliver_mobile(self: &Arc<Self>, mobile: &Arc<Mobile>, msg: QueuedMessage) {
        let reply = |m: &QueuedMessage| {
            m.reply
                .as_ref()
                .map(|(origin, request)| self.mobile_reply_route(origin, *request))
        };
        let Some(local) = mobile.local() else {
            if msg.message == CONTROL && self.watch_of_stopped(mobile, &msg) {
                return;
            }
            tracing::warn!(message = %msg.message, "a message for a mobile actor with no cell here");
            if let Some(route) = reply(&msg) {
                route(Outcome::Failed(WireFailure::Stopped));
            }
            return;
        };
        if msg.message == CONTROL {
            return self.apply_control(mobile, &local, msg);
        }
        let Some(entry) = mobile.interface.by_name(&msg.message) else {
            tracing::warn!(message = %msg.message, "unknown message for a mobile actor");
            return;
        };
        let on_error = reply(&msg);
        if let Err(f) = (entry.deliver)(&*local, &msg.payload, reply(&msg), &self.codec()) {
            tracing::warn!(message = %msg.message, failure = ?f, "mobile message not delivered");
            if let Some(route) = on_error {
                route(Outcome::Failed(f));
            }
        }
    }

    /// Where the reply to an ask from `origin` goes: straight to its node-level table.
    pub(crate) fn mobile_reply_route(
        self: &Arc<Self>,
        origin: &NodeId,
        request: u64,
    ) -> ReplyRoute {
        if *origin == self.me {
            let node = Arc::downgrade(self);
            return Box::new(move |outcome| {
                if let Some(node) = node.upgrade() {
                    node.complete_mobile(request, outcome);
                }
            });
        }
        let peer = self.known_peer(origin);
        let origin = origin.clone();
        Box::new(move |outcome| match &peer {
            Some(p) => {
                if let Err(e) = p.send(&Traffic::Reply { request, outcome }) {
                    tracing::debug!(peer = %origin, request, error = %e, "reply not sent");
                }
            }
            None => tracing::debug!(peer = %origin, request, "reply to an unknown node"),
        })
    }

    /// A reply to an ask sent through a mobile entry. Returns `false` if no such ask.
    pub(crate) fn complete_mobile(&self, request: u64, outcome: Outcome<'_>) -> bool {
        let Some(pending) = self.mobile_asks.lock().remove(&request) else {
            return false;
        };
        self.ask_bindings.lock().remove(&request);
        self.finish(pending, request, outcome);
        true
    }

    /// Source, step 4: the move committed.
    fn committed(
        self: &Arc<Self>,
        mobile: &Arc<Mobile>,
        d: &mut Driver,
        migration: u64,
        to: NodeId,
        epoch: u32,
    ) {
        let Some(m) = d.moving.take_if(|m| m.migration == migration) else {
            return;
        };
        super::steps::step("committed", migration);
        let carried = m.carried();
        self.forget_migration(mobile, migration);
        NodeInner::mobile_used(mobile);
        let stub = Arc::new(Stub {
            node: Arc::downgrade(self),
            mobile: Arc::downgrade(mobile),
            interface: mobile.interface,
            id: ActorId::from_u64(mobile.wire.id),
            birth: mobile.birth(),
        });
        // The source's own watch of the cell stays here; its watchers went in the offer
        // and learn where (design §3.5: "sent to target").
        self.watches_sent(mobile, &to, epoch);
        self.disarm(mobile);
        let mut outgoing = m.frozen.commit(stub);
        // Watches and links the cell had locally went to the stub's route, deferred
        // (this thread holds the entry's lock): they follow the commit.
        self.drain_controls(mobile, d);
        for (index, request, decode) in m.asks {
            if let Some(slot) = outgoing.get_mut(index).and_then(|o| o.reply.take()) {
                self.mobile_asks
                    .lock()
                    .insert(request, Pending::Ask { slot, decode });
            }
        }
        tracing::info!(token = mobile.token, %to, epoch, bytes = m.bytes, "actor moved");
        let took = m.started.elapsed();
        self.migration_ended(&m.span, &to, Some(epoch), carried, Some(took), None);
        if let Some(caller) = m.caller {
            let _ = caller.send(Ok(Moved {
                from: self.me.clone(),
                to,
                epoch,
                bytes: m.bytes,
                queued: m.snapshot_len + m.held,
                took,
            }));
        }
    }

    /// Source: the move did not happen; the actor runs here again.
    fn resumed(
        self: &Arc<Self>,
        mobile: &Arc<Mobile>,
        d: &mut Driver,
        migration: u64,
        why: MoveFailed,
        messages: Vec<QueuedMessage>,
    ) {
        let Some(m) = d.moving.take_if(|m| m.migration == migration) else {
            return;
        };
        self.forget_migration(mobile, migration);
        let error: MigrateError = match why {
            MoveFailed::Refused(w) => MigrateError::from_wire(&m.target, w),
            MoveFailed::TargetLost => MigrateFailure::TargetLost.into(),
            MoveFailed::Timeout => MigrateFailure::Timeout(self.settings.request_timeout).into(),
            MoveFailed::NotSent(why) => MigrateFailure::NotSent(why).into(),
        };
        tracing::info!(token = mobile.token, %error, "move abandoned; the actor resumes");
        let epoch = Some(d.entry.epoch);
        let took = Some(m.started.elapsed());
        self.migration_ended(&m.span, &m.target, epoch, m.carried(), took, Some(&error));
        // The core restores the snapshot and what its cell held; the entry's own held
        // frames follow them (the snapshot's copies in `messages` are skipped).
        m.frozen.resume(Box::new(error.clone()));
        for msg in messages.into_iter().skip(m.snapshot_len) {
            self.deliver_mobile(mobile, msg);
        }
        if let Some(caller) = m.caller {
            let _ = caller.send(Err(error));
        }
    }

    /// Target, step 5: install the state, queue the shipped messages, run.
    fn activate_arrival(
        self: &Arc<Self>,
        mobile: &Arc<Mobile>,
        d: &mut Driver,
        migration: u64,
        epoch: u32,
        messages: Vec<QueuedMessage>,
    ) {
        let Some((_, state)) = d.arriving.take_if(|(m, _)| *m == migration) else {
            tracing::error!(migration, "a commit for a state this node does not hold");
            return;
        };
        self.forget_migration(mobile, migration);
        let Some((prepared, actor)) =
            (mobile.mobility.prepare)(&self.system, state, mobile.birth())
        else {
            tracing::error!(migration, "the arriving state is not of its type");
            return;
        };
        *mobile.local.lock() = Some(actor);
        self.adopt_attached(mobile, migration, epoch);
        for msg in messages {
            self.deliver_mobile(mobile, msg);
        }
        // Before: the actor may run (and move again) before this thread goes on.
        super::steps::step("activated", migration);
        (mobile.mobility.activate)(prepared);
        tracing::info!(token = mobile.token, epoch, "actor arrived");
    }

    /// Drops the move `migration` of `mobile` from the table that routes the
    /// hand-over's frames (they name the move, not the actor).
    pub(crate) fn forget_migration(&self, mobile: &Arc<Mobile>, migration: u64) {
        self.migrations
            .lock()
            .retain(|(_, m), v| *m != migration || !Arc::ptr_eq(v, mobile));
    }
}
