//! The scheduler's choices: every event that may happen next in a state, and what
//! each does. The explorer tries all of them (exhaustive) or picks one at random
//! (seeded walks); nothing else in the model is nondeterministic.

use std::fmt;

use crate::model::{Config, Frame, NodeIx, Place, State, bit};
use crate::node::Sim;
use crate::props::Event;

/// One step of the system.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// A client sends its next message.
    Send(u8),
    /// The frame at the head of link `from -> to` is read and handled by `to`.
    Deliver(NodeIx, NodeIx),
    /// The host handles the message at the head of its mailbox.
    Handle(NodeIx),
    /// The host starts moving the actor to a node (`cx.migrate_to`, between messages).
    Migrate(NodeIx, NodeIx),
    /// A frozen source's hand-over timeout fires.
    Timeout(NodeIx),
    /// A node crashes.
    Crash(NodeIx),
    /// A node declares a crashed node lost.
    Detect(NodeIx, NodeIx),
}

impl fmt::Debug for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Action::Send(c) => write!(f, "client {c} sends"),
            Action::Deliver(a, b) => write!(f, "deliver {a}->{b}"),
            Action::Handle(n) => write!(f, "node {n} handles"),
            Action::Migrate(n, t) => write!(f, "node {n} migrates to {t}"),
            Action::Timeout(n) => write!(f, "node {n} times out"),
            Action::Crash(n) => write!(f, "node {n} crashes"),
            Action::Detect(n, k) => write!(f, "node {n} declares {k} lost"),
        }
    }
}

/// Every action enabled in `st`, in a fixed order (the explorer is deterministic).
pub fn enabled(cfg: &Config, st: &State) -> Vec<Action> {
    let mut out = Vec::new();
    for (c, client) in cfg.clients.iter().enumerate() {
        if usize::from(st.sent[c]) < client.asks.len() && st.nodes[usize::from(client.node)].alive {
            out.push(Action::Send(c as u8));
        }
    }
    for from in 0..cfg.nodes {
        for to in 0..cfg.nodes {
            let to_node = &st.nodes[usize::from(to)];
            if from != to
                && to_node.alive
                && to_node.lost & bit(from) == 0
                && !st.links[usize::from(from) * crate::model::MAX_NODES + usize::from(to)]
                    .is_empty()
            {
                out.push(Action::Deliver(from, to));
            }
        }
    }
    for (i, node) in st.nodes.iter().enumerate() {
        let n = i as NodeIx;
        if !node.alive {
            continue;
        }
        match &node.place {
            Place::Host { mailbox, .. } => {
                if !mailbox.is_empty() {
                    out.push(Action::Handle(n));
                }
                if st.ghost.moves < cfg.max_moves {
                    out.extend(
                        (0..cfg.nodes)
                            .filter(|&t| t != n)
                            .map(|t| Action::Migrate(n, t)),
                    );
                }
            }
            Place::Frozen { .. } if cfg.timeouts => out.push(Action::Timeout(n)),
            _ => {}
        }
    }
    if st.ghost.crashes < cfg.max_crashes {
        for k in 0..cfg.nodes {
            if st.nodes[usize::from(k)].alive && cfg.crashable & bit(k) != 0 {
                out.push(Action::Crash(k));
            }
        }
    }
    for n in 0..cfg.nodes {
        for k in 0..cfg.nodes {
            let node = &st.nodes[usize::from(n)];
            if node.alive && !st.nodes[usize::from(k)].alive && node.lost & bit(k) == 0 {
                out.push(Action::Detect(n, k));
            }
        }
    }
    out
}

/// Applies `action` to `st`; returns the events it fired.
pub fn apply(cfg: &Config, st: &mut State, action: Action) -> u16 {
    let mut sim = Sim { cfg, st, events: 0 };
    match action {
        Action::Send(c) => sim.client_send(usize::from(c)),
        Action::Deliver(from, to) => {
            let frame = sim
                .st
                .link(from, to)
                .pop_front()
                .expect("deliver on an empty link");
            sim.receive(from, to, frame);
        }
        Action::Handle(n) => sim.handle(n),
        Action::Migrate(n, t) => sim.start_move(n, t),
        Action::Timeout(n) => sim.timeout(n),
        Action::Crash(k) => sim.crash(k),
        Action::Detect(n, k) => sim.detect(n, k),
    }
    sim.events
}

impl Sim<'_> {
    /// `to` handles one frame from `from`.
    fn receive(&mut self, from: NodeIx, to: NodeIx, frame: Frame) {
        match frame {
            Frame::Fwd(item) => self.receive_item(from, to, item),
            Frame::Hint { at } => self.receive_hint(from, to, at),
            Frame::FlushAck {
                epoch,
                nonce,
                frozen_for,
            } => self.receive_flush_ack(from, to, epoch, nonce, frozen_for),
            Frame::Handover {
                mv,
                epoch,
                snapshot,
                hw,
            } => {
                self.receive_handover(from, to, mv, epoch, snapshot, hw);
            }
            Frame::Ready { mv } => self.receive_ready(from, to, mv),
            Frame::Refuse { mv } => self.receive_refuse(from, to, mv),
            Frame::Commit {
                mv,
                epoch,
                held,
                hw,
            } => self.receive_commit(from, to, mv, epoch, held, hw),
            Frame::Abort { mv } => self.receive_abort(from, to, mv),
            Frame::Reply { id, ok } => self.complete(to, id, ok),
            Frame::AskAt {
                id,
                at,
                hops,
                confirmed,
            } => self.rebind(to, id, from, at, hops, confirmed),
            Frame::Located { epoch } => self.receive_located(from, to, epoch),
            Frame::Locate { nonce, again } => self.receive_locate(from, to, nonce, again),

            Frame::Unpin => self.receive_unpin(from, to),
            Frame::Reflush { ttl } => self.receive_reflush(from, to, ttl),
            Frame::Gone { nonce, via } => self.receive_gone(to, nonce, via),
        }
    }

    /// The host handles the head of its mailbox: the message counts as handled, and an
    /// ask's reply goes to its origin node.
    fn handle(&mut self, n: NodeIx) {
        let Place::Host { mailbox, .. } = &mut self.node(n).place else {
            unreachable!()
        };
        let Some(crate::model::Item::Msg { id, ask, .. }) = mailbox.pop_front() else {
            unreachable!("only messages are queued for the actor")
        };
        let epoch = self.node(n).epoch;
        let g = self.st.msg(id);
        g.handled += 1;
        let last = &mut self.st.ghost.last_handled[usize::from(id.client)];
        if id.index < *last {
            self.st.ghost.fifo_broken = true;
        }
        *last = (*last).max(id.index + 1);
        if epoch >= 2 {
            self.fire(Event::HandledAfterTwoMoves);
        }
        if ask {
            let origin = self.origin(id);
            if origin == n {
                self.complete(n, id, true);
            } else {
                self.st.send(n, origin, Frame::Reply { id, ok: true });
            }
        }
    }
}
