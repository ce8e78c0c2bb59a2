//! A mobile actor and cluster helpers shared by the `remote_mobility_*` tests that
//! need several nodes (collection, faults).
#![allow(
    dead_code,
    unreachable_pub,
    missing_docs,
    missing_debug_implementations
)]

use std::time::Duration;

use crate::common::{Member, eventually, mesh, node_name, start_tuned};
use odeon::{Actor, ActorRef, Context, Handler, Message};
use odeon_remote::wire::NodeId;
use odeon_remote::{MigrateFromHandler, NodeBuilder};
use serde::{Deserialize, Serialize};

pub const WAIT: Duration = Duration::from_secs(30);

/// Records every (sender, n) it is sent, in handling order.
#[derive(Default, Serialize, Deserialize)]
pub struct Tally {
    pub log: Vec<(u32, u64)>,
    /// Padding carried in the state (to make it large).
    pub ballast: Vec<u8>,
    pub failures: Vec<String>,
    /// A ref handed over with `Keep` (not moved with the state).
    #[serde(skip)]
    pub kept: Option<ActorRef<Tally>>,
}

impl Actor for Tally {
    fn migration_failed(
        &mut self,
        _: &mut Context<Self>,
        error: &(dyn std::error::Error + 'static),
    ) {
        self.failures.push(error.to_string());
    }
}

#[derive(Serialize, Deserialize)]
pub struct Note(pub u32, pub u64);
impl Message for Note {
    type Reply = ();
}
impl Handler<Note> for Tally {
    fn handle(&mut self, m: Note, _: &mut Context<Self>) {
        self.log.push((m.0, m.1));
    }
}

/// The log so far.
#[derive(Serialize, Deserialize)]
pub struct Log;
impl Message for Log {
    type Reply = Vec<(u32, u64)>;
}
impl Handler<Log> for Tally {
    fn handle(&mut self, _: Log, _: &mut Context<Self>) -> Vec<(u32, u64)> {
        self.log.clone()
    }
}

/// `migration_failed` errors so far.
#[derive(Serialize, Deserialize)]
pub struct Failures;
impl Message for Failures {
    type Reply = Vec<String>;
}
impl Handler<Failures> for Tally {
    fn handle(&mut self, _: Failures, _: &mut Context<Self>) -> Vec<String> {
        self.failures.clone()
    }
}

/// Moves from inside a handler.
#[derive(Serialize, Deserialize)]
pub struct GoTo(pub NodeId);
impl Message for GoTo {
    type Reply = ();
}
impl Handler<GoTo> for Tally {
    fn handle(&mut self, m: GoTo, cx: &mut Context<Self>) {
        cx.migrate_to(&m.0);
    }
}

/// The actor's own ref, as it sees itself (travels inside a reply).
#[derive(Serialize, Deserialize)]
pub struct Me;
impl Message for Me {
    type Reply = ActorRef<Tally>;
}
impl Handler<Me> for Tally {
    fn handle(&mut self, _: Me, cx: &mut Context<Self>) -> ActorRef<Tally> {
        cx.myself()
    }
}

/// Forwards a ref to the actor inside a message (a mobile ref travelling as data).
#[derive(Serialize, Deserialize)]
pub struct Hold(pub ActorRef<Tally>);
impl Message for Hold {
    type Reply = u64;
}
impl Handler<Hold> for Tally {
    fn handle(&mut self, m: Hold, _: &mut Context<Self>) -> u64 {
        m.0.id().as_u64()
    }
}

/// Keeps a ref (decoded where the actor runs).
#[derive(Serialize, Deserialize)]
pub struct Keep(pub ActorRef<Tally>);
impl Message for Keep {
    type Reply = ();
}
impl Handler<Keep> for Tally {
    fn handle(&mut self, m: Keep, _: &mut Context<Self>) {
        self.kept = Some(m.0);
    }
}

/// The ref kept last.
#[derive(Serialize, Deserialize)]
pub struct Kept;
impl Message for Kept {
    type Reply = Option<ActorRef<Tally>>;
}
impl Handler<Kept> for Tally {
    fn handle(&mut self, _: Kept, _: &mut Context<Self>) -> Option<ActorRef<Tally>> {
        self.kept.clone()
    }
}

odeon_remote::mobile_actor!(Tally = "util.Tally" {
    Note = "util.Note",
    Log = "util.Log",
    Failures = "util.Failures",
    GoTo = "util.GoTo",
    Me = "util.Me",
    Hold = "util.Hold",
    Where = "util.Where",
    Keep = "util.Keep",
    Kept = "util.Kept",
});

/// A node that accepts `Tally` arrivals, tuned by `tune`.
pub fn start(
    name: &str,
    seeds: &[std::net::SocketAddr],
    tune: impl FnOnce(NodeBuilder) -> NodeBuilder,
) -> Member {
    start_tuned(name, seeds, |b| tune(b.mobile::<Tally>()))
}

/// Nodes that all know each other.
pub fn cluster(names: &[&str], tune: impl Fn(NodeBuilder) -> NodeBuilder) -> Vec<Member> {
    mesh(names, |_, b| tune(b.mobile::<Tally>()))
}

pub fn lookup(m: &Member, name: &str) -> ActorRef<Tally> {
    eventually(WAIT, || {
        m.system.block_on(m.node().lookup::<Tally>(name)).ok()
    })
    .expect("the name is found")
}

/// Moves the actor (registered as "tally") with a `GoTo` sent through `via`, and
/// waits until it runs on `to` (a lookup there resolves to a local ref).
pub fn move_to(via: &ActorRef<Tally>, to: &Member) {
    via.tell(GoTo(to.node().id().clone()))
        .expect("tell accepted");
    eventually(WAIT, || hosted_on(to).then_some(()))
        .unwrap_or_else(|| panic!("the actor reached {}", to.node().id()));
}

/// Whether the actor registered as "tally" runs on `m` (asked from `m`).
pub fn hosted_on(m: &Member) -> bool {
    let Ok(r) = m.system.block_on(m.node().lookup::<Tally>("tally")) else {
        return false;
    };
    m.system
        .block_on(r.ask(Where))
        .is_ok_and(|at| at == m.node().id().name)
}

/// The name of the node the actor runs on.
#[derive(Serialize, Deserialize)]
pub struct Where;
impl Message for Where {
    type Reply = String;
}
impl Handler<Where> for Tally {
    fn handle(&mut self, _: Where, cx: &mut Context<Self>) -> String {
        node_name(&cx.system())
    }
}

/// Sends `count` numbered tells as `sender`.
pub fn send_numbered(to: &ActorRef<Tally>, sender: u32, range: std::ops::Range<u64>) {
    for n in range {
        to.tell(Note(sender, n)).expect("tell accepted");
    }
}

/// Each sender's messages handled exactly once, in the order sent.
pub fn assert_each_once_in_order(log: &[(u32, u64)], senders: &[(u32, u64)]) {
    for (s, count) in senders {
        let mine: Vec<u64> = log
            .iter()
            .filter(|(x, _)| x == s)
            .map(|(_, n)| *n)
            .collect();
        assert_eq!(mine, (0..*count).collect::<Vec<_>>(), "sender {s}");
    }
}
