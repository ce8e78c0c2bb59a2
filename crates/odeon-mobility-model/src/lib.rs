//! # odeon-mobility-model: the migration protocol, checked
//!
//! An executable model of live actor migration in odeon (issue 14, designed in
//! `docs/design/mobility.md`) and an explorer that checks its properties over every
//! interleaving of small configurations and over seeded random schedules of larger
//! ones. It is the protocol's specification in code: the runtime's implementation
//! follows the same steps, and a change to the protocol is tried here first.
//!
//! ```
//! use odeon_mobility_model::{Client, Config, exhaustive};
//!
//! // Three nodes; the actor is born on node 0; a client on node 1 sends a tell and
//! // an ask; the actor may move once, to any node, at any moment.
//! let cfg = Config {
//!     nodes: 3,
//!     clients: vec![Client { node: 1, asks: vec![false, true] }],
//!     max_moves: 1,
//!     max_crashes: 0,
//!     crashable: 0,
//!     refusers: 0,
//!     timeouts: false,
//!     bugs: vec![],
//! };
//! let report = exhaustive(&cfg, 1_000_000);
//! assert!(report.violation.is_none() && !report.truncated);
//! assert!(report.states > 500);
//! ```
//!
//! # What is modelled
//! - **Nodes** (2–4) with one **mobile actor**, born on node [`HOME`]. Each node's
//!   view of the actor is a [`Place`]: host, frozen source, prepared target, or away
//!   with a [`Route`] (direct, switching, relocating, dead), plus its route holders'
//!   pins, its forwarding entry (`export`) and its clients' pending asks.
//! - **Links**: one FIFO queue per ordered pair of nodes, like odeon's one TCP link per
//!   pair. Any frame at the head of any link may be delivered next.
//! - **Clients** on any node send numbered tells and asks; the actor handles one
//!   message at a time; replies go back to the client's node.
//! - **The protocol**: freeze, snapshot, two-phase hand-over (Handover, Ready, Commit,
//!   Abort, Refuse), the source becoming a forwarder, the birth node's directory
//!   update, hints and flush-guarded route switching, the target draining its own
//!   route before Ready (skipped when no message went along it since it was last
//!   drained: `Node::route_used`), per-origin high-water marks against stragglers, ask binding,
//!   holder pins and forwarder collection, relocation after a loss.
//! - **Faults**: a node crashes at any step (bounded count, chosen nodes); frames it
//!   already sent may still be delivered until their receiver declares it lost (as
//!   bytes already in a socket buffer are read), frames to it are lost; every live
//!   node declares every crashed node lost, at a moment of the scheduler's choosing.
//!   A frozen source's timeout may fire at any moment.
//!
//! Not modelled (see the design's open questions): links that fail and recover within
//! `lost_after` (their frames are lost today; the runtime retransmits the hand-over's
//! control frames), false suspicions of live nodes, watchers and links, supervision,
//! bounded mailboxes, the actor's state itself (the properties read the ghost log of
//! handled messages instead), and the state's chunking: the offer is one atomic frame
//! here, which the runtime matches by acting on a chunked offer only once every chunk
//! arrived (`odeon-remote`'s `migration/chunk.rs`). A `Watch` answered or failed back
//! (issue 14) adds a reply to an item that already travels the route, not a step.
//!
//! # Properties
//! Named in [`Property`], defined precisely in the `props` module docs: single owner,
//! at most once, FIFO per sender, one reply per ask, no stray frames (always);
//! exactly once, asks answered, actor survives, progress, forwarders collected (in
//! every terminal state). [`Event`]s are the `sometimes` side: the tests assert that
//! each configuration really exercised forwarding, switching, relocation and so on.
//!
//! # Why a hand-written checker, not `stateright`
//! `stateright` would do the exhaustive part, and was the first candidate. This crate
//! has no dependencies instead, because:
//! - the model needs exactly one search (depth-first over fingerprinted states, with a
//!   trace) and one walker; both fit in `explore.rs` (about 200 lines), where a
//!   targeted mode ([`find`]: "does this defect break FIFO, whatever it breaks first?")
//!   and a depth limit that turns livelocks into [`Property::Progress`] failures were a
//!   few lines each;
//! - `stateright` brings its own dependency tree (an HTTP explorer UI among it) into a
//!   workspace that builds on two cores next to latency benchmarks;
//! - its actor abstraction models message passing without per-pair FIFO links; odeon's
//!   argument rests on them, so the links would be hand-written either way.
//!
//! The price is that the search has no partial-order reduction or symmetry: the
//! configurations stay small (see the tests for the counts: up to about a million
//! states per exhaustive test, 30,000 walks per random test).
//!
//! # Running
//! `cargo test -p odeon-mobility-model` runs the property tests (`tests/protocol.rs`)
//! and the mutation tests (`tests/mutations.rs`), about 20 s in all on two cores: the
//! crate is built with `opt-level = 3` in the dev profile too (root `Cargo.toml`).
//! `cargo run --release -p odeon-mobility-model --example explore -- CONFIG ...` runs
//! bigger searches (see that file).
//!
//! # Files
//! | file | what |
//! |---|---|
//! | `model.rs` | the state: nodes, places, routes, links, frames, ghost bookkeeping |
//! | `node.rs` | routing: accept, take as owner, forward, hint, flush, switch, collect |
//! | `handover.rs` | the two-phase hand-over, source and target |
//! | `repair.rs` | crashes, loss declarations, relocation |
//! | `actions.rs` | the scheduler's choices and frame dispatch |
//! | `props.rs` | the properties and events |
//! | `explore.rs` | exhaustive search, targeted search, random walks |

mod actions;
mod explore;
mod handover;
mod model;
mod node;
mod props;
mod repair;

pub use actions::{Action, apply, enabled};
pub use explore::{
    DEPTH_LIMIT, Report, SplitMix64, Violation, describe, exhaustive, find, random_walks,
};
pub use model::{
    Bug, Client, Config, Frame, Ghost, HOME, Item, MAX_NODES, MAX_SCRIPT, MsgGhost, MsgId, Node,
    NodeIx, NodeSet, Place, Route, State, bit,
};
pub use props::{Event, Property, check_always, check_terminal};
