//! Control of a moved mobile actor from any node (design `docs/design/mobility.md`
//! §2.4, §3.3, §3.5): stop, kill, watch, unwatch, link, unlink and `migrate_to` reach
//! the actor wherever it runs, from remote refs and from stale local refs on nodes it
//! left; watchers and links stay attached across moves; an ask whose host is lost
//! fails at once.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]

mod common;

use std::sync::Mutex;
use std::time::Duration;

use common::*;
use odeon::{Actor, ActorRef, AskError, Context, Handler, Message, StopReason, Terminated};
use odeon_remote::MigrateExt;
use serde::{Deserialize, Serialize};

/// What every `Mob` handled, by tag, in order (all nodes run in this process).
static SEEN: Mutex<Vec<(u32, u64)>> = Mutex::new(Vec::new());

fn seen(tag: u32) -> Vec<u64> {
    SEEN.lock()
        .unwrap()
        .iter()
        .filter(|(t, _)| *t == tag)
        .map(|(_, n)| *n)
        .collect()
}

/// A mobile actor that records what it handles under its tag.
#[derive(Default, Serialize, Deserialize)]
struct Mob {
    tag: u32,
}
impl Actor for Mob {}

#[derive(Serialize, Deserialize)]
struct Note(u64);
impl Message for Note {
    type Reply = ();
}
impl Handler<Note> for Mob {
    fn handle(&mut self, m: Note, _: &mut Context<Self>) {
        SEEN.lock().unwrap().push((self.tag, m.0));
    }
}

/// The node it runs on.
#[derive(Serialize, Deserialize)]
struct Where;
impl Message for Where {
    type Reply = String;
}
impl Handler<Where> for Mob {
    fn handle(&mut self, _: Where, cx: &mut Context<Self>) -> String {
        node_name(&cx.system())
    }
}

/// Holds its worker for a while, then answers.
#[derive(Serialize, Deserialize)]
struct Slow(u64);
impl Message for Slow {
    type Reply = u64;
}
impl Handler<Slow> for Mob {
    fn handle(&mut self, m: Slow, _: &mut Context<Self>) -> u64 {
        std::thread::sleep(Duration::from_millis(m.0));
        m.0
    }
}

/// Panics: a failure, for links.
#[derive(Serialize, Deserialize)]
struct Crash;
impl Message for Crash {
    type Reply = ();
}
impl Handler<Crash> for Mob {
    fn handle(&mut self, _: Crash, _: &mut Context<Self>) {
        panic!("crash on request");
    }
}

odeon_remote::mobile_actor!(Mob = "ctl.Mob" {
    Note = "ctl.Note",
    Where = "ctl.Where",
    Slow = "ctl.Slow",
    Crash = "ctl.Crash",
});

/// Records the notices it gets; watches, unwatches or links a `Mob` on request;
/// panics on `Fail`.
#[derive(Default)]
struct Observer {
    notices: Vec<Terminated>,
}
impl Actor for Observer {}
impl Handler<Terminated> for Observer {
    fn handle(&mut self, t: Terminated, _: &mut Context<Self>) {
        self.notices.push(t);
    }
}
struct Watch(ActorRef<Mob>);
impl Message for Watch {
    type Reply = ();
}
impl Handler<Watch> for Observer {
    fn handle(&mut self, m: Watch, cx: &mut Context<Self>) {
        cx.watch(&m.0);
    }
}
struct Unwatch(ActorRef<Mob>);
impl Message for Unwatch {
    type Reply = ();
}
impl Handler<Unwatch> for Observer {
    fn handle(&mut self, m: Unwatch, cx: &mut Context<Self>) {
        cx.unwatch(&m.0);
    }
}
struct Link(ActorRef<Mob>);
impl Message for Link {
    type Reply = ();
}
impl Handler<Link> for Observer {
    fn handle(&mut self, m: Link, cx: &mut Context<Self>) {
        cx.link(&m.0);
    }
}
struct Unlink(ActorRef<Mob>);
impl Message for Unlink {
    type Reply = ();
}
impl Handler<Unlink> for Observer {
    fn handle(&mut self, m: Unlink, cx: &mut Context<Self>) {
        cx.unlink(&m.0);
    }
}
struct Fail;
impl Message for Fail {
    type Reply = ();
}
impl Handler<Fail> for Observer {
    fn handle(&mut self, _: Fail, _: &mut Context<Self>) {
        panic!("observer fails on request");
    }
}
struct Notices;
impl Message for Notices {
    type Reply = Vec<Terminated>;
}
impl Handler<Notices> for Observer {
    fn handle(&mut self, _: Notices, _: &mut Context<Self>) -> Vec<Terminated> {
        self.notices.clone()
    }
}

