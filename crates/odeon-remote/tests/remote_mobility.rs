//! Live actor migration between real nodes in one process, on loopback (design
//! `docs/design/mobility.md`, happy path): senders on several nodes keep telling and
//! asking while a mobile actor moves; every message is handled exactly once and in
//! per-sender order.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]

mod common;

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::time::Duration;

use common::*;
use odeon::{Actor, ActorRef, Context, Handler, Message};
use odeon_remote::wire::NodeId;
use odeon_remote::{MigrateError, MigrateExt, MigrateFromHandler, MigrateRefusal};
use serde::{Deserialize, Serialize};

/// Records every (sender, n) it is sent, in handling order, and where it arrived.
#[derive(Default, Serialize, Deserialize)]
struct Tally {
    log: Vec<(u32, u64)>,
    /// Nodes `migrated` ran on, in order.
    arrivals: Vec<String>,
    /// `migration_failed` calls.
    failures: Vec<String>,
}

impl Actor for Tally {
    fn migrated(&mut self, cx: &mut Context<Self>) {
        self.arrivals.push(node_name(&cx.system()));
    }
    fn migration_failed(
        &mut self,
        _: &mut Context<Self>,
        error: &(dyn std::error::Error + 'static),
    ) {
        self.failures.push(error.to_string());
    }
}

#[derive(Serialize, Deserialize)]
struct Note(u32, u64);
impl Message for Note {
    type Reply = ();
}
impl Handler<Note> for Tally {
    fn handle(&mut self, m: Note, _: &mut Context<Self>) {
        self.log.push((m.0, m.1));
    }
}

/// Noted like `Note`, and answered with `n`.
#[derive(Serialize, Deserialize)]
struct NoteAsk(u32, u64);
impl Message for NoteAsk {
    type Reply = u64;
}
impl Handler<NoteAsk> for Tally {
    fn handle(&mut self, m: NoteAsk, _: &mut Context<Self>) -> u64 {
        self.log.push((m.0, m.1));
        m.1
    }
}

#[derive(Serialize, Deserialize)]
struct Log;
impl Message for Log {
    type Reply = Vec<(u32, u64)>;
}
impl Handler<Log> for Tally {
    fn handle(&mut self, _: Log, _: &mut Context<Self>) -> Vec<(u32, u64)> {
        self.log.clone()
    }
}

/// Where it runs: (the node that runs this handler, arrivals, failures).
#[derive(Serialize, Deserialize)]
struct Where;
impl Message for Where {
    type Reply = (String, Vec<String>, Vec<String>);
}
impl Handler<Where> for Tally {
    fn handle(&mut self, _: Where, cx: &mut Context<Self>) -> (String, Vec<String>, Vec<String>) {
        (
            node_name(&cx.system()),
            self.arrivals.clone(),
            self.failures.clone(),
        )
    }
}

/// Moves from inside a handler.
#[derive(Serialize, Deserialize)]
struct GoTo(NodeId);
impl Message for GoTo {
    type Reply = ();
}
impl Handler<GoTo> for Tally {
    fn handle(&mut self, m: GoTo, cx: &mut Context<Self>) {
        cx.migrate_to(&m.0);
    }
}

odeon_remote::mobile_actor!(Tally = "test.Tally" {
    Note = "test.Note",
    NoteAsk = "test.NoteAsk",
    Log = "test.Log",
    Where = "test.Where",
    GoTo = "test.GoTo",
});

const WAIT: Duration = Duration::from_secs(20);

/// `n` nodes that all know each other (the first `mobile` of them accept `Tally`).
fn cluster(names: &[&str], mobile: usize) -> Vec<Member> {
    mesh(names, |i, b| {
        if i == 0 || i < mobile {
            b.mobile::<Tally>()
        } else {
            b
        }
    })
}

fn lookup(m: &Member, name: &str) -> ActorRef<Tally> {
    eventually(WAIT, || {
        m.system.block_on(m.node().lookup::<Tally>(name)).ok()
    })
    .expect("the name is found")
}

/// Sends `count` numbered messages as `sender`, every 7th an ask whose answer is
/// checked; returns once the last was accepted.
fn send_numbered(m: &Member, to: &ActorRef<Tally>, sender: u32, count: u64) {
    send_numbered_from(m, to, sender, 0..count);
}

fn send_numbered_from(m: &Member, to: &ActorRef<Tally>, sender: u32, range: std::ops::Range<u64>) {
    for n in range {
        if n % 7 == 6 {
            let got = m
                .system
                .block_on(to.ask(NoteAsk(sender, n)))
                .expect("ask answered");
            assert_eq!(got, n);
        } else {
            to.tell(Note(sender, n)).expect("tell accepted");
        }
    }
}

/// The log, once every sender's messages were handled: an ask through each sender's
/// own ref comes after that sender's messages (per sender FIFO; the senders
/// finished before), so the last answer holds them all.
fn settled_log(via: &[(&Member, &ActorRef<Tally>)]) -> Vec<(u32, u64)> {
    let mut log = Vec::new();
    for (m, r) in via {
        log = m.system.block_on(r.ask(Log)).expect("log");
    }
    log
}

/// Each sender's messages were handled exactly once, in the order sent.
fn assert_each_once_in_order(log: &[(u32, u64)], senders: &[u32], count: u64) {
    for s in senders {
        let mine: Vec<u64> = log
            .iter()
            .filter(|(x, _)| x == s)
            .map(|(_, n)| *n)
            .collect();
        assert_eq!(mine, (0..count).collect::<Vec<_>>(), "sender {s}");
    }
    assert_eq!(log.len() as u64, count * senders.len() as u64);
}

fn wait_until_on(
    m: &Member,
    r: &ActorRef<Tally>,
    node: &str,
) -> (String, Vec<String>, Vec<String>) {
    eventually(WAIT, || {
        let w = m.system.block_on(r.ask(Where)).ok()?;
        (w.0 == node).then_some(w)
    })
    .unwrap_or_else(|| panic!("the actor reached {node}"))
}

#[test]
fn an_actor_moves_while_senders_on_two_nodes_tell_and_ask_and_nothing_is_lost_or_reordered() {
    let nodes = cluster(&["a", "b", "c"], 3);
    let (a, b, c) = (&nodes[0], &nodes[1], &nodes[2]);
    let tally = a.system.spawn(Tally::default());
    a.node().register("tally", &tally).unwrap();
    let from_c = lookup(c, "tally");
    let before_c = from_c.clone();
    let before_b = lookup(b, "tally");
    assert!(!before_b.is_local());
    const COUNT: u64 = 400;
    // Each sender sends half, then waits until the move was asked for, then sends the
    // rest: those race with the freeze, the hand-over and the senders' switch.
    let halfway = std::sync::Barrier::new(3);
    let asked = std::sync::Barrier::new(3);
    let moved = std::thread::scope(|s| {
        let (halfway, asked) = (&halfway, &asked);
        let halves = move |to: &ActorRef<Tally>, member: &Member, sender: u32| {
            send_numbered_from(member, to, sender, 0..COUNT / 2);
            halfway.wait();
            asked.wait();
            send_numbered_from(member, to, sender, COUNT / 2..COUNT);
        };
        let (to_a, to_c) = (&tally, &from_c);
        let local = s.spawn(move || halves(to_a, a, 1));
        let remote = s.spawn(move || halves(to_c, c, 2));
        halfway.wait();
        let migration = tally.migrate_to(b.node().id());
        asked.wait();
        let moved = a.system.block_on(migration);
        local.join().unwrap();
        remote.join().unwrap();
        moved
    });
    let moved = moved.expect("the move commits");
    assert_eq!(&moved.from, a.node().id());
    assert_eq!(&moved.to, b.node().id());
    assert_eq!(moved.epoch, 1);
    // `migrated` ran on b, and the actor answers from there.
    let (at, arrivals, failures) = wait_until_on(c, &from_c, "b");
    assert_eq!(at, "b");
    assert_eq!(arrivals, ["b"]);
    assert!(failures.is_empty(), "{failures:?}");
    // Asked through both senders' refs: the local one on a (now a stub) and the
    // remote one on c.
    let log = settled_log(&[(a, &tally), (c, &from_c)]);
    assert_each_once_in_order(&log, &[1, 2], COUNT);
    // Equality and hashing are unchanged by the move.
    let after_c = lookup(c, "tally");
    assert_eq!(before_c, after_c);
    let hash = |r: &ActorRef<Tally>| {
        let mut h = DefaultHasher::new();
        r.hash(&mut h);
        h.finish()
    };
    assert_eq!(hash(&before_c), hash(&after_c));
    assert_eq!(after_c.id(), tally.id());
    // On b the actor is local now: a ref decoded there is the direct one, and it
    // equals (and hashes like) the remote ref b held before the actor arrived.
    let after_b = lookup(b, "tally");
    assert!(after_b.is_local());
    assert_eq!(after_b, before_b);
    assert_eq!(hash(&after_b), hash(&before_b));
    assert_eq!(b.system.block_on(after_b.ask(Log)).unwrap(), log);
}

#[test]
fn a_chain_of_moves_from_handlers_a_b_c_a_keeps_every_senders_order() {
    let nodes = cluster(&["a", "b", "c"], 3);
    let (a, b, c) = (&nodes[0], &nodes[1], &nodes[2]);
    let tally = a.system.spawn(Tally::default());
    a.node().register("tally", &tally).unwrap();
    let from_b = lookup(b, "tally");
    let from_c = lookup(c, "tally");
    const COUNT: u64 = 300;
    std::thread::scope(|s| {
        let senders = [
            s.spawn(|| send_numbered(a, &tally, 1, COUNT)),
            s.spawn(|| send_numbered(b, &from_b, 2, COUNT)),
            s.spawn(|| send_numbered(c, &from_c, 3, COUNT)),
        ];
        // `cx.migrate_to` from inside a handler, each move asked where the actor is.
        for (next, name) in [(b, "b"), (c, "c"), (a, "a")] {
            from_c.tell(GoTo(next.node().id().clone())).unwrap();
            wait_until_on(c, &from_c, name);
        }
        for s in senders {
            s.join().unwrap();
        }
    });
    let (at, arrivals, failures) = c.system.block_on(from_c.ask(Where)).unwrap();
    assert_eq!(at, "a");
    assert_eq!(arrivals, ["b", "c", "a"]);
    assert!(failures.is_empty(), "{failures:?}");
    let log = settled_log(&[(a, &tally), (b, &from_b), (c, &from_c)]);
    assert_each_once_in_order(&log, &[1, 2, 3], COUNT);
}

#[test]
fn ten_moves_back_and_forth_over_three_nodes_keep_every_senders_order() {
    let nodes = cluster(&["a", "b", "c"], 3);
    let (a, b, c) = (&nodes[0], &nodes[1], &nodes[2]);
    let tally = a.system.spawn(Tally::default());
    a.node().register("tally", &tally).unwrap();
    let from_b = lookup(b, "tally");
    let from_c = lookup(c, "tally");
    const COUNT: u64 = 500;
    let route = ["b", "a", "c", "b", "c", "a", "b", "a", "c", "a"];
    std::thread::scope(|s| {
        let senders = [
            s.spawn(|| send_numbered(a, &tally, 1, COUNT)),
            s.spawn(|| send_numbered(b, &from_b, 2, COUNT)),
            s.spawn(|| send_numbered(c, &from_c, 3, COUNT)),
        ];
        for name in route {
            let next = nodes.iter().find(|m| m.node().id().name == name).unwrap();
            from_b.tell(GoTo(next.node().id().clone())).unwrap();
            wait_until_on(b, &from_b, name);
        }
        for s in senders {
            s.join().unwrap();
        }
    });
    let (_, arrivals, failures) = a.system.block_on(tally.ask(Where)).unwrap();
    assert_eq!(arrivals, route);
    assert!(failures.is_empty(), "{failures:?}");
    let log = settled_log(&[(a, &tally), (b, &from_b), (c, &from_c)]);
    assert_each_once_in_order(&log, &[1, 2, 3], COUNT);
}

#[test]
fn a_move_to_a_node_that_does_not_know_the_type_is_refused_and_loses_nothing() {
    let nodes = cluster(&["a", "d"], 1);
    let (a, d) = (&nodes[0], &nodes[1]);
    let tally = a.system.spawn(Tally::default());
    for n in 0..50 {
        tally.tell(Note(1, n)).unwrap();
    }
    let refused = a.system.block_on(tally.migrate_to(d.node().id()));
    for n in 50..100 {
        tally.tell(Note(1, n)).unwrap();
    }
    match refused {
        Err(MigrateError::Refused(MigrateRefusal::UnknownType { node, actor_type })) => {
            assert_eq!(&node, d.node().id());
            assert_eq!(actor_type, "test.Tally");
        }
        other => panic!("expected UnknownType, got {other:?}"),
    }
    let log = a.system.block_on(tally.ask(Log)).unwrap();
    assert_each_once_in_order(&log, &[1], 100);
    let (at, arrivals, failures) = a.system.block_on(tally.ask(Where)).unwrap();
    assert_eq!(at, "a");
    assert!(arrivals.is_empty());
    assert_eq!(failures.len(), 1, "migration_failed ran once: {failures:?}");
    assert!(failures[0].contains("does not know"), "{failures:?}");
}

#[test]
fn a_move_asked_for_in_a_handler_that_is_refused_runs_migration_failed_and_loses_nothing() {
    let nodes = cluster(&["a", "d"], 1);
    let (a, d) = (&nodes[0], &nodes[1]);
    let tally = a.system.spawn(Tally::default());
    tally.tell(Note(1, 0)).unwrap();
    tally.tell(GoTo(d.node().id().clone())).unwrap();
    for n in 1..100 {
        tally.tell(Note(1, n)).unwrap();
    }
    let (at, arrivals, failures) = eventually(WAIT, || {
        let w = a.system.block_on(tally.ask(Where)).ok()?;
        (!w.2.is_empty()).then_some(w)
    })
    .expect("migration_failed ran");
    assert_eq!(at, "a");
    assert!(arrivals.is_empty());
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(failures[0].contains("does not know"), "{failures:?}");
    let log = a.system.block_on(tally.ask(Log)).unwrap();
    assert_each_once_in_order(&log, &[1], 100);
}

#[test]
fn a_target_lost_before_it_was_ready_fails_the_move_and_the_actor_resumes_with_everything() {
    // Both behind proxies, so that their one link goes through them (as in
    // remote_faults.rs). A request timeout longer than `lost_after`: the loss decides.
    let tune = |b: odeon_remote::NodeBuilder| {
        b.mobile::<Tally>()
            .lost_after(Duration::from_millis(1_500))
            .request_timeout(Duration::from_secs(60))
    };
    let (a, pa) = Member::start_behind_proxy("a", &[], tune);
    let (t, pt) = Member::start_behind_proxy("t", &[pa.addr()], tune);
    name_node(&a.system.handle(), "a");
    for m in [&a, &t] {
        eventually(WAIT, || (m.node().peers().len() == 1).then_some(())).expect("the nodes link");
    }
    let tally = a.system.spawn(Tally::default());
    for n in 0..50 {
        tally.tell(Note(1, n)).unwrap();
    }
    // The offer never reaches the target, and the link falls silent: a loses it.
    pa.pause();
    pt.pause();
    let migration = tally.migrate_to(t.node().id());
    for n in 50..100 {
        tally.tell(Note(1, n)).unwrap();
    }
    let got = a.system.block_on(migration);
    assert_eq!(
        got,
        Err(MigrateError::Failed(
            odeon_remote::MigrateFailure::TargetLost
        ))
    );
    let log = a.system.block_on(tally.ask(Log)).unwrap();
    assert_each_once_in_order(&log, &[1], 100);
    let (at, arrivals, failures) = a.system.block_on(tally.ask(Where)).unwrap();
    assert_eq!(at, "a");
    assert!(arrivals.is_empty());
    assert_eq!(failures.len(), 1, "{failures:?}");
    drop(t);
}

#[test]
fn a_move_to_the_node_it_is_on_is_refused() {
    let nodes = cluster(&["a", "b"], 2);
    let a = &nodes[0];
    let tally = a.system.spawn(Tally::default());
    let got = a.system.block_on(tally.migrate_to(a.node().id()));
    assert!(
        matches!(
            got,
            Err(MigrateError::Refused(MigrateRefusal::AlreadyThere(_)))
        ),
        "{got:?}"
    );
    tally.tell(Note(1, 0)).unwrap();
    assert_eq!(a.system.block_on(tally.ask(Log)).unwrap(), [(1, 0)]);
}
