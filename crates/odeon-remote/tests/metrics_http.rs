//! `NodeBuilder::metrics_http`: `GET /metrics` over a plain TCP socket, checked
//! against known traffic (a link accepted, a handshake refused, facade values), a
//! bind failure as a typed error, and other paths answered 404.
//!
//! With this crate's `observe` feature (`cargo test -p odeon-remote --features observe
//! --test metrics_http`), odeon's own `odeon_*` metrics are checked on the page too.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use odeon::System;
use odeon_remote::{Node, NodeError, Secret};

/// "Fail instead of hang" guard for waits on the cluster.
const HANG_GUARD: Duration = Duration::from_secs(20);

fn secret() -> Secret {
    Secret::new("the metrics test secret").unwrap()
}

fn start(system: &System, name: &str, http: Option<SocketAddr>) -> Result<Node, NodeError> {
    let mut b = Node::builder(name).secret(secret());
    if let Some(addr) = http {
        b = b.metrics_http(addr);
    }
    system.block_on(b.start(&system.handle()))
}

/// Sends `GET path` and returns (status line, body).
fn get(addr: SocketAddr, path: &str) -> (String, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(HANG_GUARD)).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: test\r\n\r\n").unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").expect("a head and a body");
    let status = head.lines().next().unwrap_or_default().to_owned();
    (status, body.to_owned())
}

/// The value of the sample whose name and labels are exactly `series`, if present.
fn sample(page: &str, series: &str) -> Option<f64> {
    page.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|v| v.trim().parse().ok())
}

/// Scrapes until `series` reads `want` (the counts move on the node's runtime).
fn scrape_until(addr: SocketAddr, series: &str, want: f64) -> String {
    let deadline = Instant::now() + HANG_GUARD;
    loop {
        let (status, page) = get(addr, "/metrics");
        assert_eq!(status, "HTTP/1.1 200 OK");
        if sample(&page, series) == Some(want) {
            return page;
        }
        assert!(
            Instant::now() < deadline,
            "{series} never read {want}:\n{page}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_page_counts_an_accepted_link_a_refused_handshake_and_facade_values() {
    let system = System::new();
    let a = start(&system, "scraped", Some("127.0.0.1:0".parse().unwrap())).unwrap();
    let b = start(&system, "dialer", None).unwrap();
    let http = a.metrics_http_addr().expect("asked for");
    assert_eq!(b.metrics_http_addr(), None);
    let node = a.id().to_string();

    system.block_on(b.connect(a.listen_addr())).unwrap();
    let accepted = format!("odeon_remote_handshakes_total{{node=\"{node}\",outcome=\"accepted\"}}");
    scrape_until(http, &accepted, 1.0);

    // Garbage instead of a handshake: refused.
    let mut junk = TcpStream::connect(a.bound_addr()).unwrap();
    junk.write_all(&[0xff; 64]).unwrap();
    drop(junk);
    let refused = format!("odeon_remote_handshakes_total{{node=\"{node}\",outcome=\"refused\"}}");
    let page = scrape_until(http, &refused, 1.0);
    assert!(
        page.contains("# TYPE odeon_remote_handshakes_total counter"),
        "{page}"
    );
    for series in [
        format!("odeon_remote_gossip_datagrams_total{{node=\"{node}\",outcome=\"rejected\"}}"),
        format!("odeon_remote_migrations_total{{node=\"{node}\",outcome=\"moved\"}}"),
        format!("odeon_remote_migration_seconds_count{{node=\"{node}\"}}"),
    ] {
        assert_eq!(sample(&page, &series), Some(0.0), "{series}:\n{page}");
    }

    // Anything recorded through the `metrics` facade is on the page too.
    metrics::counter!("metrics_http_test_total", "kind" => "probe").increment(7);
    scrape_until(http, "metrics_http_test_total{kind=\"probe\"}", 7.0);
    drop((a, b));
    assert!(system.shutdown());
}

#[test]
fn an_address_in_use_is_a_typed_bind_error() {
    let system = System::new();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap();
    match start(&system, "clash", Some(addr)) {
        Err(NodeError::MetricsBind { addr: a, .. }) => assert_eq!(a, addr),
        other => panic!("expected MetricsBind, got {other:?}"),
    }
    assert!(system.shutdown());
}

#[test]
fn other_paths_are_not_found_and_the_endpoint_stops_with_the_node() {
    let system = System::new();
    let a = start(&system, "paths", Some("127.0.0.1:0".parse().unwrap())).unwrap();
    let http = a.metrics_http_addr().unwrap();
    assert_eq!(get(http, "/nothing-here").0, "HTTP/1.1 404 Not Found");
    // The dashboard's page (`tests/dashboard.rs` checks its content).
    assert_eq!(get(http, "/").0, "HTTP/1.1 200 OK");
    assert_eq!(get(http, "/metrics?x=1").0, "HTTP/1.1 200 OK");
    drop(a);
    // The accept task is aborted: connections are refused (or closed unanswered).
    let deadline = Instant::now() + HANG_GUARD;
    loop {
        let served = TcpStream::connect(http).is_ok_and(|mut s| {
            s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
            let _ = write!(s, "GET /metrics HTTP/1.1\r\n\r\n");
            let mut buf = String::new();
            s.read_to_string(&mut buf).is_ok_and(|_| !buf.is_empty())
        });
        if !served {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "still serving after the node was dropped"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(system.shutdown());
}

/// odeon's own metrics, recorded by a system built with `observe(true)`.
#[cfg(feature = "observe")]
#[test]
fn odeon_metrics_of_an_observed_system_are_on_the_page() {
    use odeon::{Actor, Context, Handler, Message};

    struct Scraped;
    impl Actor for Scraped {}
    struct Hit;
    impl Message for Hit {
        type Reply = ();
    }
    impl Handler<Hit> for Scraped {
        fn handle(&mut self, _: Hit, _: &mut Context<Self>) {}
    }

    let system = System::builder().observe(true).build();
    let a = start(&system, "observed", Some("127.0.0.1:0".parse().unwrap())).unwrap();
    let http = a.metrics_http_addr().unwrap();
    let actor = system.spawn(Scraped);
    const N: u64 = 250;
    for _ in 0..N - 1 {
        actor.tell(Hit).unwrap();
    }
    system.block_on(actor.ask(Hit)).unwrap();
    let ty = std::any::type_name::<Scraped>();
    let page = scrape_until(
        http,
        &format!("odeon_messages_handled_total{{actor=\"{ty}\"}}"),
        N as f64,
    );
    assert!(
        page.contains(&format!("odeon_actors_spawned_total{{actor=\"{ty}\"}} 1")),
        "{page}"
    );
    assert!(
        page.contains("# TYPE odeon_handler_seconds histogram"),
        "{page}"
    );
    drop(a);
    assert!(system.shutdown());
}
