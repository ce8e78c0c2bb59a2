//! Every move is counted and traced at its source (design §3.9): `Metrics::migrations`
//! says how many moved, were refused or failed, how long the committed ones took, and
//! a `migration ended` event inside the `migration` span carries the move's fields.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]

mod common;

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use common::*;
use odeon::{Actor, ActorRef, Context, Handler, Message};
use odeon_remote::wire::NodeId;
use odeon_remote::{MigrateError, MigrateExt, MigrateFromHandler, MigrateRefusal};
use serde::{Deserialize, Serialize};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context as LayerContext, SubscriberExt};

/// A small mobile actor that keeps what it is sent.
#[derive(Default, Serialize, Deserialize)]
struct Hop {
    seen: Vec<u64>,
}
impl Actor for Hop {}

#[derive(Serialize, Deserialize)]
struct Note(u64);
impl Message for Note {
    type Reply = ();
}
impl Handler<Note> for Hop {
    fn handle(&mut self, m: Note, _: &mut Context<Self>) {
        self.seen.push(m.0);
    }
}

/// The node it runs on, and what it has seen.
#[derive(Serialize, Deserialize)]
struct Here;
impl Message for Here {
    type Reply = (String, Vec<u64>);
}
impl Handler<Here> for Hop {
    fn handle(&mut self, _: Here, cx: &mut Context<Self>) -> (String, Vec<u64>) {
        (node_name(&cx.system()), self.seen.clone())
    }
}

#[derive(Serialize, Deserialize)]
struct GoTo(NodeId);
impl Message for GoTo {
    type Reply = ();
}
impl Handler<GoTo> for Hop {
    fn handle(&mut self, m: GoTo, cx: &mut Context<Self>) {
        cx.migrate_to(&m.0);
    }
}

odeon_remote::mobile_actor!(Hop = "metrics.Hop" {
    Note = "metrics.Note",
    Here = "metrics.Here",
    GoTo = "metrics.GoTo",
});

const WAIT: Duration = Duration::from_secs(20);

/// A member whose node accepts `Hop` arrivals (or not).
fn start(name: &str, seeds: &[std::net::SocketAddr], mobile: bool) -> Member {
    start_tuned(name, seeds, |b| if mobile { b.mobile::<Hop>() } else { b })
}

/// Two linked nodes; the second accepts `Hop` only if `mobile`.
fn pair(a: &str, b: &str, mobile: bool) -> (Member, Member) {
    let mut both = mesh(&[a, b], |i, b| {
        if i == 0 || mobile {
            b.mobile::<Hop>()
        } else {
            b
        }
    });
    let second = both.pop().expect("two members");
    let first = both.pop().expect("two members");
    (first, second)
}

fn wait_until_on(m: &Member, r: &ActorRef<Hop>, node: &str) -> Vec<u64> {
    eventually(WAIT, || {
        let (at, seen) = m.system.block_on(r.ask(Here)).ok()?;
        (at == node).then_some(seen)
    })
    .unwrap_or_else(|| panic!("the actor reached {node}"))
}

/// (moved, refused, failed) at `m`.
fn counts(m: &Member) -> (u64, u64, u64) {
    let s = m.node().metrics().migrations();
    (s.moved(), s.refused(), s.failed())
}

/// The fields of every `migration ended` event, as text.
type Events = Mutex<Vec<BTreeMap<String, String>>>;

struct Capture(&'static Events);

struct Fields<'a>(&'a mut BTreeMap<String, String>);
impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(
            field.name().to_string(),
            format!("{value:?}").replace('"', ""),
        );
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_string(), value.to_string());
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Capture {
    fn on_event(&self, event: &tracing::Event<'_>, _: LayerContext<'_, S>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        if fields.get("message").map(String::as_str) == Some("migration ended") {
            self.0.lock().unwrap().push(fields);
        }
    }
}

/// The events captured so far in this process (the subscriber is global: nodes log
/// from their own threads).
fn events() -> &'static Events {
    static EVENTS: OnceLock<&'static Events> = OnceLock::new();
    EVENTS.get_or_init(|| {
        let events: &'static Events = Box::leak(Box::new(Mutex::new(Vec::new())));
        let subscriber = tracing_subscriber::registry().with(Capture(events));
        tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");
        events
    })
}

/// The captured events of moves to the node named `to`.
fn events_to(to: &str) -> Vec<BTreeMap<String, String>> {
    let prefix = format!("{to}#");
    events()
        .lock()
        .unwrap()
        .iter()
        .filter(|e| {
            e.get("to")
                .is_some_and(|t| t.starts_with(&prefix) || t == to)
        })
        .cloned()
        .collect()
}

