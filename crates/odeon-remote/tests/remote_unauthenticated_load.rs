//! Item 12 of issue 13: what strangers can make a node do is bounded. Connections
//! that never speak hold at most `max_pending_handshakes` slots, each for at most the
//! handshake timeout, and a node can still join; floods of bad gossip datagrams are
//! counted exactly while the log gets only a few lines.
//!
//! The log is captured by a process-wide subscriber (the nodes' tasks run on their
//! systems' threads), so each test counts only the lines of its own messages.

use std::io::Read;
use std::net::{TcpStream, UdpSocket};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

use odeon::System;
use odeon_remote::{Node, Secret, defaults};

const SECRET: &str = "a cluster secret of enough bytes";

static LOG: Mutex<Vec<u8>> = Mutex::new(Vec::new());

struct Buffer;

impl std::io::Write for Buffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        LOG.lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn capture_log() {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        tracing_subscriber::fmt()
            .with_writer(|| Buffer)
            .with_ansi(false)
            .with_max_level(tracing_subscriber::filter::LevelFilter::WARN)
            .init();
    });
}

/// Lines of the captured log that contain `text`.
fn log_lines(text: &str) -> usize {
    let log = LOG.lock().unwrap_or_else(|p| p.into_inner());
    String::from_utf8_lossy(&log)
        .lines()
        .filter(|l| l.contains(text))
        .count()
}

/// The most lines a rate-limited warning may have produced in `elapsed`: one per
/// interval begun, and one more for an interval cut by the clock's granularity.
fn allowed_lines(elapsed: Duration) -> usize {
    2 + (elapsed.as_secs_f64() / defaults::WARN_INTERVAL.as_secs_f64()) as usize
}

fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < until, "never happened: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn node(
    system: &System,
    name: &str,
    build: impl FnOnce(odeon_remote::NodeBuilder) -> odeon_remote::NodeBuilder,
) -> Result<Node, odeon_remote::NodeError> {
    let builder = Node::builder(name).secret(Secret::new(SECRET).unwrap());
    system.block_on(build(builder).start(&system.handle()))
}

#[test]
fn silent_connections_over_the_cap_are_shed_time_out_and_a_node_still_joins() {
    capture_log();
    const CAP: usize = 8;
    const SILENT: usize = 48;
    let sys_a = System::new();
    let a = node(&sys_a, "a", |b| {
        b.max_pending_handshakes(CAP)
            .handshake_timeout(Duration::from_secs(2))
    })
    .unwrap();
    let started = Instant::now();
    let mut silent: Vec<TcpStream> = (0..SILENT)
        .map(|_| TcpStream::connect(a.listen_addr()).unwrap())
        .collect();
    let links = a.metrics().links();
    // Past the cap, connections are closed at once instead of each holding a task and
    // a descriptor for the handshake timeout.
    eventually("the cap is hit", || links.shed() >= 1);
    // Every silent connection ends: shed at once, or refused at its deadline.
    eventually("every silent connection is closed", || {
        links.shed() + links.refused() >= SILENT as u64
    });
    assert!(links.refused() >= CAP as u64, "the pending ones timed out");
    for s in &mut silent {
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let mut buf = [0u8; 64];
        match s.read(&mut buf) {
            Ok(0) | Err(_) => {}
            Ok(n) => panic!("a silent connection was sent {n} bytes"),
        }
    }
    // A legitimate node joins (a seed refused while the cap was full would be retried
    // the same way by an operator or a supervisor).
    let sys_b = System::new();
    let b = loop {
        match node(&sys_b, "b", |b| b.seed(a.listen_addr())) {
            Ok(b) => break b,
            Err(e) => {
                assert!(
                    started.elapsed() < Duration::from_secs(120),
                    "b never joined: {e}"
                );
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    };
    eventually("a links to b", || a.peers().contains(b.id()));
    assert!(links.accepted() >= 1, "b's link was accepted");
    let elapsed = started.elapsed();
    for warning in [
        "too many pending handshakes",
        "connection refused during the handshake",
    ] {
        let lines = log_lines(warning);
        assert!(
            lines <= allowed_lines(elapsed),
            "{lines} lines of {warning:?} in {elapsed:?}"
        );
    }
}

#[test]
fn ten_thousand_bad_gossip_datagrams_are_counted_and_logged_a_few_times() {
    capture_log();
    const FLOOD: u64 = 10_000;
    const BATCH: u64 = 50;
    let sys = System::new();
    let a = node(&sys, "gossip-target", |b| b).unwrap();
    let gossip = a.metrics().gossip();
    let target = a.listen_addr(); // gossip shares the listener's port, over UDP
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let started = Instant::now();
    let before = gossip.rejected();
    let mut sent = 0;
    while sent < FLOOD {
        // In batches, waiting for each to be counted: loopback drops nothing as long
        // as the receive buffer does not overflow.
        for _ in 0..BATCH {
            let forged: Vec<u8> = (0..80u64).map(|i| (sent * 31 + i * 7) as u8).collect();
            socket.send_to(&forged, target).unwrap();
            sent += 1;
        }
        eventually("the batch is counted", || {
            gossip.rejected() - before >= sent
        });
    }
    assert_eq!(gossip.rejected() - before, FLOOD);
    let elapsed = started.elapsed();
    let lines = log_lines("gossip datagram dropped");
    assert!(
        (1..=allowed_lines(elapsed)).contains(&lines),
        "{lines} log lines for {FLOOD} bad datagrams in {elapsed:?}"
    );
}
