//! Mobility under real faults: three `odeon-node` processes on loopback (`home`, the
//! counter's birth node; `a`, the source of the move; `b`, its target) and this test's
//! own node, which sends the counter numbered asks while it moves a→b. A process is
//! killed at one step of the protocol (`crates/odeon-remote/src/migration/mod.rs`),
//! either by `ODEON_TEST_ABORT_AT=<step>` (the process aborts itself when its
//! migration code gets there; `migration/abort.rs`, compiled in through the hidden
//! `__test-abort` feature) or, after the hand-over, by SIGKILL from here. Each test
//! checks the documented outcome of one case (`docs/design/mobility.md`, "Faults").
//!
//! What is counted: the sender sends `NumberedAsk { sender: 1, n }` for n = 0, 1, ...,
//! one at a time, each awaited. An ask that returned `Ok` is **accepted**: it must have
//! been handled exactly once. A failed ask (its node lost, or the guard timeout) may
//! have been handled or not, but at most once. The counter checks per-sender order as
//! the asks arrive and writes down every gap and every repeat; the test then checks
//! that gaps fall only on failed asks, that nothing repeated or came out of order, and
//! that the counter's count equals the numbers it handled.

#[allow(dead_code)]
mod common;
#[path = "../mobility/counter.rs"]
#[allow(dead_code)]
mod counter;

use std::collections::BTreeSet;
use std::os::unix::process::ExitStatusExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::{Proc, SECRET};
use counter::{Counter, GoTo, NumberedAsk, Report, Tally, Whereabouts};
use odeon::{ActorRef, AskError, System};
use odeon_remote::wire::NodeId;
use odeon_remote::{MigrateExt, Node, Secret};

/// How long anything may take before a test fails instead of hanging (a guard only).
const PATIENCE: Duration = Duration::from_secs(60);
/// The guard on one ask: longer than it takes to declare a node lost (1 s).
const ASK_GUARD: Duration = Duration::from_secs(20);
const SIGABRT: i32 = 6;

/// The three processes and this test's node, with the counter found through `home`.
struct Cluster {
    home: Proc,
    a: Proc,
    b: Proc,
    system: Arc<System>,
    node: Node,
    counter: ActorRef<Counter>,
    a_id: NodeId,
    b_id: NodeId,
    /// `home`'s listening address, for nodes that join later.
    addr: String,
}

/// `a_env` and `b_env`: `ODEON_TEST_ABORT_AT` for the source and the target.
fn start(a_env: Option<&str>, b_env: Option<&str>) -> Cluster {
    start_with(None, a_env, b_env)
}

/// [`start`], with `ODEON_TEST_ABORT_AT` for the birth node `home` too.
fn start_with(home_env: Option<&str>, a_env: Option<&str>, b_env: Option<&str>) -> Cluster {
    let home_env: Vec<(&str, &str)> = home_env
        .map(|s| ("ODEON_TEST_ABORT_AT", s))
        .into_iter()
        .collect();
    let home = Proc::start_env(&["serve", "--name", "home"], &home_env);
    let addr = home
        .expect("listening ", PATIENCE)
        .trim_start_matches("listening ")
        .to_string();
    home.expect("registered tally", PATIENCE);
    let host = |name: &str, step: Option<&str>| {
        let env: Vec<(&str, &str)> = step
            .map(|s| ("ODEON_TEST_ABORT_AT", s))
            .into_iter()
            .collect();
        let p = Proc::start_env(&["host", "--name", name, "--seed", &addr], &env);
        p.expect("hosting", PATIENCE);
        p
    };
    let a = host("a", a_env);
    let b = host("b", b_env);

    let system = Arc::new(System::new());
    let (node, counter) = join(&system, "sender", &addr);
    let peer = |name: &str| {
        within(&format!("{name} is a peer"), || {
            node.peers().into_iter().find(|p| p.name == name)
        })
    };
    let (a_id, b_id) = (peer("a"), peer("b"));
    // The first move, home → a, with no fault: from here `a` is the source.
    if home_env.is_empty() {
        go(&system, &counter, &a_id);
    } else {
        // `home` is armed: after this move it must not forward anything of this
        // node's before the test wants it to, so one request, answered by `home` at
        // its commit, and nothing sent afterwards (`go` polls, and a poll sent just
        // after the commit, before `home`'s hint arrives, would be forwarded).
        let moved = system.block_on(counter.migrate_to(&a_id));
        assert!(moved.is_ok(), "home → a: {moved:?}");
    }
    Cluster {
        home,
        a,
        b,
        system,
        node,
        counter,
        a_id,
        b_id,
        addr,
    }
}