const WAIT: Duration = Duration::from_secs(20);

/// Three nodes a, b, c that all know each other.
fn cluster(prefix: &str) -> Vec<Member> {
    let names: Vec<String> = ["a", "b", "c"]
        .iter()
        .map(|n| format!("{prefix}-{n}"))
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    mesh(&names, |_, b| b.mobile::<Mob>())
}

/// A `Mob` tagged `tag` spawned on `home` and registered there as `name`, with a ref
/// to it on every node (remote ones resolved through the registry).
fn spawn_mob(nodes: &[Member], tag: u32) -> (ActorRef<Mob>, Vec<ActorRef<Mob>>) {
    let name = format!("mob-{tag}");
    let mob = nodes[0].system.spawn(Mob { tag });
    nodes[0].node().register(&name, &mob).unwrap();
    let refs = nodes
        .iter()
        .map(|m| {
            eventually(WAIT, || {
                m.system.block_on(m.node().lookup::<Mob>(&name)).ok()
            })
            .expect("the name is found")
        })
        .collect();
    (mob, refs)
}

/// Moves the actor through `via`, asked from `from` (a local ref on the host, or any
/// ref), waiting each time until it answers from the target.
fn move_to(from: &Member, r: &ActorRef<Mob>, to: &Member) {
    let moved = from.system.block_on(r.migrate_to(to.node().id()));
    let moved = moved.expect("the move commits");
    assert_eq!(&moved.to, to.node().id());
    let name = member_name(to);
    eventually(WAIT, || {
        (from.system.block_on(r.ask(Where)).ok()? == name).then_some(())
    })
    .unwrap_or_else(|| panic!("the actor answers from {name}"));
}

fn member_name(m: &Member) -> String {
    m.node().id().name.clone()
}

/// Waits until the actor no longer answers `r`'s asks (it stopped).
fn assert_stops(m: &Member, r: &ActorRef<Mob>) {
    eventually(WAIT, || {
        m.system
            .block_on(r.ask(Where).timeout(Duration::from_secs(2)))
            .is_err()
            .then_some(())
    })
    .expect("the actor stopped");
}

fn observer(m: &Member) -> ActorRef<Observer> {
    m.system.spawn(Observer::default())
}

fn notices(m: &Member, o: &ActorRef<Observer>) -> Vec<Terminated> {
    m.system.block_on(o.ask(Notices)).expect("observer answers")
}

/// The notices `o` gets once one arrived, after a grace period for duplicates.
fn first_notices(m: &Member, o: &ActorRef<Observer>) -> Vec<Terminated> {
    eventually(WAIT, || {
        let n = notices(m, o);
        (!n.is_empty()).then_some(())
    })
    .expect("a notice arrives");
    std::thread::sleep(Duration::from_millis(300));
    notices(m, o)
}

#[test]
fn a_stop_from_a_remote_node_reaches_the_actor_after_one_move_and_after_messages_sent_before() {
    let nodes = cluster("stop1");
    let (a, b, c) = (&nodes[0], &nodes[1], &nodes[2]);
    let (mob, refs) = spawn_mob(&nodes, 1);
    move_to(a, &mob, b);
    // c's messages and then its stop travel the same route: all 200 are handled.
    for n in 0..200 {
        refs[2].tell(Note(n)).unwrap();
    }
    refs[2].stop();
    assert_stops(c, &refs[2]);
    assert_eq!(seen(1), (0..200).collect::<Vec<_>>());
    assert_stops(a, &refs[0]);
    assert_stops(b, &refs[1]);
}

