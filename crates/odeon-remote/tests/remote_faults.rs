//! Links under injected faults: every node sits behind a test proxy (`common/proxy.rs`)
//! that pauses, cuts and restores its links while gossip keeps working. What must hold
//! (the crate docs' "Delivery semantics"): a short pause loses and duplicates nothing;
//! a partition longer than `lost_after` is detected by the link itself, tells the
//! watchers, fails asks fast, closes the old link (no connection or descriptor leaks)
//! and drops what was queued on it; a restarted node is a new incarnation; a stalled
//! peer gets a bounded outbox; a graceful leave is seen as a leave.
//!
//! The tests run one at a time (they count the process's file descriptors).

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]

mod common;

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use common::*;
use odeon::{ActorRef, AskError, StopReason, TellError};
use odeon_remote::NodeBuilder;

const LONG: Duration = Duration::from_secs(20);

/// One test at a time: fd counts and timings must not see the others.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Fast failure detection on the links (still well above a loaded machine's
/// scheduling pauses); gossip (direct) is left alone.
fn fast(b: NodeBuilder) -> NodeBuilder {
    b.lost_after(Duration::from_secs(1))
        .heartbeat_interval(Duration::from_millis(100))
}

/// Detection slow enough that a 2 s pause is not a partition.
fn patient(b: NodeBuilder) -> NodeBuilder {
    b.lost_after(Duration::from_secs(6))
        .heartbeat_interval(Duration::from_millis(200))
}

fn counter(m: &Member, name: &str) -> ActorRef<Counter> {
    let c = m.system.spawn(Counter {
        total: 0,
        seen: Vec::new(),
    });
    m.node().register(name, &c).unwrap();
    c
}

/// A working ref to `name` as seen from `m` (a fresh lookup: after a loss, the old
/// refs stay dead).
fn reach(m: &Member, name: &str) -> ActorRef<Counter> {
    eventually(LONG, || {
        let r = m.system.block_on(m.node().lookup::<Counter>(name)).ok()?;
        let ok = m
            .system
            .block_on(r.ask(History).timeout(Duration::from_secs(5)))
            .is_ok();
        ok.then_some(r)
    })
    .expect("the counter is reachable")
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count())
}

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn history(m: &Member, c: &ActorRef<Counter>) -> Vec<u64> {
    m.system
        .block_on(c.ask(History).timeout(Duration::from_secs(60)))
        .expect("history")
}

#[test]
fn a_two_second_pause_loses_and_duplicates_nothing() {
    let _serial = serial();
    let (a, pa) = Member::start_behind_proxy("pause-a", &[], patient);
    let (b, pb) = Member::start_behind_proxy("pause-b", &[pa.addr()], patient);
    let local = counter(&a, "counter");
    let remote = reach(&b, "counter");
    let watcher = b.system.spawn(Watcher::default());
    b.system
        .block_on(watcher.ask(WatchIt(remote.clone())))
        .unwrap();

    for i in 0..100 {
        remote.tell(Add(i)).unwrap();
    }
    pa.pause();
    pb.pause();
    // Accepted during the pause: they wait in the outbox or in socket buffers.
    for i in 100..200 {
        remote.tell(Add(i)).unwrap();
    }
    let during = remote.ask(Add(0)).timeout(Duration::from_secs(60));
    std::thread::sleep(Duration::from_secs(2));
    pa.restore();
    pb.restore();
    for i in 200..300 {
        remote.tell(Add(i)).unwrap();
    }
    assert!(
        b.system.block_on(during).is_ok(),
        "an ask made during the pause is answered after it"
    );
    let expected: Vec<u64> = (0..200).chain([0]).chain(200..300).collect();
    let seen = eventually(LONG, || {
        let h = history(&a, &local);
        (h.len() >= expected.len()).then_some(h)
    })
    .expect("everything arrives");
    assert_eq!(seen, expected, "each message exactly once, in order");
    assert!(
        b.system.block_on(watcher.ask(Seen)).unwrap().is_empty(),
        "a pause shorter than lost_after is not a loss"
    );
    assert!(b.node().peers().contains(a.node().id()));
}

