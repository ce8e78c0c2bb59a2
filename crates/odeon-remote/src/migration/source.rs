//! The source's side of a move (steps 1–2): the move request handed to the core, the
//! freeze, the snapshot's encoding and the offer.

use std::sync::{Arc, Weak};
use std::time::Instant;

use odeon::remote::{FrozenActor, MoveRequest, NotFrozen};
use odeon::{ActorRef, Context, MobileActor};
use tokio::sync::oneshot;

use super::api::{MigrateError, MigrateFailure, MigrateRefusal, MigrateResult, Migration};
use super::driver::{Mobile, Moving};
use super::handover::FreezeError;
use super::stub::MobileEndpoint;
use super::trace::{self, Carried};
use crate::interface::Interface;
use crate::node::{NodeInner, node_of};
use crate::wire::{NodeId, QueuedMessage};

/// `actor_ref.migrate_to(to)`.
pub(crate) fn migrate_ref<A: MobileActor>(actor: &ActorRef<A>, to: &NodeId) -> Migration {
    if !actor.is_local() {
        // A remote ref: the request travels to wherever the actor runs (`control.rs`).
        let mobile = actor
            .endpoint()
            .and_then(|ep| ep.as_any().downcast_ref::<MobileEndpoint>());
        return match mobile {
            Some(ep) => ep.node.mobile_migrate(&ep.mobile, to),
            None => Migration::done(Err(MigrateRefusal::NotHere.into())),
        };
    }
    let (tx, rx) = oneshot::channel();
    match request::<A>(actor, to, Some(tx)) {
        Ok(req) => {
            actor.request_move(req);
            Migration::waiting(rx)
        }
        Err(e) => Migration::done(Err(e)),
    }
}

/// `cx.migrate_to(to)`: the outcome is `migration_failed` here or `migrated` there.
pub(crate) fn migrate_from_handler<A: MobileActor>(cx: &mut Context<A>, to: &NodeId) {
    match request::<A>(&cx.myself(), to, None) {
        Ok(req) => cx.request_move(req),
        Err(e) => tracing::warn!(error = %e, "migrate_to from a handler refused"),
    }
}

fn request<A: MobileActor>(
    actor: &ActorRef<A>,
    to: &NodeId,
    caller: Option<oneshot::Sender<MigrateResult>>,
) -> Result<Box<dyn MoveRequest>, MigrateError> {
    let node = node_of(&actor.system()).ok_or(MigrateRefusal::NoNode)?;
    let interface =
        Interface::of(A::interface()).ok_or(MigrateRefusal::NotMobile(node.me.clone()))?;
    let mobile = node
        .mobile_for_local(interface, Box::new(actor.clone()))
        .map_err(|_| MigrateRefusal::NotMobile(node.me.clone()))?;
    Ok(Box::new(MoveReq {
        node: Arc::downgrade(&node),
        mobile,
        to: to.clone(),
        caller,
    }))
}

/// The transport's move request: the core calls it back on the actor's turn.
struct MoveReq {
    node: Weak<NodeInner>,
    mobile: Arc<Mobile>,
    to: NodeId,
    caller: Option<oneshot::Sender<MigrateResult>>,
}

impl MoveRequest for MoveReq {
    fn frozen(self: Box<Self>, actor: FrozenActor) {
        let MoveReq {
            node,
            mobile,
            to,
            caller,
        } = *self;
        match node.upgrade() {
            Some(node) => node.start_move(&mobile, actor, &to, caller),
            None => refuse(actor, caller, MigrateFailure::SourceLost.into()),
        }
    }

    fn refused(self: Box<Self>, why: NotFrozen) {
        if matches!(why, NotFrozen::Moved)
            && let Some(node) = self.node.upgrade()
        {
            // A stale local ref on a node the actor left: ask its host.
            let migration = node.mobile_migrate(&self.mobile, &self.to);
            if let Some(caller) = self.caller {
                node.io.spawn(async move {
                    let _ = caller.send(migration.await);
                });
            }
            return;
        }
        let error: MigrateError = match why {
            NotFrozen::Supervised => MigrateRefusal::Supervised.into(),
            NotFrozen::HasChildren => MigrateRefusal::HasChildren.into(),
            NotFrozen::Moved | NotFrozen::Remote => MigrateRefusal::NotHere.into(),
            NotFrozen::Replaced => MigrateRefusal::Replaced.into(),
            _ => MigrateFailure::Stopped.into(),
        };
        if let Some(node) = self.node.upgrade() {
            let m = &self.mobile;
            let span = trace::span(&node.me, m.token, m.interface.actor_type, &self.to);
            node.migration_ended(
                &span,
                &self.to,
                None,
                Carried::default(),
                None,
                Some(&error),
            );
        }
        if let Some(caller) = self.caller {
            let _ = caller.send(Err(error));
        }
    }
}

/// Gives the actor back to its turn, and the caller its answer.
fn refuse(actor: FrozenActor, caller: Option<oneshot::Sender<MigrateResult>>, e: MigrateError) {
    actor.resume(Box::new(e.clone()));
    if let Some(caller) = caller {
        let _ = caller.send(Err(e));
    }
}

impl NodeInner {
    /// Refused or failed before the freeze: counted and traced here, then as [`refuse`].
    fn refuse_here(
        &self,
        mobile: &Mobile,
        to: &NodeId,
        actor: FrozenActor,
        caller: Option<oneshot::Sender<MigrateResult>>,
        e: MigrateError,
    ) {
        let span = trace::span(&self.me, mobile.token, mobile.interface.actor_type, to);
        self.migration_ended(&span, to, None, Carried::default(), None, Some(&e));
        refuse(actor, caller, e);
    }

