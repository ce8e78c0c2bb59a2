//! Live actor migration: the protocol, as pure state machines.
//!
//! This module is the design document of mobility in code form. The full design, with
//! the API, the cost and the open questions, is `docs/design/mobility.md`; the
//! protocol's specification is the model-checked crate `odeon-mobility-model`, and
//! every transition here is a port of a model function of the same name (each
//! function's docs name its twin). A change to the protocol is tried in the model
//! first.
//!
//! # Status
//! The state machines are pure: a driver feeds a [`MobileEntry`](entry::MobileEntry)
//! events (a local send, a frame from a peer, a freeze, a timeout, a peer declared
//! lost) and performs the [`Out`](entry::Out)puts it returns. The tests in `tests/`
//! drive several entries over FIFO queues, frame by frame.
//!
//! The driver (`driver.rs`, `source.rs`, `frames.rs`, `stub.rs`) wires them to real
//! nodes for the **happy path** (design §7 steps 2–3, 4 minimal, 7): `NodeInner.mobile`
//! holds one [`Mobile`](driver::Mobile) per actor token; hand-over frames are routed
//! by move id (`NodeInner.migrations`); remote refs send through a
//! [`MobileEndpoint`](stub::MobileEndpoint) and the source's stub cell through a
//! [`Stub`](stub::Stub); asks sent through an entry are answered into the node-level
//! `NodeInner.mobile_asks`. Who holds messages while the actor is frozen is in
//! `driver.rs`. A peer declared lost is fed to every entry (`mobile_node_lost`): a
//! target lost before Ready fails the move and the actor resumes; routes through the
//! lost node relocate (step 11) and find the host again (tested: the node the actor
//! left lost, its birth node lost, and its host lost, after which sends fail with
//! `Unreachable`). `faults.rs` covers what the entry cannot see: a frame an entry
//! sends to a peer already marked lost, before the loss reached the entries, goes
//! back on the route once the entry learned it; a ref whose birth node is lost or
//! unknown gets an entry that relocates from the start. A node with no entry answers
//! a relocation probe with `Gone`. Mobile refs travel inside messages (written with
//! the birth identity). An offer the link refuses (larger than `max_frame`) fails the
//! move at once (`MigrateFailure::NotSent`). Collection (step 10, `collect.rs`):
//! `Out::Collected` drops the node's ref to the stub, and the table entry goes once
//! no local ref, watch or waiting control uses it
//! ([`Node::mobile_counts`](crate::Node::mobile_counts)). A forgotten entry is retired:
//! a thread that found it before it was forgotten looks the token up again and uses
//! a fresh entry (reusing it stalled moves under load; `tests/remote_mobility_rings.rs`).
//!
//! **Control of moved actors** (`control.rs`, design §2.4, §3.5): `stop`, `kill`,
//! `watch`, `unwatch`, `link`, `unlink` and `migrate_to` on any ref to a mobile actor
//! (a remote ref's [`MobileEndpoint`](stub::MobileEndpoint), or a stale local ref on a
//! node it left, through the stub's [`Stub`](stub::Stub)) travel its route as
//! numbered control items, so they keep per-sender order with messages and reach it
//! after any number of moves. A forwarded stop joins the host's mailbox: messages its
//! node sent before are handled first. Watchers and links travel in the offer
//! (`MigrateOffer.watchers`/`links`); the host sends `Terminated` when the actor
//! stops and reports itself with `WatchAt`; a watch bound to a lost node ends with
//! `NodeLost`. Tested in `tests/remote_mobility_control.rs`.
//!
//! **Ask bindings** (`binding.rs`, §3.3): `Out::Rebind` and `AskAt` update the
//! node-level binding of each ask in `NodeInner.mobile_asks`; an ask bound to a node
//! declared lost fails at once with `AskError::Unreachable`. A direct ask to the host
//! draws no `AskAt` (the first hop's receipt is not reported; the model does the
//! same). Hop counters are a byte compared in serial-number order (RFC 1982).
//!
//! **Re-binding after a loss** (`rewatch.rs`): a watch that the lost node may have
//! held is sent again through the (relocating) route and ends with `NodeLost` only if
//! the actor is not found; asks keep the rules of `binding.rs` (answered if the host
//! has them, `Unreachable` at once if they may have died with the node).
//!
//! **Watches are asks** (`rewatch.rs`): the first `Watch` item has a reply route, so
//! a path that cannot take it (a dead route, a node with no entry, a straggler) fails
//! it back and the watch ends with `NodeLost`; a host whose actor stopped tells the
//! watcher its end.
//!
//! Not wired yet: names travelling with the actor (§3.8; a name stays on the node
//! that registered it and goes when the actor stops, `node/registry.rs`) and
//! chunking of the mailbox (the state is chunked, `chunk.rs`; the rest of the offer
//! must fit in one frame). So parts of the module are still dead code.
//!
//! The API is [`MigrateExt`](api::MigrateExt) and
//! [`MigrateFromHandler`](api::MigrateFromHandler) (`api.rs`); a mobile type is
//! declared with [`mobile_actor!`](crate::mobile_actor) and accepted by a node with
//! [`NodeBuilder::mobile`](crate::NodeBuilder::mobile).
//!
//! # Types
//! - [`MobileEntry`](entry::MobileEntry): one per (node, actor identity). Its
//!   **place** is `Host`, `Frozen` (source of a hand-over), `Prepared` (target) or
//!   `Away { route }`; its **route** is `Direct(node)`, `Switching` (a flush is out,
//!   later items buffered), `Relocating` (probes out) or `Dead`. It keeps the
//!   **epoch** (moves committed), the **holders** (pins per node that routes through
//!   it), whether it is **exported**, `seq_out`, the current **nonce**, and on an
//!   owner the **high-water marks**.
//! - [`Item`](entry::Item): what travels along a route: a message
//!   ([`QueuedMessage`](crate::wire::QueuedMessage): origin, seq, reply route, hops)
//!   or a flush.
//! - Frames are the wire's [`Traffic`](crate::wire::Traffic) version-3 variants.
//!
//! Files: `entry.rs` (data, `send`, `receive`), `route.rs` (steps 7–10),
//! `repair.rs` (step 11), `handover.rs` (steps 1–6); the driver's side: `driver.rs`,
//! `source.rs`, `frames.rs`, `stub.rs`, `binding.rs` (ask bindings), `control.rs`
//! (control of moved actors, watches and links), `collect.rs` (step 10's table and
//! stubs), `faults.rs` (losses the entry cannot see), `deadlines.rs` (the source's
//! hand-over timeouts: one queue and one sweeper task per node, no task per move),
//! `steps.rs` (per-step trace events, to find where a move's time goes).
//!
//! # The protocol
//! Per node and actor, one entry. Messages a node sends along a route carry
//! `(origin, seq)`; messages sent on the owner's node go straight into the mailbox,
//! unnumbered. The **owner** is the host, or the frozen source during a hand-over.
//!
//! 1. **Freeze** (source, between two messages; `freeze`). The mailbox is the
//!    snapshot; what arrives from now on is held in arrival order; flushes reaching
//!    the frozen owner are acknowledged at once.
//!    *Invariant: exactly one owner (this node); nothing handled until commit or
//!    abort.*
//! 2. **Snapshot and ship** (`MigrateOffer`: state, mailbox with origins, seqs and
//!    reply routes, high-water marks). *Invariant: the source keeps its frozen copy
//!    and everything held; the target's copy cannot run.*
//! 3. **Prepare** (target; `receive_offer`). It holds the copy, does not run it, and
//!    holds frames for the actor. If its route leads straight to the source it
//!    answers `MigrateReady` at once (what it sent is on that link, ahead of Ready).
//!    If its route is direct and **clean** (`route_used` is false: it put no
//!    message, its own or forwarded, on the route since the route was last drained
//!    (a forwarded flush does not count: its origin waits for an owner's
//!    acknowledgement before sending more), that is
//!    since a switch ended with nothing buffered, since it stopped owning the actor,
//!    or ever) it answers Ready at once too: everything it ever sent toward the
//!    actor is already in the actor's custody. Otherwise it **drains**: a flush
//!    through its route (step 8), and Ready only when the source itself, frozen for
//!    this move, acknowledges it; its buffer goes out ahead of Ready on the same
//!    link. An acknowledgement from an older owner only ends that switch (flush
//!    again); one from any other owner proves the source left the move (discard).
//!    *Invariant: when Ready is sent, every message this node sent or forwarded
//!    before is queued at the source, or was handled.*
//! 4. **Commit** (source, on Ready; `receive_ready`). The commit point: the source
//!    becomes `Away { Direct(target) }`, sends `MigrateCommit { held, high_water }`,
//!    reports the shipped asks "sent to target", hints all its holders and reports
//!    `Moved`. On `MigrateRefused`, its timeout or the target's loss it sends
//!    `MigrateAbort` (timeout) and resumes: snapshot, then held, in order.
//!    *Invariant: the source commits at most once per move and never resumes after
//!    it; the target never runs without Commit: two copies never run.*
//! 5. **Activate** (target, on Commit; `receive_commit`). It runs the snapshot, then
//!    the commit's held messages, then what it held (through step 9's check); raises
//!    `hw[self]` to its `seq_out`; unpins its route's node; pins the source; confirms
//!    the shipped asks; sends `Located { epoch }` to the birth node. If it loses the
//!    source first it discards: the snapshot's asks fail back, what it held goes on
//!    along its route. *Invariant: the actor runs here with its whole mailbox;
//!    everything sent to it before by any path is ahead of what comes later from the
//!    same origin.*
//! 6. **Directory** (birth node, on `Located`; `receive_located`). A newer epoch on a
//!    route that leads elsewhere starts a switch. The birth node never drops its
//!    entry while the actor lives. *Invariant: the birth node's route leads to the
//!    host in finitely many hops, eventually directly.*
//! 7. **Lazy repair and eager hints** (`receive_item`, `hint_holders`). A forwarder
//!    passing on a frame from a node it has not hinted since it stopped being host
//!    sends it `Hint`; at commit the source hints every holder; the birth node pins a
//!    sender at first contact. *Invariant: a node that routes through a non-owner is
//!    hinted at least once.*
//! 8. **Switch** (`receive_hint`, `start_switch`, `receive_flush_ack`). A node with
//!    `Direct(h)` hinted by `h` sends `Flush { origin: self, nonce }` through `h` and
//!    buffers everything later until the owner's `FlushAck` (which pins it there);
//!    then its route is `Direct(owner)`, the buffer goes out in order, and it
//!    `Unpin`s `h`. Stale acknowledgements are released with `Unpin`.
//!    *Invariant: when the switch completes, every message sent on the old route is
//!    queued at an owner; later ones go after them.*
//! 9. **Stragglers** (`owner_take`). The owner takes a numbered message only above
//!    `hw[origin]`; an older one is dropped (an ask fails back). Only a crash makes
//!    one. *Invariant: per origin, the owner takes messages in increasing `seq`: it
//!    may skip, never reorder.*
//! 10. **Collection** (`gc`, `receive_unpin`). Pins are taken on acknowledging a flush
//!     as owner, on becoming host (the source's), on a relocation probe, and at first
//!     contact on the birth node; released by `Unpin` (after a switch, on becoming
//!     host, for a stale acknowledgement, at the end of a relocation) or when the
//!     holder is declared lost. A non-owner that is not the birth node drops its
//!     export when its pins reach zero. *Invariant: a node sends the actor's frames to
//!     a non-owner only while it holds a pin there: no frame reaches a dropped entry.*
//! 11. **Relocation** (`node_lost`, `relocate`, `receive_locate`,
//!     `finish_relocation`, `receive_gone`, `receive_reflush`). A node whose route's
//!     node is lost sends `Locate` to every live node; each pins it and sends a probe
//!     flush along its own route; only the owner acknowledges; the first
//!     acknowledgement is the new route, every other pin is released. No
//!     acknowledgement on any path: the actor is lost. Probes never wait in buffers.
//!     Every loss declaration sends `Reflush` to holders (flushes may have died).
//!     *Invariant: while the actor lives, its owner eventually acknowledges one probe;
//!     a route never loops.*
//!
//! # Why it is right, in brief (design §3.1, §3.2, §3.7)
//! - **FIFO per sender**: a route is a FIFO pipe (FIFO links, forwarders append in
//!   arrival order). It changes only by a switch (the new pipe is used after the
//!   owner acknowledged the flush that went last through the old one), a hand-over
//!   (held continues the mailbox; the target's drain puts its earlier messages at the
//!   source before Ready, and a clean route has none on the way), or a relocation
//!   after a crash (step 9 drops stragglers).
//! - **Exactly once**: a message is in one place at a time (mailbox, held queue,
//!   buffer, link) except the snapshot between steps 2 and 4, which is harmless
//!   because the target runs only on Commit and the source never resumes after
//!   committing. Without crashes every message reaches the owner; only a crashed node
//!   loses messages, and in the window Ready..Commit the loss of either node loses the
//!   actor (never duplicates it).
//! - **Collection**: a node routes through F only after F pinned it, and unpins only
//!   after its last frame to F (same link, after it); so zero pins means nothing from
//!   anyone is still on its way to F, and F's entry can go.
//!
//! The model checks these as `SingleOwner`, `AtMostOnce`, `Fifo`, `ExactlyOnce`,
//! `NoStrayFrames`, `ForwardersCollected` and more (design §8); the tests here check
//! the same properties on these state machines (`tests.rs`).

#![allow(dead_code)]

pub(crate) mod abort;
pub(crate) mod api;
pub(crate) mod binding;
pub(crate) mod chunk;
pub(crate) mod collect;
pub(crate) mod control;
pub(crate) mod deadlines;
pub(crate) mod driver;
pub(crate) mod entry;
pub(crate) mod faults;
pub(crate) mod frames;
pub(crate) mod handover;
pub(crate) mod repair;
pub(crate) mod rewatch;
pub(crate) mod route;
pub(crate) mod source;
pub(crate) mod steps;
pub(crate) mod stub;
pub(crate) mod trace;

#[cfg(test)]
mod tests;