#[test]
fn delayed_or_dropped_bytes_never_reorder_or_duplicate() {
    let _serial = serial();
    let (a, pa) = Member::start_behind_proxy("garble-a", &[], patient);
    let (b, pb) = Member::start_behind_proxy("garble-b", &[pa.addr()], patient);
    let local = counter(&a, "counter");
    let remote = reach(&b, "counter");
    // A slow network: everything still arrives, in order.
    pa.delay(Duration::from_millis(50));
    pb.delay(Duration::from_millis(50));
    for i in 0..50 {
        remote.tell(Add(i)).unwrap();
    }
    assert!(b.system.block_on(remote.ask(Add(50))).is_ok());
    pa.delay(Duration::ZERO);
    pb.delay(Duration::ZERO);
    assert_eq!(history(&a, &local), (0..=50).collect::<Vec<_>>());
    // Bytes thrown away mid-stream: the link breaks (a frame cut short is malformed
    // or never ends) and is replaced; what it carried may be lost, nothing else.
    pa.drop_bytes();
    pb.drop_bytes();
    for i in 51..100 {
        let _ = remote.tell(Add(i));
    }
    std::thread::sleep(Duration::from_millis(300));
    pa.cut();
    pb.cut();
    pa.restore();
    pb.restore();
    // Once an ask gets through again, everything after it arrives.
    let fresh = reach(&b, "counter");
    for i in 100..150 {
        fresh.tell(Add(i)).unwrap();
    }
    assert!(b.system.block_on(fresh.ask(Add(150))).is_ok());
    let seen = history(&a, &local);
    assert!(
        seen.windows(2).all(|w| w[0] < w[1]),
        "reordered or duplicated: {seen:?}"
    );
    assert!(
        (100..=150).all(|i| seen.contains(&i)),
        "lost after the link was back: {seen:?}"
    );
}

#[test]
fn a_silent_link_is_declared_dead_while_gossip_still_works() {
    let _serial = serial();
    let (a, pa) = Member::start_behind_proxy("silent-a", &[], fast);
    let (b, pb) = Member::start_behind_proxy("silent-b", &[pa.addr()], fast);
    let _local = counter(&a, "counter");
    let remote = reach(&b, "counter");
    let watcher = b.system.spawn(Watcher::default());
    b.system
        .block_on(watcher.ask(WatchIt(remote.clone())))
        .unwrap();
    // Only the link goes silent: its sockets stay open and gossip is not proxied
    // (after the first exchange it goes node to node), so only the link's own
    // heartbeats can tell.
    pa.pause();
    pb.pause();
    let notice = first_notice(&b.system, &watcher).expect("the watcher is told");
    assert_eq!(notice.reason, StopReason::NodeLost);
    assert!(!b.node().peers().contains(a.node().id()));
    pa.restore();
    pb.restore();
}

#[test]
fn partitions_longer_than_lost_after_close_the_old_link_and_leak_nothing() {
    let _serial = serial();
    let (a, pa) = Member::start_behind_proxy("part-a", &[], fast);
    let (b, pb) = Member::start_behind_proxy("part-b", &[pa.addr()], fast);
    let local = counter(&a, "counter");
    let mut baseline = None;
    let mut queued_before_verdict = Vec::new();
    for round in 0..20u64 {
        let remote = reach(&b, "counter");
        let watcher = b.system.spawn(Watcher::default());
        b.system
            .block_on(watcher.ask(WatchIt(remote.clone())))
            .unwrap();
        if round == 1 {
            // After one full cycle, so that lazily created threads and sockets exist.
            baseline = Some(open_fds());
        }
        pa.pause();
        pb.pause();
        // Accepted before the verdict; they must not be delivered after healing.
        let marker = 1_000_000 + round;
        remote.tell(Add(marker)).unwrap();
        queued_before_verdict.push(marker);
        // Asked before the verdict: fails with Unreachable at the verdict, long before
        // its own 60 s deadline.
        let pending = remote.ask(History).timeout(Duration::from_secs(60));
        let notice = first_notice(&b.system, &watcher).expect("the watcher is told");
        assert_eq!(notice.reason, StopReason::NodeLost);
        assert_eq!(b.system.block_on(pending), Err(AskError::Unreachable));
        // Asked after the verdict: fails at once.
        assert_eq!(
            b.system
                .block_on(remote.ask(History).timeout(Duration::from_secs(60))),
            Err(AskError::Unreachable)
        );
        assert!(matches!(
            remote.tell(Add(0)),
            Err(TellError::Unreachable(Add(0)))
        ));
        // Both ends reach the verdict (the link is silent both ways) before healing.
        eventually(LONG, || {
            (!a.node().peers().contains(b.node().id())).then_some(())
        })
        .expect("a loses b too");
        pa.restore();
        pb.restore();
    }
    let fresh = reach(&b, "counter");
    assert_eq!(b.system.block_on(fresh.ask(Add(0))), Ok(0));
    let seen = history(&a, &local);
    for m in &queued_before_verdict {
        assert!(
            !seen.contains(m),
            "a tell queued on a lost link was delivered after healing"
        );
    }
    // The old links are closed: the proxies relay only the current one, and the
    // process holds no more descriptors than after the first partition.
    let relayed = eventually(LONG, || {
        let n = pa.open_connections() + pb.open_connections();
        (n <= 1).then_some(n)
    });
    assert!(
        relayed.is_some(),
        "old links still open: {} + {} relayed connections",
        pa.open_connections(),
        pb.open_connections()
    );
    let baseline = baseline.expect("measured");
    let settled = eventually(LONG, || {
        let now = open_fds();
        (now <= baseline + 8).then_some(now)
    });
    assert!(
        settled.is_some(),
        "descriptors grew from {baseline} to {} over 20 partitions",
        open_fds()
    );
}

