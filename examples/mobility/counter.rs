//! The mobile actor of the mobility demo, shared by `examples/mobility.rs` (two nodes
//! in one process) and the `odeon-node` binary's `migrate` step (one node per process).
//!
//! `Counter` counts numbered messages and checks, as they arrive, that each sender's
//! numbers come exactly once and in order: a lost, repeated or overtaken message is
//! written down in `errors`, whichever node the counter runs on at the time.

use std::collections::BTreeMap;
use std::sync::Mutex;

use odeon::{Actor, Context, Handler, Message, SystemHandle};
use odeon_remote::MigrateFromHandler;
use odeon_remote::wire::NodeId;
use serde::{Deserialize, Serialize};

/// The node name of each system in this process, for `Whereabouts` (a handler sees
/// its system, not its node).
static NAMES: Mutex<Vec<(SystemHandle, String)>> = Mutex::new(Vec::new());

/// Says that `system` runs the node called `name`.
pub fn name_system(system: SystemHandle, name: &str) {
    if let Ok(mut names) = NAMES.lock() {
        names.push((system, name.to_string()));
    }
}

fn node_name(system: &SystemHandle) -> String {
    NAMES
        .lock()
        .ok()
        .and_then(|names| {
            names
                .iter()
                .find(|(s, _)| s.same_system(system))
                .map(|(_, n)| n.clone())
        })
        .unwrap_or_default()
}

/// Counts numbered messages, checking each sender's order; moves when told to. Its
/// whole state travels with it (it is small: one number per sender).
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Counter {
    count: u64,
    /// The number each sender is expected to send next.
    next: BTreeMap<u32, u64>,
    /// The first order violations seen (at most `MAX_ERRORS`).
    errors: Vec<String>,
    /// The nodes it arrived on, in order.
    arrivals: Vec<String>,
}

const MAX_ERRORS: usize = 20;

impl Counter {
    fn note(&mut self, sender: u32, n: u64) {
        self.count += 1;
        let expected = self.next.entry(sender).or_insert(0);
        if n != *expected && self.errors.len() < MAX_ERRORS {
            self.errors
                .push(format!("sender {sender}: got {n}, expected {expected}"));
        }
        *expected = n + 1;
    }
}

impl Actor for Counter {
    fn migrated(&mut self, cx: &mut Context<Self>) {
        self.arrivals.push(node_name(&cx.system()));
    }
}

/// Message number `n` from `sender` (one-way).
#[derive(Debug, Serialize, Deserialize)]
pub struct Numbered {
    /// Who sends it.
    pub sender: u32,
    /// Its number, from 0, one more each time.
    pub n: u64,
}
impl Message for Numbered {
    type Reply = ();
}
impl Handler<Numbered> for Counter {
    fn handle(&mut self, m: Numbered, _: &mut Context<Self>) {
        self.note(m.sender, m.n);
    }
}

/// The same as [`Numbered`], answered with its number.
#[derive(Debug, Serialize, Deserialize)]
pub struct NumberedAsk {
    /// Who sends it.
    pub sender: u32,
    /// Its number.
    pub n: u64,
}
impl Message for NumberedAsk {
    type Reply = u64;
}
impl Handler<NumberedAsk> for Counter {
    fn handle(&mut self, m: NumberedAsk, _: &mut Context<Self>) -> u64 {
        self.note(m.sender, m.n);
        m.n
    }
}

/// What the counter saw.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    /// Messages counted.
    pub count: u64,
    /// Per sender, the number after the last one it got.
    pub next: BTreeMap<u32, u64>,
    /// Order violations (empty if every sender's messages came once, in order).
    pub errors: Vec<String>,
}

/// Asks for the [`Tally`].
#[derive(Debug, Serialize, Deserialize)]
pub struct Report;
impl Message for Report {
    type Reply = Tally;
}
impl Handler<Report> for Counter {
    fn handle(&mut self, _: Report, _: &mut Context<Self>) -> Tally {
        Tally {
            count: self.count,
            next: self.next.clone(),
            errors: self.errors.clone(),
        }
    }
}

/// Asks where the counter runs now, and the nodes it arrived on so far.
#[derive(Debug, Serialize, Deserialize)]
pub struct Whereabouts;
impl Message for Whereabouts {
    type Reply = (String, Vec<String>);
}
impl Handler<Whereabouts> for Counter {
    fn handle(&mut self, _: Whereabouts, cx: &mut Context<Self>) -> (String, Vec<String>) {
        (node_name(&cx.system()), self.arrivals.clone())
    }
}

/// Move to this node after this message (`cx.migrate_to`): works through any ref,
/// wherever the counter runs.
#[derive(Debug, Serialize, Deserialize)]
pub struct GoTo(pub NodeId);
impl Message for GoTo {
    type Reply = ();
}
impl Handler<GoTo> for Counter {
    fn handle(&mut self, m: GoTo, cx: &mut Context<Self>) {
        cx.migrate_to(&m.0);
    }
}

odeon_remote::mobile_actor!(Counter = "demo.Counter" {
    Numbered = "demo.Numbered",
    NumberedAsk = "demo.NumberedAsk",
    Report = "demo.Report",
    Whereabouts = "demo.Whereabouts",
    GoTo = "demo.GoTo",
});
