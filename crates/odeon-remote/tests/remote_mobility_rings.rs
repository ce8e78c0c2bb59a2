//! Many actors moving round three nodes at once while senders on every node write to
//! them (issue 14's MigrationRings, as a test): every actor makes all its moves, and
//! every message is handled exactly once, in per-sender order.
//!
//! The collection of forwarding entries (step 10) runs all the time here: an actor
//! comes back to a node that forgot it, or is forgetting it, while frames about it
//! are still on their way there. Before forgotten entries were retired
//! (`migration/collect.rs`), a target could take back an entry it had just forgotten,
//! whose route led to a node that had forgotten the actor too: the move's drain never
//! ended, every move there timed out, and some rovers never finished (issue 14's
//! stall; this test caught it in about one run in three).

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]

mod common;
mod mobile_util;

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use odeon::{Actor, ActorRef, Context, Handler, Message};
use odeon_remote::MigrateFromHandler;
use odeon_remote::wire::NodeId;
use serde::{Deserialize, Serialize};

use mobile_util::cluster;

/// Guards against a hang, not measurements (the machine may be loaded): the test
/// fails when no rover moved for `STALL` (a stuck move is retried every 5 s, the
/// request timeout, for ever), or after `PATIENCE` in all.
const STALL: Duration = Duration::from_secs(60);
const PATIENCE: Duration = Duration::from_secs(600);

/// Rovers that made all their moves, by name.
static DONE: Mutex<Vec<u32>> = Mutex::new(Vec::new());
/// Moves made, all rovers together.
static MOVED: AtomicU64 = AtomicU64::new(0);

/// An actor that moves itself round `route`, counting what it is sent.
#[derive(Default, Serialize, Deserialize)]
pub struct Rover {
    name: u32,
    route: Vec<NodeId>,
    at: usize,
    moves_left: u32,
    /// Per sender, the numbers handled, in order.
    log: BTreeMap<u32, Vec<u64>>,
    failed: u32,
}

impl Rover {
    fn go(&mut self, cx: &mut Context<Self>) {
        let next = (self.at + 1) % self.route.len();
        cx.migrate_to(&self.route[next]);
    }
}

impl Actor for Rover {
    fn migrated(&mut self, cx: &mut Context<Self>) {
        MOVED.fetch_add(1, Ordering::AcqRel);
        self.at = (self.at + 1) % self.route.len();
        self.moves_left = self.moves_left.saturating_sub(1);
        if self.moves_left == 0 {
            DONE.lock().unwrap().push(self.name);
        } else {
            let _ = cx.myself().tell(Hop);
        }
    }

    fn migration_failed(&mut self, cx: &mut Context<Self>, _: &(dyn std::error::Error + 'static)) {
        self.failed += 1;
        let _ = cx.myself().tell(Hop);
    }
}

#[derive(Serialize, Deserialize)]
pub struct Hop;
impl Message for Hop {
    type Reply = ();
}
impl Handler<Hop> for Rover {
    fn handle(&mut self, _: Hop, cx: &mut Context<Self>) {
        self.go(cx);
    }
}

#[derive(Serialize, Deserialize)]
pub struct Note(pub u32, pub u64);
impl Message for Note {
    type Reply = ();
}
impl Handler<Note> for Rover {
    fn handle(&mut self, m: Note, _: &mut Context<Self>) {
        self.log.entry(m.0).or_default().push(m.1);
    }
}

/// (moves left, moves that failed, the log).
#[derive(Serialize, Deserialize)]
pub struct Report;
impl Message for Report {
    type Reply = (u32, u32, BTreeMap<u32, Vec<u64>>);
}
impl Handler<Report> for Rover {
    fn handle(&mut self, _: Report, _: &mut Context<Self>) -> (u32, u32, BTreeMap<u32, Vec<u64>>) {
        (self.moves_left, self.failed, self.log.clone())
    }
}

odeon_remote::mobile_actor!(Rover = "rings.Rover" {
    Hop = "rings.Hop",
    Note = "rings.Note",
    Report = "rings.Report",
});

fn done() -> usize {
    DONE.lock().unwrap().len()
}

#[test]
fn many_actors_moving_round_three_nodes_all_arrive_and_lose_nothing() {
    const ACTORS: u32 = 100;
    const MOVES: u32 = 200;
    const NOTES: u64 = 20;
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
    let nodes = cluster(&["a", "b", "c"], |b| b.mobile::<Rover>());
    let route: Vec<NodeId> = nodes.iter().map(|m| m.node().id().clone()).collect();
    let a = &nodes[0];
    let rovers: Vec<ActorRef<Rover>> = (0..ACTORS)
        .map(|name| {
            let r = a.system.spawn(Rover {
                name,
                route: route.clone(),
                moves_left: MOVES,
                ..Rover::default()
            });
            a.node().register(&format!("rover-{name}"), &r).unwrap();
            r
        })
        .collect();
    // A ref to every rover on every node (local on a, remote on b and c).
    let refs: Vec<Vec<ActorRef<Rover>>> = nodes
        .iter()
        .map(|m| {
            (0..ACTORS)
                .map(|name| {
                    common::eventually(PATIENCE, || {
                        m.system
                            .block_on(m.node().lookup::<Rover>(&format!("rover-{name}")))
                            .ok()
                    })
                    .expect("the name is found")
                })
                .collect()
        })
        .collect();
    for r in &rovers {
        r.tell(Hop).unwrap();
    }
    // Senders on every node write to every rover while they move: sender `s` is node
    // `s`'s refs.
    for n in 0..NOTES {
        for (s, node_refs) in refs.iter().enumerate() {
            for r in node_refs {
                r.tell(Note(s as u32, n)).expect("tell accepted");
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    // b and c drop their refs: from now on nothing keeps their entries but routes,
    // so they are collected, and remade when the rovers come back (step 10).
    drop(refs);
    let start = Instant::now();
    let (mut seen, mut progress) = (0, Instant::now());
    while done() < ACTORS as usize {
        let moved = MOVED.load(Ordering::Acquire);
        if moved > seen {
            (seen, progress) = (moved, Instant::now());
        }
        if progress.elapsed() > STALL || start.elapsed() > PATIENCE {
            let finished = DONE.lock().unwrap().clone();
            let stuck: Vec<u32> = (0..ACTORS).filter(|n| !finished.contains(n)).collect();
            panic!(
                "{} of {ACTORS} rovers made their {MOVES} moves (no move for {:?}); \
                 stuck: {stuck:?}; (entries, stubs) per node: {:?}",
                finished.len(),
                progress.elapsed(),
                nodes
                    .iter()
                    .map(|m| m.node().mobile_counts())
                    .collect::<Vec<_>>()
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    // Every note handled exactly once, in order, wherever the rover went.
    for (name, r) in rovers.iter().enumerate() {
        let (left, _failed, log) = a
            .system
            .block_on(tokio_timeout(r.ask(Report)))
            .unwrap_or_else(|| panic!("rover {name} did not answer"))
            .unwrap();
        assert_eq!(left, 0, "rover {name}");
        for s in 0..nodes.len() as u32 {
            let got = log.get(&s).cloned().unwrap_or_default();
            assert_eq!(
                got,
                (0..NOTES).collect::<Vec<_>>(),
                "rover {name}, sender {s}"
            );
        }
    }
}

/// `fut`, or `None` after [`PATIENCE`].
async fn tokio_timeout<F: std::future::Future>(fut: F) -> Option<F::Output> {
    tokio::time::timeout(PATIENCE, fut).await.ok()
}