#[test]
fn a_peer_killed_and_restarted_under_the_same_name_is_a_new_incarnation() {
    let _serial = serial();
    let (a, pa) = Member::start_behind_proxy("restart-a", &[], fast);
    let (b, _pb) = Member::start_behind_proxy("restart-b", &[pa.addr()], fast);
    let _old_counter = counter(&a, "counter");
    let old = reach(&b, "counter");
    let old_id = a.node().id().clone();
    let watcher = b.system.spawn(Watcher::default());
    b.system
        .block_on(watcher.ask(WatchIt(old.clone())))
        .unwrap();
    // A crash: no leave, every link cut at once (the node goes before its actors,
    // which would otherwise be seen to stop).
    let mut a = a;
    drop(a.node.take());
    let notice = first_notice(&b.system, &watcher).expect("the watcher is told");
    assert_eq!(notice.reason, StopReason::NodeLost);

    drop(a);
    let a2 = Member::start_advertising("restart-a", &[b.addr()], &pa, fast);
    assert_ne!(a2.node().id(), &old_id, "a new incarnation");
    let _new_counter = counter(&a2, "counter");
    let new = eventually(LONG, || {
        let r = b
            .system
            .block_on(b.node().lookup::<Counter>("counter"))
            .ok()?;
        b.system
            .block_on(r.ask(Add(5)).timeout(Duration::from_secs(5)))
            .ok()
            .map(|_| r)
    })
    .expect("the new incarnation's counter is reachable");
    assert_ne!(new, old);
    assert_eq!(b.system.block_on(new.ask(History)), Ok(vec![5]));
    assert_eq!(
        b.system.block_on(old.ask(History)),
        Err(AskError::Unreachable),
        "the old incarnation's refs stay dead"
    );
}

#[test]
fn a_node_that_lost_its_peer_makes_the_peer_start_afresh_too() {
    let _serial = serial();
    // Only a reaches a verdict: b waits far longer for a link to come back.
    let (a, pa) = Member::start_behind_proxy("reset-a", &[], fast);
    let (b, pb) = Member::start_behind_proxy("reset-b", &[pa.addr()], |n| {
        n.lost_after(Duration::from_secs(60))
    });
    let _local = counter(&a, "counter");
    let remote = reach(&b, "counter");
    let watcher = b.system.spawn(Watcher::default());
    b.system
        .block_on(watcher.ask(WatchIt(remote.clone())))
        .unwrap();
    pa.cut();
    pb.cut();
    eventually(LONG, || {
        (!a.node().peers().contains(b.node().id())).then_some(())
    })
    .expect("a loses b");
    assert!(
        b.node().peers().contains(a.node().id()),
        "b has not given up"
    );
    pa.restore();
    pb.restore();
    // b links again, to an a that has forgotten b's watch: b must not keep it as if
    // nothing happened, but lose a too, which tells its watcher.
    let notice = first_notice(&b.system, &watcher).expect("b's watcher is told");
    assert_eq!(notice.reason, StopReason::NodeLost);
    assert_eq!(
        b.system.block_on(remote.ask(History)),
        Err(AskError::Unreachable)
    );
    // And the pair links afresh.
    let fresh = reach(&b, "counter");
    assert!(b.system.block_on(fresh.ask(Add(1))).is_ok());
}