#[test]
fn six_moves_back_and_forth_are_six_moved_at_their_sources_with_their_durations() {
    events();
    let (a, b) = pair("ma", "mb", true);
    let hop = a.system.spawn(Hop::default());
    a.node().register("hop", &hop).unwrap();
    let from_b = eventually(WAIT, || {
        b.system.block_on(b.node().lookup::<Hop>("hop")).ok()
    })
    .expect("found");
    for n in 0..10 {
        hop.tell(Note(n)).unwrap();
    }
    // The first move through the ref, to see its `Moved`; the rest from a handler.
    let moved = a
        .system
        .block_on(hop.migrate_to(b.node().id()))
        .expect("moves");
    assert_eq!(moved.epoch, 1);
    wait_until_on(&b, &from_b, "mb");
    let route = ["ma", "mb", "ma", "mb", "ma"];
    for name in route {
        let next = if name == "ma" { &a } else { &b };
        from_b.tell(GoTo(next.node().id().clone())).unwrap();
        wait_until_on(&b, &from_b, name);
    }
    // Each source counted its own: a three (a→b), b three (b→a).
    let both = eventually(WAIT, || {
        let both = (counts(&a), counts(&b));
        (both.0.0 + both.1.0 == 6).then_some(both)
    })
    .unwrap_or_else(|| panic!("six moves counted: {:?}", (counts(&a), counts(&b))));
    assert_eq!(both, ((3, 0, 0), (3, 0, 0)));
    for m in [&a, &b] {
        let h = m.node().metrics().migrations().durations();
        assert_eq!(h.count(), 3);
        assert_eq!(h.buckets().map(|(_, n)| n).sum::<u64>(), 3);
        assert!(h.mean().is_some());
        let p50 = h.quantile(0.5).unwrap();
        assert!(p50 <= h.quantile(1.0).unwrap());
    }
    // Nothing was lost on the way.
    let (_, seen) = b.system.block_on(from_b.ask(Here)).unwrap();
    assert_eq!(seen, (0..10).collect::<Vec<_>>());
    // Traced: three moves to b and three to a, each "moved" with its epoch; the
    // first carried a state with the ten notes in it (a move asked from outside is
    // queued behind them: they were handled first).
    let to_b = eventually(WAIT, || {
        let e = events_to("mb");
        (e.len() == 3).then_some(e)
    })
    .expect("three events for moves to mb");
    assert!(to_b.iter().all(|e| e["outcome"] == "moved"), "{to_b:?}");
    let epochs: Vec<&str> = to_b.iter().map(|e| e["epoch"].as_str()).collect();
    assert_eq!(epochs, ["1", "3", "5"], "{to_b:?}");
    assert_eq!(to_b[0]["queued"], "0", "{to_b:?}");
    assert!(to_b[0]["state_bytes"].parse::<u64>().unwrap() > 0);
    assert!(to_b[0].contains_key("duration_us"));
    assert!(to_b[0].contains_key("held"));
    let to_a = events_to("ma");
    assert_eq!(to_a.len(), 3, "{to_a:?}");
}

#[test]
fn refused_moves_count_as_refused_and_nothing_as_moved() {
    events();
    let (a, d) = pair("ra", "rd", false);
    let hop = a.system.spawn(Hop::default());
    hop.tell(Note(1)).unwrap();
    // The target does not know the type: refused by the target.
    let got = a.system.block_on(hop.migrate_to(d.node().id()));
    assert!(
        matches!(
            got,
            Err(MigrateError::Refused(MigrateRefusal::UnknownType { .. }))
        ),
        "{got:?}"
    );
    assert_eq!(counts(&a), (0, 1, 0));
    // Already there: refused at the source, before the freeze.
    let got = a.system.block_on(hop.migrate_to(a.node().id()));
    assert!(
        matches!(
            got,
            Err(MigrateError::Refused(MigrateRefusal::AlreadyThere(_)))
        ),
        "{got:?}"
    );
    assert_eq!(counts(&a), (0, 2, 0));
    assert_eq!(counts(&d), (0, 0, 0));
    assert_eq!(a.node().metrics().migrations().durations().count(), 0);
    let (at, seen) = a.system.block_on(hop.ask(Here)).unwrap();
    assert_eq!((at.as_str(), seen), ("ra", vec![1]));
    let to_d = events_to("rd");
    assert_eq!(to_d.len(), 1, "{to_d:?}");
    assert_eq!(to_d[0]["outcome"], "refused");
    assert!(to_d[0]["error"].contains("does not know"), "{to_d:?}");
    let to_a = events_to("ra");
    assert_eq!(to_a.len(), 1, "{to_a:?}");
    assert_eq!(to_a[0]["outcome"], "refused");
    assert!(!to_a[0].contains_key("epoch"), "{to_a:?}");
}

#[test]
fn a_sender_that_first_sends_after_the_move_is_forwarded_by_the_node_the_actor_left() {
    events();
    let a = start("fa", &[], true);
    let b = start("fb", &[a.addr()], true);
    let c = start("fc", &[a.addr()], true);
    for m in [&a, &b, &c] {
        eventually(WAIT, || (m.node().peers().len() == 2).then_some(())).expect("linked");
    }
    let hop = a.system.spawn(Hop::default());
    a.node().register("hop", &hop).unwrap();
    let from_c = eventually(WAIT, || {
        c.system.block_on(c.node().lookup::<Hop>("hop")).ok()
    })
    .expect("found");
    // c has sent nothing yet: it is no holder of a's, so the commit hints it nothing,
    // and its route still leads to the birth node.
    a.system
        .block_on(hop.migrate_to(b.node().id()))
        .expect("moves");
    assert_eq!(a.node().metrics().migrations().forwarded_frames(), 0);
    for n in 0..5 {
        from_c.tell(Note(n)).unwrap();
    }
    let (at, seen) = c.system.block_on(from_c.ask(Here)).unwrap();
    assert_eq!((at.as_str(), seen), ("fb", (0..5).collect::<Vec<_>>()));
    // At least c's first message went through a (later ones may take the repaired,
    // direct route); a forwards only for others, so b and c count none.
    let forwarded = a.node().metrics().migrations().forwarded_frames();
    assert!((1..=6).contains(&forwarded), "{forwarded}");
    assert_eq!(b.node().metrics().migrations().forwarded_frames(), 0);
    assert_eq!(c.node().metrics().migrations().forwarded_frames(), 0);
}