/// A node of this test called `name`, seeded with `home`'s address, once it knows the
/// three processes, and the counter as `lookup` finds it (through `home`).
fn join(system: &System, name: &str, addr: &str) -> (Node, ActorRef<Counter>) {
    let node = system
        .block_on(
            Node::builder(name)
                .secret(Secret::new(SECRET).expect("a valid secret"))
                .seed(addr.parse().expect("an address"))
                .lost_after(Duration::from_secs(1))
                .mobile::<Counter>()
                .start(&system.handle()),
        )
        .unwrap_or_else(|e| panic!("the node {name} starts: {e}"));
    for peer in ["home", "a", "b"] {
        within(&format!("{peer} is a peer of {name}"), || {
            node.peers().into_iter().find(|p| p.name == peer)
        });
    }
    let counter = within("the counter is found", || {
        system.block_on(node.lookup::<Counter>("counter")).ok()
    });
    (node, counter)
}

/// Polls `f` until it answers `Some`, for at most [`PATIENCE`].
fn within<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "gave up waiting: {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Where the counter says it runs, if it answers.
fn whereabouts(system: &System, counter: &ActorRef<Counter>) -> Result<String, AskError> {
    system
        .block_on(counter.ask(Whereabouts).timeout(ASK_GUARD))
        .map(|(at, _)| at)
}

/// Tells the counter to move to `to`, and waits until it answers from there. A move
/// can be refused (the target drained through a node that died and was not yet
/// declared lost): `GoTo` is sent again every few seconds.
fn go(system: &System, counter: &ActorRef<Counter>, to: &NodeId) {
    let mut told = Instant::now() - Duration::from_secs(60);
    within(&format!("the counter reaches {}", to.name), || {
        if told.elapsed() > Duration::from_secs(5) {
            counter.tell(GoTo(to.clone())).expect("GoTo is sent");
            told = Instant::now();
        }
        (whereabouts(system, counter).ok()? == to.name).then_some(())
    });
}

/// Waits for `p` to exit and returns the signal that ended it.
fn ended_by(p: &mut Proc) -> Option<i32> {
    let status = within("the process exits", || {
        p.child.try_wait().expect("try_wait")
    });
    status.signal()
}

/// The sender: numbered asks, one at a time, until stopped.
struct Sender {
    stop: Arc<AtomicBool>,
    /// Asks answered so far (to wait for progress).
    answered: Arc<AtomicU64>,
    thread: std::thread::JoinHandle<Sent>,
}

/// What the sender sent: `n` numbers, of which these failed.
#[derive(Debug)]
struct Sent {
    n: u64,
    failed: BTreeSet<u64>,
}

impl Sender {
    fn start(system: &Arc<System>, counter: &ActorRef<Counter>) -> Sender {
        let stop = Arc::new(AtomicBool::new(false));
        let answered = Arc::new(AtomicU64::new(0));
        let (handle, counter) = (system.clone(), counter.clone());
        let (stop2, answered2) = (stop.clone(), answered.clone());
        let thread = std::thread::spawn(move || {
            let mut sent = Sent {
                n: 0,
                failed: BTreeSet::new(),
            };
            while !stop2.load(Ordering::Acquire) {
                let n = sent.n;
                sent.n += 1;
                match handle.block_on(counter.ask(NumberedAsk { sender: 1, n }).timeout(ASK_GUARD))
                {
                    Ok(got) => {
                        assert_eq!(got, n, "ask {n} answered with another number");
                        answered2.fetch_add(1, Ordering::AcqRel);
                    }
                    Err(_) => {
                        sent.failed.insert(n);
                        std::thread::sleep(Duration::from_millis(20));
                    }
                }
            }
            sent
        });
        Sender {
            stop,
            answered,
            thread,
        }
    }