#[test]
fn a_stop_through_the_stale_local_ref_on_the_source_reaches_the_actor_after_several_moves() {
    let nodes = cluster("stop2");
    let (a, b, c) = (&nodes[0], &nodes[1], &nodes[2]);
    let (mob, refs) = spawn_mob(&nodes, 2);
    move_to(a, &mob, b);
    move_to(b, &refs[1], c);
    move_to(c, &refs[2], a);
    move_to(a, &mob, b);
    // a is the birth node and a source twice over; its local ref is a stub now.
    for n in 0..50 {
        mob.tell(Note(n)).unwrap();
    }
    mob.stop();
    assert_stops(b, &refs[1]);
    assert_eq!(seen(2), (0..50).collect::<Vec<_>>());
}

#[test]
fn a_stop_from_an_intermediate_source_reaches_the_actor_two_nodes_on() {
    let nodes = cluster("stop3");
    let (a, b, c) = (&nodes[0], &nodes[1], &nodes[2]);
    let (mob, refs) = spawn_mob(&nodes, 3);
    move_to(a, &mob, b);
    move_to(b, &refs[1], c);
    // b's ref: it hosted the actor and is now a forwarder.
    refs[1].stop();
    assert_stops(c, &refs[2]);
    assert_stops(a, &mob);
}

#[test]
fn a_kill_through_a_stale_local_ref_reaches_the_moved_actor() {
    let nodes = cluster("kill");
    let (a, b, c) = (&nodes[0], &nodes[1], &nodes[2]);
    let (mob, refs) = spawn_mob(&nodes, 4);
    move_to(a, &mob, b);
    move_to(b, &refs[1], c);
    let watcher = observer(c);
    c.system
        .block_on(watcher.ask(Watch(refs[2].clone())))
        .unwrap();
    mob.kill();
    let got = first_notices(c, &watcher);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].reason, StopReason::Killed);
}

#[test]
fn a_remote_watcher_gets_terminated_once_when_the_actor_stops_after_moving_a_b_c() {
    let nodes = cluster("watch1");
    let (a, b, c) = (&nodes[0], &nodes[1], &nodes[2]);
    let (mob, refs) = spawn_mob(&nodes, 5);
    // Watched from c before any move, through a remote ref.
    let watcher = observer(c);
    c.system
        .block_on(watcher.ask(Watch(refs[2].clone())))
        .unwrap();
    move_to(a, &mob, b);
    move_to(b, &refs[1], c);
    // Now the actor runs on c, beside its watcher.
    assert!(c.system.block_on(watcher.ask(Notices)).unwrap().is_empty());
    mob.stop();
    let got = first_notices(c, &watcher);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].id, mob.id());
    assert_eq!(got[0].reason, StopReason::Normal);
}

#[test]
fn a_local_watch_made_before_the_move_survives_moves() {
    let nodes = cluster("watch2");
    let (a, b, c) = (&nodes[0], &nodes[1], &nodes[2]);
    let (mob, refs) = spawn_mob(&nodes, 6);
    // Watched on a through the direct local ref, while it runs there.
    let watcher = observer(a);
    a.system.block_on(watcher.ask(Watch(mob.clone()))).unwrap();
    move_to(a, &mob, b);
    move_to(b, &refs[1], c);
    refs[2].stop();
    let got = first_notices(a, &watcher);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].reason, StopReason::Normal);
}

#[test]
fn a_watch_through_a_stale_local_ref_on_the_source_reports_the_end() {
    let nodes = cluster("watch3");
    let (a, b, c) = (&nodes[0], &nodes[1], &nodes[2]);
    let (mob, refs) = spawn_mob(&nodes, 7);
    move_to(a, &mob, b);
    // The watch is made after the move, through a's stub.
    let watcher = observer(a);
    a.system.block_on(watcher.ask(Watch(mob.clone()))).unwrap();
    move_to(b, &refs[1], c);
    c.system.block_on(refs[2].ask(Slow(1))).unwrap();
    refs[1].tell(Crash).unwrap();
    let got = first_notices(a, &watcher);
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].reason.is_failure(), "{:?}", got[0].reason);
}

