//! Second contract pass over the endpoint of `NodeBuilder::metrics_http` as
//! docs/observe.md describes it (`GET /metrics`, `/`, `/api/snapshot`,
//! `/api/events`; other paths `404`, other methods `405`, one request per
//! connection, `Connection: close`; dropping the node ends the event streams), from a
//! client that misbehaves: other methods, a huge request head, a slow client, one
//! that sends nothing, many at once.
//!
//! `cargo test -p odeon-remote --features observe --test contract2_http` (also
//! without the feature). Durations are only "fail instead of hang" guards.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use odeon::System;
use odeon_remote::dashboard::Snapshot;
use odeon_remote::{Node, Secret};

const GUARD: Duration = Duration::from_secs(30);

fn node(system: &System, name: &str) -> Node {
    let b = Node::builder(name)
        .secret(Secret::new("the contract2 http secret").unwrap())
        .metrics_http("127.0.0.1:0".parse().unwrap());
    system.block_on(b.start(&system.handle())).unwrap()
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(GUARD)).unwrap();
    s
}

/// Sends `request` as is and reads the answer to the end: (head, body).
fn exchange(addr: SocketAddr, request: &[u8]) -> (String, String) {
    let mut s = connect(addr);
    s.write_all(request).unwrap();
    read_answer(&mut s)
}

fn read_answer(s: &mut TcpStream) -> (String, String) {
    let mut answer = Vec::new();
    s.read_to_end(&mut answer)
        .expect("the answer within the guard");
    let answer = String::from_utf8(answer).unwrap();
    let (head, body) = answer
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no head in {answer:?}"));
    (head.to_owned(), body.to_owned())
}

fn request(method: &str, path: &str) -> Vec<u8> {
    format!("{method} {path} HTTP/1.1\r\nHost: test\r\n\r\n").into_bytes()
}

fn status(head: &str) -> &str {
    head.lines().next().unwrap_or_default()
}

/// The value of header `name` (case-insensitive), if present.
fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().skip(1).find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

#[test]
fn every_documented_path_answers_200_with_its_type_and_closes() {
    let system = System::new();
    let a = node(&system, "paths");
    let http = a.metrics_http_addr().unwrap();
    for (path, kind) in [
        ("/metrics", "text/plain"),
        ("/", "text/html"),
        ("/api/snapshot", "application/json"),
    ] {
        let (head, body) = exchange(http, &request("GET", path));
        assert_eq!(status(&head), "HTTP/1.1 200 OK", "{path}");
        assert!(
            header(&head, "Content-Type").is_some_and(|t| t.starts_with(kind)),
            "{path}: {head}"
        );
        assert_eq!(header(&head, "Connection"), Some("close"), "{path}");
        assert_eq!(
            header(&head, "Content-Length").map(|l| l.parse::<usize>().unwrap()),
            Some(body.len()),
            "{path}"
        );
    }
    // HTTP/1.0 and a query string: the same answers.
    let (head, _) = exchange(http, b"GET /metrics?name[]=x HTTP/1.0\r\n\r\n");
    assert_eq!(status(&head), "HTTP/1.1 200 OK");
    let (head, body) = exchange(http, &request("GET", "/api/snapshot?pretty=1"));
    assert_eq!(status(&head), "HTTP/1.1 200 OK");
    serde_json::from_str::<Snapshot>(&body).unwrap();
    drop(a);
    assert!(system.shutdown());
}

/// "other paths with `404`, other methods with `405`": a 405 names the allowed
/// method (RFC 9110 §15.5.6: the server "MUST generate an Allow header field").
#[test]
fn other_methods_are_405_with_allow_get_and_other_paths_404() {
    let system = System::new();
    let a = node(&system, "methods");
    let http = a.metrics_http_addr().unwrap();
    for method in ["POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH", "get"] {
        for path in ["/metrics", "/", "/api/snapshot", "/api/events", "/nothing"] {
            let (head, _) = exchange(http, &request(method, path));
            assert_eq!(
                status(&head),
                "HTTP/1.1 405 Method Not Allowed",
                "{method} {path}"
            );
            assert_eq!(
                header(&head, "Allow"),
                Some("GET"),
                "{method} {path}: {head}"
            );
        }
    }
    for path in [
        "/metrics/",
        "/api",
        "/api/snapshot/x",
        "/index",
        "//metrics",
        "*",
    ] {
        let (head, _) = exchange(http, &request("GET", path));
        assert_eq!(status(&head), "HTTP/1.1 404 Not Found", "GET {path}");
    }
    drop(a);
    assert!(system.shutdown());
}

/// A request head larger than the endpoint reads is answered `431` (RFC 6585) and
/// the connection closed, rather than closed unanswered; the endpoint goes on
/// serving.
#[test]
fn a_huge_request_head_is_refused_with_431_and_the_endpoint_keeps_serving() {
    let system = System::new();
    let a = node(&system, "huge");
    let http = a.metrics_http_addr().unwrap();
    for size in [16 * 1024, 256 * 1024] {
        let mut s = connect(http);
        let mut req = b"GET /metrics HTTP/1.1\r\nHost: test\r\nX-Big: ".to_vec();
        req.resize(req.len() + size, b'a');
        req.extend_from_slice(b"\r\n\r\n");
        // The server may close before the whole head is written: ignore that error.
        let _ = s.write_all(&req);
        let (head, _) = read_answer(&mut s);
        assert_eq!(
            status(&head),
            "HTTP/1.1 431 Request Header Fields Too Large",
            "{size} bytes"
        );
    }
    let (head, _) = exchange(http, &request("GET", "/metrics"));
    assert_eq!(status(&head), "HTTP/1.1 200 OK");
    drop(a);
    assert!(system.shutdown());
}

