//! The properties the explorer checks, by name.
//!
//! # Definitions
//! - A message is **accepted** when its client's send call returned `Ok`: its node
//!   took it into the actor's mailbox, the frozen/prepared held queue, a route buffer
//!   or the link toward its route. Only a node that already knows the actor is lost
//!   refuses (the ask then fails at the call).
//! - A node **held** a message if it was ever in that node's mailbox, held queue,
//!   route buffer or snapshot, or addressed to it on a link (the ghost's `custody`).
//! - A node has **custody of the actor** while it is the host, a frozen source, a
//!   prepared target that has sent Ready, or a source whose Commit is on its way
//!   (`State::has_actor_custody`). That is the protocol's unavoidable window: the loss
//!   of a node then may lose the actor (never duplicate it).
//! - The actor is **alive** at the end when exactly one live node is its host.
//!
//! # Always (checked in every state)
//! - [`Property::SingleOwner`]: at most one live node is the host or a frozen source,
//!   so two copies never run.
//! - [`Property::AtMostOnce`]: no message is handled twice.
//! - [`Property::Fifo`]: each client's messages are handled in sending order (gaps
//!   allowed only for lost messages).
//! - [`Property::OneReplyPerAsk`]: no ask gets two replies.
//! - [`Property::NoStrayFrames`]: no frame reaches a forwarder that dropped its entry.
//!
//! # At the end (checked in every terminal state: nothing more can happen)
//! - [`Property::ExactlyOnce`]: if the actor is alive, every accepted message that no
//!   crashed node held was handled exactly once.
//! - [`Property::AsksAnswered`]: every accepted ask whose caller's node is alive was
//!   answered (reply or error), with a reply if the actor is alive and no crashed
//!   node held it.
//! - [`Property::ActorSurvives`]: the actor is alive unless a node crashed while it had
//!   custody of it (so: a target lost before it sent Ready leaves the actor at the
//!   source, a source lost after the target got Commit leaves it at the target).
//! - [`Property::Progress`]: every move ended (moved, refused or failed), no node is
//!   frozen or prepared, and no route repair is stuck.
//! - [`Property::ForwardersCollected`]: if the actor is alive, no node other than the
//!   host and the birth node keeps a forwarding entry or a holder pin.
//!
//! # Sometimes
//! [`Event`]s the explorer saw happen at least once: evidence that a configuration
//! really exercised forwarding, switching, relocation, collection and so on.

use crate::model::{Config, HOME, Place, Route, State};

/// A named property (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Property {
    /// Never two running copies.
    SingleOwner,
    /// No message handled twice.
    AtMostOnce,
    /// Per client, handled in sending order.
    Fifo,
    /// No ask gets two replies.
    OneReplyPerAsk,
    /// No frame reaches a collected forwarder.
    NoStrayFrames,
    /// Accepted messages handled exactly once (see the definitions).
    ExactlyOnce,
    /// Every accepted ask answered once, wherever the actor went.
    AsksAnswered,
    /// The actor survives unless a node with its custody crashed.
    ActorSurvives,
    /// Moves end, the actor resumes, repairs finish.
    Progress,
    /// Forwarding entries are removed once no sender can need them.
    ForwardersCollected,
}

/// Something that happened in a run (a `sometimes` property).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum Event {
    /// A move committed.
    Moved = 1,
    /// A target started running the actor.
    Activated = 1 << 1,
    /// A move was refused.
    Refused = 1 << 2,
    /// A move failed (timeout or the target's loss) and the source resumed.
    ResumedAtSource = 1 << 3,
    /// A forwarder passed an item on.
    Forwarded = 1 << 4,
    /// A sender switched routes after its flush was acknowledged.
    Switched = 1 << 5,
    /// A node started relocating the actor after its route's node was lost.
    Relocating = 1 << 6,
    /// A relocation found the actor.
    Relocated = 1 << 7,
    /// A forwarder dropped its entry.
    ForwarderCollected = 1 << 8,
    /// A host dropped a straggler from a dead path.
    StragglerDropped = 1 << 9,
    /// A message was handled after two moves (a chain).
    HandledAfterTwoMoves = 1 << 10,
    /// A relocation found no copy: the actor was lost.
    ActorLost = 1 << 11,
    /// A target whose route did not lead to the source answered Ready without a
    /// drain (its route was clean).
    DrainSkipped = 1 << 12,
}

impl Event {
    /// Every event, for reports.
    pub const ALL: [Event; 13] = [
        Event::Moved,
        Event::Activated,
        Event::Refused,
        Event::ResumedAtSource,
        Event::Forwarded,
        Event::Switched,
        Event::Relocating,
        Event::Relocated,
        Event::ForwarderCollected,
        Event::StragglerDropped,
        Event::HandledAfterTwoMoves,
        Event::ActorLost,
        Event::DrainSkipped,
    ];

    /// Whether `mask` has this event.
    pub fn in_mask(self, mask: u16) -> bool {
        mask & self as u16 != 0
    }
}

/// The first "always" property `st` breaks, if any.
pub fn check_always(st: &State) -> Option<Property> {
    if st.owners().count() > 1 {
        return Some(Property::SingleOwner);
    }
    if st.ghost.msgs.iter().any(|m| m.handled > 1) {
        return Some(Property::AtMostOnce);
    }
    if st.ghost.fifo_broken {
        return Some(Property::Fifo);
    }
    if st.ghost.msgs.iter().any(|m| m.replies > 1) {
        return Some(Property::OneReplyPerAsk);
    }
    if st.ghost.stray > 0 {
        return Some(Property::NoStrayFrames);
    }
    None
}

/// The first "at the end" property the terminal state `st` breaks, if any.
pub fn check_terminal(cfg: &Config, st: &State) -> Option<Property> {
    let crashed = st
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| !n.alive)
        .fold(0u8, |m, (i, _)| m | (1 << i));
    let hosts: Vec<usize> = st
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.alive && matches!(n.place, Place::Host { .. }))
        .map(|(i, _)| i)
        .collect();
    let alive = hosts.len() == 1;
    let g = &st.ghost;
    let stuck = st.nodes.iter().any(|n| {
        n.alive
            && match &n.place {
                Place::Frozen { .. } | Place::Prepared { .. } => true,
                Place::Away { route } => {
                    matches!(route, Route::Switching { .. } | Route::Relocating { .. })
                }
                Place::Host { .. } => false,
            }
    });
    if stuck || g.moves != g.moved + g.refused + g.failed {
        return Some(Property::Progress);
    }
    if !alive && !g.actor_at_risk {
        return Some(Property::ActorSurvives);
    }
    for (c, client) in cfg.clients.iter().enumerate() {
        for (i, &ask) in client.asks.iter().enumerate() {
            let m = &g.msgs[c * crate::model::MAX_SCRIPT + i];
            if !m.accepted {
                continue;
            }
            let clean = alive && m.custody & crashed == 0;
            if clean && m.handled != 1 {
                return Some(Property::ExactlyOnce);
            }
            let caller_alive = crashed & (1 << client.node) == 0;
            if ask && caller_alive && (!m.answered || (clean && !m.answered_ok)) {
                return Some(Property::AsksAnswered);
            }
        }
    }
    if alive {
        let leftover = st.nodes.iter().enumerate().any(|(i, n)| {
            n.alive
                && i != usize::from(HOME)
                && matches!(n.place, Place::Away { .. })
                && (n.export || n.holders.iter().any(|&h| h > 0))
        });
        if leftover {
            return Some(Property::ForwardersCollected);
        }
    }
    None
}