#[test]
fn an_unwatched_actor_reports_nothing_when_it_stops() {
    let nodes = cluster("unwatch");
    let (a, b, c) = (&nodes[0], &nodes[1], &nodes[2]);
    let (mob, refs) = spawn_mob(&nodes, 8);
    move_to(a, &mob, b);
    let (gone, kept) = (observer(c), observer(c));
    c.system.block_on(gone.ask(Watch(refs[2].clone()))).unwrap();
    c.system.block_on(kept.ask(Watch(refs[2].clone()))).unwrap();
    c.system
        .block_on(gone.ask(Unwatch(refs[2].clone())))
        .unwrap();
    move_to(b, &refs[1], a);
    refs[2].stop();
    // The watch kept reports the end; the cancelled one never does.
    assert_eq!(first_notices(c, &kept).len(), 1);
    assert!(notices(c, &gone).is_empty());
}

#[test]
fn a_moved_actor_that_fails_stops_the_remote_actor_linked_with_it() {
    let nodes = cluster("link1");
    let (a, b, c) = (&nodes[0], &nodes[1], &nodes[2]);
    let (mob, refs) = spawn_mob(&nodes, 9);
    let linked = observer(c);
    c.system
        .block_on(linked.ask(Link(refs[2].clone())))
        .unwrap();
    let guard = observer(c);
    c.system
        .block_on(guard.ask(WatchObserver(linked.clone())))
        .unwrap();
    move_to(a, &mob, b);
    move_to(b, &refs[1], a);
    move_to(a, &mob, b);
    refs[2].tell(Crash).unwrap();
    let got = first_notices(c, &guard);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].reason, StopReason::LinkFailed(mob.id()));
}

#[test]
fn a_local_link_made_before_the_move_holds_both_ways_after_it() {
    let nodes = cluster("link3");
    let (a, b, c) = (&nodes[0], &nodes[1], &nodes[2]);
    // Two actors linked on a while the mobile one runs there.
    let (mob, refs) = spawn_mob(&nodes, 15);
    let linked = observer(a);
    a.system.block_on(linked.ask(Link(mob.clone()))).unwrap();
    let guard = observer(a);
    a.system
        .block_on(guard.ask(WatchObserver(linked.clone())))
        .unwrap();
    move_to(a, &mob, b);
    move_to(b, &refs[1], c);
    // Its failure on c reaches the actor it was linked with on a.
    refs[2].tell(Crash).unwrap();
    let got = first_notices(a, &guard);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].reason, StopReason::LinkFailed(mob.id()));
    // The other way: a second pair, and the local actor fails.
    let (mob2, refs2) = spawn_mob(&nodes, 16);
    let linked2 = observer(a);
    a.system.block_on(linked2.ask(Link(mob2.clone()))).unwrap();
    move_to(a, &mob2, b);
    linked2.tell(Fail).unwrap();
    assert_stops(b, &refs2[1]);
}

#[test]
fn a_linked_actor_that_fails_stops_the_moved_actor() {
    let nodes = cluster("link2");
    let (a, b, c) = (&nodes[0], &nodes[1], &nodes[2]);
    let (mob, refs) = spawn_mob(&nodes, 10);
    let linked = observer(c);
    c.system
        .block_on(linked.ask(Link(refs[2].clone())))
        .unwrap();
    let watcher = observer(a);
    a.system.block_on(watcher.ask(Watch(mob.clone()))).unwrap();
    move_to(a, &mob, b);
    linked.tell(Fail).unwrap();
    let got = first_notices(a, &watcher);
    assert_eq!(got.len(), 1, "{got:?}");
    // `LinkFailed` crosses the wire as a failure with its text (`WireStopReason`).
    assert!(got[0].reason.is_failure(), "{:?}", got[0].reason);
    assert!(
        got[0].reason.to_string().contains(&linked.id().to_string()),
        "{}",
        got[0].reason
    );
    assert_stops(b, &refs[1]);
}