    /// Waits until `more` further asks were answered.
    fn progress(&self, more: u64) {
        let goal = self.answered.load(Ordering::Acquire) + more;
        within("the sender's asks are answered", || {
            (self.answered.load(Ordering::Acquire) >= goal).then_some(())
        });
    }

    fn finish(self) -> Sent {
        self.stop.store(true, Ordering::Release);
        self.thread.join().expect("the sender does not panic")
    }
}

/// Every accepted ask handled exactly once, in order; a failed one at most once.
fn check_exactly_once(sent: &Sent, tally: &Tally) {
    let mut skipped = BTreeSet::new();
    for e in &tally.errors {
        // "sender 1: got X, expected Y"
        let nums: Vec<u64> = e
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|s| s.parse().ok())
            .collect();
        let [1, got, expected] = nums[..] else {
            panic!("unexpected counter error {e:?}");
        };
        assert!(got > expected, "repeated or reordered: {e} ({sent:?})");
        skipped.extend(expected..got);
    }
    assert!(tally.errors.len() < 20, "too many gaps to check: {tally:?}");
    let next = tally.next.get(&1).copied().unwrap_or(0);
    skipped.extend(next..sent.n);
    let lost: Vec<u64> = skipped.difference(&sent.failed).copied().collect();
    assert!(lost.is_empty(), "accepted asks not handled: {lost:?}");
    assert_eq!(tally.count, next - (skipped.range(..next).count() as u64));
}

fn report(c: &Cluster) -> Tally {
    c.system
        .block_on(c.counter.ask(Report).timeout(ASK_GUARD))
        .expect("the counter reports")
}

#[test]
fn the_target_dies_prepared_and_the_actor_resumes_at_the_source_with_nothing_lost() {
    let mut c = start(None, Some("ready"));
    let sender = Sender::start(&c.system, &c.counter);
    sender.progress(50);
    c.counter.tell(GoTo(c.b_id.clone())).expect("GoTo is sent");
    assert_eq!(ended_by(&mut c.b), Some(SIGABRT), "b aborts before Ready");
    sender.progress(50);
    let sent = sender.finish();
    assert_eq!(whereabouts(&c.system, &c.counter), Ok("a".to_string()));
    let tally = report(&c);
    // Nothing was lost at all: the asks held while the counter was frozen ran after
    // it resumed.
    assert!(sent.failed.is_empty(), "{sent:?}");
    assert!(tally.errors.is_empty(), "{tally:?}");
    assert_eq!(tally.count, sent.n, "{tally:?}");
    check_exactly_once(&sent, &tally);
    assert!(c.a.child.try_wait().expect("try_wait").is_none());
    // And it can still move (back home, the only other live node).
    let home = within("home is a peer", || {
        c.node.peers().into_iter().find(|p| p.name == "home")
    });
    go(&c.system, &c.counter, &home);
}

#[test]
fn the_source_dies_after_the_hand_over_and_the_actor_lives_on_at_the_target() {
    let mut c = start(None, None);
    let sender = Sender::start(&c.system, &c.counter);
    sender.progress(50);
    go(&c.system, &c.counter, &c.b_id);
    sender.progress(20);
    c.a.child.kill().expect("kill a");
    let _ = c.a.child.wait();
    sender.progress(50);
    let sent = sender.finish();
    assert_eq!(whereabouts(&c.system, &c.counter), Ok("b".to_string()));
    check_exactly_once(&sent, &report(&c));
}

#[test]
fn the_birth_node_dies_and_refs_still_find_the_actor() {
    let mut c = start(None, None);
    let sender = Sender::start(&c.system, &c.counter);
    sender.progress(50);
    c.home.child.kill().expect("kill home");
    let _ = c.home.child.wait();
    sender.progress(50);
    // It still moves, to a node that never knew it (the move's target cannot drain
    // through the lost birth node), and the ref found through the dead birth node
    // follows it.
    go(&c.system, &c.counter, &c.b_id);
    sender.progress(50);
    let sent = sender.finish();
    assert_eq!(whereabouts(&c.system, &c.counter), Ok("b".to_string()));
    check_exactly_once(&sent, &report(&c));
    assert!(c.a.child.try_wait().expect("try_wait").is_none());
}