#[test]
fn a_stalled_peer_gets_a_bounded_outbox_and_loses_nothing_accepted() {
    let _serial = serial();
    const BOUND: usize = 1_000;
    // Very patient: the stall must not become a loss.
    let stall = |n: NodeBuilder| n.lost_after(Duration::from_secs(60));
    let (a, pa) = Member::start_behind_proxy("stall-a", &[], stall);
    let (b, pb) = Member::start_behind_proxy("stall-b", &[pa.addr()], move |n| {
        stall(n).outbox_bound(BOUND)
    });
    let local = counter(&a, "counter");
    let remote = reach(&b, "counter");
    let rss_before = rss_kib();
    pa.pause();
    pb.pause();
    // Socket buffers take what they can, then the outbox fills, then tells fail.
    const TRIES: u64 = 3_000_000;
    let mut accepted = 0;
    let fill = |accepted: &mut u64| -> Option<Add> {
        while *accepted < TRIES {
            match remote.tell(Add(*accepted)) {
                Ok(()) => *accepted += 1,
                Err(TellError::Full(m)) => return Some(m),
                Err(e) => panic!("unexpected {e}"),
            }
        }
        None
    };
    let Some(Add(back)) = fill(&mut accepted) else {
        panic!("{accepted} tells to a stalled peer were all accepted");
    };
    assert_eq!(back, accepted, "Full gives the message back");
    // Let the driver fill the socket buffers until its writes block, refilling the
    // outbox as it drains. (The kernel still lets a trickle through a paused loopback
    // connection as it compacts its buffers, so there is no steady state to assert
    // on, only that the outbox refuses rather than grows.)
    for _ in 0..5 {
        std::thread::sleep(Duration::from_millis(200));
        assert!(fill(&mut accepted).is_some(), "the outbox stays bounded");
    }
    eprintln!("{accepted} tells accepted by a stalled peer's outbox and sockets");
    let grown_kib = rss_kib().saturating_sub(rss_before);
    assert!(
        grown_kib < 256 * 1024,
        "the sender grew by {grown_kib} KiB while the peer was stalled"
    );
    // `send` waits for room instead of failing with Full.
    let sender = {
        let remote = remote.clone();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(remote.send(Add(accepted)))
        })
    };
    pa.restore();
    pb.restore();
    assert!(sender.join().unwrap().is_ok(), "send waited, then sent");
    let expected: Vec<u64> = (0..=accepted).collect();
    let seen = eventually(Duration::from_secs(120), || {
        let h = history(&a, &local);
        (h.len() >= expected.len()).then_some(h)
    })
    .expect("everything accepted arrives");
    assert!(
        seen == expected,
        "every accepted tell exactly once, in order"
    );
}

/// Log lines of the whole test process, for the leave test.
fn captured() -> &'static Arc<Mutex<Vec<u8>>> {
    static LOG: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOG.get_or_init(|| {
        let log = Arc::new(Mutex::new(Vec::new()));
        let sink = log.clone();
        let _ = tracing_subscriber::fmt()
            .with_ansi(false)
            .with_max_level(tracing::Level::INFO)
            .with_writer(move || Sink(sink.clone()))
            .try_init();
        log
    })
}

struct Sink(Arc<Mutex<Vec<u8>>>);
impl std::io::Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn log_lines_about(who: &str) -> Vec<String> {
    let log = captured().lock().unwrap_or_else(|e| e.into_inner());
    String::from_utf8_lossy(&log)
        .lines()
        .filter(|l| l.contains(who))
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_graceful_leave_is_seen_as_a_leave_without_a_malformed_frame() {
    let _serial = serial();
    captured();
    let (a, _pa) = Member::start_behind_proxy("stayer", &[], patient);
    let (mut b, _pb) = Member::start_behind_proxy("leaver", &[_pa.addr()], patient);
    let _local = counter(&a, "counter");
    let remote = reach(&b, "counter");
    let leaver = b.node().id().to_string();
    // Something still queued when the leave starts.
    for i in 0..1_000 {
        remote.tell(Add(i)).unwrap();
    }
    let node = b.node.take().expect("running");
    b.system.block_on(node.leave());
    eventually(LONG, || {
        (!a.node().peers().iter().any(|p| p.to_string() == leaver)).then_some(())
    })
    .expect("the stayer drops the leaver");
    // The stayer's verdict about the leaver is logged once, whatever it is.
    let verdict = |l: &String| l.contains("peer left") || l.contains("peer lost");
    eventually(LONG, || {
        log_lines_about(&leaver).iter().any(verdict).then_some(())
    });
    std::thread::sleep(Duration::from_millis(300));
    let lines = log_lines_about(&leaver);
    assert!(
        !lines.iter().any(|l| l.contains("malformed")),
        "the leave produced a malformed frame: {lines:#?}"
    );
    assert!(
        lines.iter().any(|l| l.contains("peer left")),
        "the stayer never saw the leave: {lines:#?}"
    );
    assert!(
        !lines.iter().any(|l| l.contains("peer lost")),
        "the leave was taken for a loss: {lines:#?}"
    );
}