/// A slow client that sends its head a byte at a time is served; one that sends
/// nothing holds nobody up and is closed in time.
#[test]
fn a_slow_client_is_served_and_a_silent_one_blocks_nobody() {
    let system = System::new();
    let a = node(&system, "slow");
    let http = a.metrics_http_addr().unwrap();
    let mut silent: Vec<TcpStream> = (0..16).map(|_| connect(http)).collect();

    let mut slow = connect(http);
    slow.set_nodelay(true).unwrap();
    for b in request("GET", "/api/snapshot") {
        slow.write_all(&[b]).unwrap();
        std::thread::sleep(Duration::from_millis(5));
        // Meanwhile others are served.
        if b == b'\n' {
            let (head, _) = exchange(http, &request("GET", "/metrics"));
            assert_eq!(status(&head), "HTTP/1.1 200 OK");
        }
    }
    let (head, body) = read_answer(&mut slow);
    assert_eq!(status(&head), "HTTP/1.1 200 OK");
    serde_json::from_str::<Snapshot>(&body).unwrap();

    // The silent ones are closed (EOF, or a reset) by the endpoint, not left open.
    let started = Instant::now();
    for s in &mut silent {
        let mut buf = [0u8; 64];
        match s.read(&mut buf) {
            Ok(n) => assert_eq!(n, 0, "a silent client got an answer"),
            Err(e) => assert!(
                !matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ),
                "a silent client was still open after {:?}",
                started.elapsed()
            ),
        }
    }
    drop(a);
    assert!(system.shutdown());
}

#[test]
fn concurrent_clients_each_get_a_whole_answer() {
    let system = System::new();
    let a = node(&system, "many");
    let http = a.metrics_http_addr().unwrap();
    std::thread::scope(|s| {
        for t in 0..16 {
            s.spawn(move || {
                for i in 0..5 {
                    let path = ["/metrics", "/", "/api/snapshot"][(t + i) % 3];
                    let (head, body) = exchange(http, &request("GET", path));
                    assert_eq!(status(&head), "HTTP/1.1 200 OK", "{path}");
                    let len: usize = header(&head, "Content-Length").unwrap().parse().unwrap();
                    assert_eq!(len, body.len(), "{path}: a truncated answer");
                    if path == "/api/snapshot" {
                        let snap: Snapshot = serde_json::from_str(&body).unwrap();
                        assert_eq!(snap.name, "many");
                    }
                }
            });
        }
    });
    drop(a);
    assert!(system.shutdown());
}

/// `/api/events`: `text/event-stream`, the current snapshot first as one `data:`
/// line, then one per sample; dropping the node ends the stream.
#[test]
fn the_event_stream_starts_with_a_snapshot_and_ends_when_the_node_is_dropped() {
    let system = System::new();
    let a = node(&system, "events");
    let http = a.metrics_http_addr().unwrap();
    let mut s = connect(http);
    s.write_all(&request("GET", "/api/events")).unwrap();
    let mut r = BufReader::new(s);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        assert_ne!(r.read_line(&mut line).unwrap(), 0, "closed in the head");
        if line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    assert_eq!(status(&head), "HTTP/1.1 200 OK");
    assert_eq!(header(&head, "Content-Type"), Some("text/event-stream"));
    let mut snapshots = Vec::new();
    while snapshots.len() < 2 {
        let mut line = String::new();
        assert_ne!(r.read_line(&mut line).unwrap(), 0, "the stream ended early");
        if let Some(json) = line.strip_prefix("data: ") {
            let snap: Snapshot = serde_json::from_str(json.trim_end()).unwrap();
            assert_eq!(snap.name, "events");
            assert!(snap.members.first().is_some_and(|m| m.me), "itself first");
            snapshots.push(snap);
        } else {
            assert_eq!(line, "\n", "not an event line: {line:?}");
        }
    }
    assert!(snapshots[1].at_ms >= snapshots[0].at_ms);
    drop(a);
    let mut rest = Vec::new();
    r.read_to_end(&mut rest)
        .expect("the stream did not end within the guard after the node was dropped");
    assert!(system.shutdown());
}

/// The snapshot's documented shape: this node first (`me`), `node` as its id
/// displays, `interval_ms` of a second, and every counter the rustdoc lists.
#[test]
fn the_snapshot_has_its_documented_fields() {
    let system = System::new();
    let a = node(&system, "shape");
    let http = a.metrics_http_addr().unwrap();
    let (_, body) = exchange(http, &request("GET", "/api/snapshot"));
    let snap: Snapshot = serde_json::from_str(&body).unwrap();
    assert_eq!(snap.name, "shape");
    assert_eq!(snap.node, a.id().to_string());
    assert_eq!(snap.interval_ms, 1000);
    assert!(snap.members[0].me);
    assert_eq!(snap.members[0].name, "shape");
    assert_eq!(snap.members.iter().filter(|m| m.me).count(), 1);
    assert!(snap.samples.len() <= odeon_remote::dashboard::SAMPLES);
    // No system of this test process observes: "`None` without the `observe`
    // feature or when no system of the process was built with `observe(true)`".
    assert_eq!(snap.actors, None, "actors counted by no observed system");
    for key in [
        "handshakes_accepted",
        "handshakes_refused",
        "handshakes_shed",
        "accept_errors",
        "gossip_accepted",
        "gossip_rejected",
        "gossip_malformed",
        "gossip_oversized",
        "migrations_moved",
        "migrations_refused",
        "migrations_failed",
        "forwarded_frames",
    ] {
        assert!(
            snap.counters.contains_key(key),
            "no counter {key}: {:?}",
            snap.counters
        );
    }
    drop(a);
    assert!(system.shutdown());
}