    /// Steps 1–2 on the actor's turn: snapshot, encode, offer. Nothing here waits for
    /// the network (`Peer::send` queues).
    fn start_move(
        self: &Arc<Self>,
        mobile: &Arc<Mobile>,
        mut actor: FrozenActor,
        to: &NodeId,
        caller: Option<oneshot::Sender<MigrateResult>>,
    ) {
        super::steps::step("freeze", 0);
        if *to == self.me {
            return self.refuse_here(
                mobile,
                to,
                actor,
                caller,
                MigrateRefusal::AlreadyThere(to.clone()).into(),
            );
        }
        if self.known_peer(to).is_none() {
            return self.refuse_here(
                mobile,
                to,
                actor,
                caller,
                MigrateRefusal::Unreachable(to.clone()).into(),
            );
        }
        let interface = mobile.interface;
        let codec = self.codec();
        let mut d = mobile.state.lock();
        // Under the entry's lock: every frame delivered before is in the mailbox, so
        // in the snapshot; every later one is held by the entry once it is frozen.
        let encoded = {
            let snapshot = match actor.snapshot(&|t| interface.by_type(t).is_some()) {
                Ok(s) => s,
                Err(local) => {
                    drop(d);
                    let message = local.type_name.to_string();
                    return self.refuse_here(
                        mobile,
                        to,
                        actor,
                        caller,
                        MigrateRefusal::LocalOnlyMail { message }.into(),
                    );
                }
            };
            let mut msgs = Vec::with_capacity(snapshot.len());
            let mut asks = Vec::new();
            let mut failed = None;
            for (i, q) in snapshot.iter().enumerate() {
                // A runtime notice (`Terminated`) is not in the interface: not wired yet.
                let Some(entry) = interface.by_type(q.type_id) else {
                    failed = Some(
                        MigrateRefusal::LocalOnlyMail {
                            message: q.type_name.to_string(),
                        }
                        .into(),
                    );
                    break;
                };
                let payload = match (entry.encode)(q.message, &*codec) {
                    Ok(p) => p,
                    Err(e) => {
                        failed = Some(MigrateFailure::Encode(e).into());
                        break;
                    }
                };
                // An ask's reply slot comes back with the commit; its reply route is
                // this node under a fresh request id (the slot is entered then).
                let reply = q.ask.then(|| {
                    let request = self.next_request();
                    asks.push((i, request, entry.decode_reply));
                    (self.me.clone(), request)
                });
                msgs.push(QueuedMessage {
                    message: entry.wire_name.to_string(),
                    payload,
                    origin: self.me.clone(),
                    seq: 0,
                    reply,
                    hops: 0,
                });
            }
            match failed {
                Some(e) => Err(e),
                None => Ok((msgs, asks)),
            }
        };
        let (msgs, asks) = match encoded {
            Ok(v) => v,
            Err(e) => {
                drop(d);
                return self.refuse_here(mobile, to, actor, caller, e);
            }
        };
        let state = match (mobile.mobility.encode_state)(actor.state(), &*codec) {
            Ok(s) => s,
            Err(e) => {
                drop(d);
                return self.refuse_here(
                    mobile,
                    to,
                    actor,
                    caller,
                    MigrateFailure::Encode(e).into(),
                );
            }
        };
        let state_bytes = state.len();
        let bytes = state.len() + msgs.iter().map(|m| m.payload.len()).sum::<usize>();
        let snapshot_len = msgs.len();
        let migration = self.next_request();
        match d.entry.freeze(migration, to, state, msgs) {
            Ok(mut outs) => {
                // Watchers and links travel in the offer (design §3.5, `control.rs`).
                let (w, l) = self.attached(mobile);
                for out in &mut outs {
                    if let super::entry::Out::Send {
                        frame:
                            crate::wire::Traffic::MigrateOffer {
                                watchers, links, ..
                            },
                        ..
                    } = out
                    {
                        watchers.clone_from(&w);
                        links.clone_from(&l);
                    }
                }
                self.migrations
                    .lock()
                    .insert((to.clone(), migration), mobile.clone());
                d.moving = Some(Moving {
                    migration,
                    target: to.clone(),
                    frozen: actor,
                    asks,
                    snapshot_len,
                    held: 0,
                    bytes,
                    state_bytes,
                    started: Instant::now(),
                    caller,
                    span: trace::span(&self.me, mobile.token, mobile.interface.actor_type, to),
                });
                self.perform(mobile, &mut d, outs);
                drop(d);
                // A target that never answers must not keep the actor frozen: after
                // the request timeout the source aborts (`MigrateAbort`) and resumes,
                // unless the move ended first (`deadlines.rs`).
                self.abort_after_timeout(mobile, migration);
            }
            Err(e) => {
                drop(d);
                let e: MigrateError = match e {
                    FreezeError::AlreadyThere(n) => MigrateRefusal::AlreadyThere(n).into(),
                    FreezeError::Unreachable(n) => MigrateRefusal::Unreachable(n).into(),
                    FreezeError::NotHost => MigrateRefusal::NotHere.into(),
                };
                self.refuse_here(mobile, to, actor, caller, e);
            }
        }
    }
}