/// The move a→b with `dies` aborting at a step between the source's freeze and the
/// target's activation where the documented outcome is the actor's loss (design §3.2:
/// in the window Ready..Commit the loss of either node loses the actor, never
/// duplicates it). Checks that it is gone for good: every ask through the ref fails
/// with `Unreachable`, and keeps failing (no copy runs anywhere), and the other node
/// lives on.
fn lost_with(a_env: Option<&str>, b_env: Option<&str>) {
    let mut c = start(a_env, b_env);
    let sender = Sender::start(&c.system, &c.counter);
    sender.progress(50);
    c.counter.tell(GoTo(c.b_id.clone())).expect("GoTo is sent");
    let (dies, lives) = if a_env.is_some() {
        (&mut c.a, &mut c.b)
    } else {
        (&mut c.b, &mut c.a)
    };
    assert_eq!(ended_by(dies), Some(SIGABRT));
    let sent = sender.finish();
    assert!(
        !sent.failed.is_empty(),
        "the last ask cannot have been answered"
    );
    within("asks fail with Unreachable", || {
        (whereabouts(&c.system, &c.counter) == Err(AskError::Unreachable)).then_some(())
    });
    for _ in 0..3 {
        std::thread::sleep(Duration::from_millis(500));
        assert_eq!(
            whereabouts(&c.system, &c.counter),
            Err(AskError::Unreachable)
        );
    }
    assert!(lives.child.try_wait().expect("try_wait").is_none());
    let _ = &c.a_id;
}

#[test]
fn the_source_dies_frozen_as_it_ships_the_offer_and_the_actor_is_lost() {
    lost_with(Some("offer"), None);
}

#[test]
fn the_source_dies_between_ready_and_commit_and_the_actor_is_lost_not_duplicated() {
    lost_with(Some("commit"), None);
}

#[test]
fn the_target_dies_with_the_commit_unrun_and_the_actor_is_lost_not_duplicated() {
    lost_with(None, Some("activate"));
}

/// A forwarder dies with a message in its hands (steps 7–8). The counter, born at
/// `home`, has moved to `a`; `home` is now its directory and the first hop of every
/// ref resolved through it. A node that joins only now looks the counter up and asks:
/// its first ask goes to `home`, which aborts as it is about to forward it. That ask
/// is lost with `home` (documented: messages a dead forwarder held are lost; the ask
/// fails, it is never re-sent, so it is never handled twice); the new node relocates,
/// finds the counter at `a`, and every later ask is handled exactly once, in order.
#[test]
fn a_forwarder_dies_with_a_message_in_hand_and_later_ones_are_handled_exactly_once() {
    let mut c = start_with(Some("forward"), None, None);
    let (late, counter) = join(&c.system, "late", &c.addr);
    let sender = Sender::start(&c.system, &counter);
    assert_eq!(
        ended_by(&mut c.home),
        Some(SIGABRT),
        "home aborts forwarding"
    );
    sender.progress(50);
    let sent = sender.finish();
    assert!(
        sent.failed.contains(&0),
        "the ask home held when it died cannot have been answered: {sent:?}"
    );
    let tally = c
        .system
        .block_on(counter.ask(Report).timeout(ASK_GUARD))
        .expect("the counter reports");
    // n = 0 died with home: the counter never saw it (a gap, never a repeat).
    assert_eq!(
        tally.next.get(&1).copied(),
        Some(sent.n),
        "{tally:?} {sent:?}"
    );
    check_exactly_once(&sent, &tally);
    assert_eq!(whereabouts(&c.system, &counter), Ok("a".to_string()));
    // And it still moves, with the ref that went through the dead forwarder.
    go(&c.system, &counter, &c.b_id);
    assert_eq!(whereabouts(&c.system, &c.counter), Ok("b".to_string()));
    drop(late);
}