#[test]
fn an_unlinked_actor_survives_the_failure_of_its_former_link() {
    let nodes = cluster("unlink");
    let (a, b, c) = (&nodes[0], &nodes[1], &nodes[2]);
    let (mob, refs) = spawn_mob(&nodes, 11);
    move_to(a, &mob, b);
    let linked = observer(c);
    c.system
        .block_on(linked.ask(Link(refs[2].clone())))
        .unwrap();
    c.system
        .block_on(linked.ask(Unlink(refs[2].clone())))
        .unwrap();
    linked.tell(Fail).unwrap();
    eventually(WAIT, || (!linked.is_alive()).then_some(())).expect("the linker failed");
    // Another move, and the actor still answers: the link is gone everywhere.
    move_to(b, &refs[1], c);
    assert_eq!(
        c.system.block_on(refs[2].ask(Where)).unwrap(),
        member_name(c)
    );
}

#[test]
fn migrate_to_works_from_a_remote_ref_and_from_the_stale_local_ref_on_the_source() {
    let nodes = cluster("migrate");
    let (a, b, c) = (&nodes[0], &nodes[1], &nodes[2]);
    let (mob, refs) = spawn_mob(&nodes, 12);
    // From c, whose ref is remote: the host (a) moves it to b.
    move_to(c, &refs[2], b);
    // From a, whose ref is now a stub: forwarded to b, which moves it to c.
    move_to(a, &mob, c);
    // And from the host's own (remote before arrival) ref: back to a.
    move_to(c, &refs[2], a);
    for n in 0..20 {
        refs[1].tell(Note(n)).unwrap();
    }
    assert_eq!(
        b.system.block_on(refs[1].ask(Where)).unwrap(),
        member_name(a)
    );
    assert_eq!(seen(12), (0..20).collect::<Vec<_>>());
}

#[test]
fn an_ask_fails_at_once_when_the_host_node_is_lost_mid_ask() {
    let mut nodes = cluster("askloss");
    let (mob, refs) = spawn_mob(&nodes, 13);
    move_to(&nodes[0], &mob, &nodes[1]);
    // Keep the actor busy on b, then ask from c with a timeout that would outlast the
    // test: the ask waits in b's mailbox when b goes.
    refs[2].tell(Slow(6_000)).unwrap();
    let ask = refs[2].ask(Where).timeout(Duration::from_secs(3_600));
    std::thread::sleep(Duration::from_millis(300));
    // b's node goes without a word (its links are cut, its actors keep running, so
    // nobody answers the ask): only c's ask binding can fail it now.
    let mut b = nodes.remove(1);
    drop(b.node.take());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let got = rt
        .block_on(async { tokio::time::timeout(Duration::from_secs(60), ask).await })
        .expect("the ask failed when its host was lost, not at its own timeout");
    assert!(matches!(got, Err(AskError::Unreachable)), "{got:?}");
    drop(b);
}

#[test]
fn a_watcher_learns_the_end_once_when_the_host_node_goes() {
    let mut nodes = cluster("watchloss");
    let (mob, refs) = spawn_mob(&nodes, 14);
    let watcher = observer(&nodes[2]);
    nodes[2]
        .system
        .block_on(watcher.ask(Watch(refs[2].clone())))
        .unwrap();
    move_to(&nodes[0], &mob, &nodes[1]);
    // The host's node goes without a word: the watch is bound to it.
    let mut b = nodes.remove(1);
    drop(b.node.take());
    let got = first_notices(&nodes[1], &watcher);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].reason, StopReason::NodeLost);
    drop(b);
}

/// Lets an observer watch another observer.
struct WatchObserver(ActorRef<Observer>);
impl Message for WatchObserver {
    type Reply = ();
}
impl Handler<WatchObserver> for Observer {
    fn handle(&mut self, m: WatchObserver, cx: &mut Context<Self>) {
        cx.watch(&m.0);
    }
}
