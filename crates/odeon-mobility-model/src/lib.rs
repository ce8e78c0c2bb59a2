//! # odeon-mobility-model: the migration protocol, checked
//!
//! (Tour written below once the model settles.)

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
