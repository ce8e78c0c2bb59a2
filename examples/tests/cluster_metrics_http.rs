//! `odeon-node serve --http ADDR`: the node serves `GET /metrics` with its own counters
//! and odeon's `odeon_*` metrics (its system is built with `observe(true)`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const SECRET: &str = "the multi-process test secret";
/// Only turns a hang into a failure.
const WAIT: Duration = Duration::from_secs(60);

fn scrape(addr: &str) -> String {
    let mut s = TcpStream::connect(addr).expect("the endpoint accepts");
    s.set_read_timeout(Some(WAIT)).unwrap();
    write!(s, "GET /metrics HTTP/1.1\r\nHost: test\r\n\r\n").unwrap();
    let mut page = String::new();
    s.read_to_string(&mut page).unwrap();
    page
}

#[test]
fn serve_with_http_answers_get_metrics_with_node_and_odeon_metrics() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_odeon-node"))
        .args(["serve", "--name", "scraped", "--http", "127.0.0.1:0"])
        .env("ODEON_SECRET", SECRET)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the odeon-node binary runs");
    let out = child.stdout.take().expect("piped");
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let listening = lines.recv_timeout(WAIT).expect("a first line");
    assert!(listening.starts_with("listening "), "{listening}");
    let metrics = lines.recv_timeout(WAIT).expect("a second line");
    let addr = metrics
        .strip_prefix("metrics http://")
        .and_then(|rest| rest.strip_suffix("/metrics"))
        .unwrap_or_else(|| panic!("expected the metrics line, got {metrics:?}"))
        .to_owned();
    // `serve` spawns its `tally` and `counter` before it serves: their spawns show.
    let deadline = Instant::now() + WAIT;
    let page = loop {
        let page = scrape(&addr);
        if page.contains("odeon_actors_spawned_total{actor=") {
            break page;
        }
        assert!(Instant::now() < deadline, "no spawn counted:\n{page}");
        std::thread::sleep(Duration::from_millis(50));
    };
    let _ = child.kill();
    let _ = child.wait();
    assert!(page.starts_with("HTTP/1.1 200 OK"), "{page}");
    assert!(
        page.contains("odeon_remote_handshakes_total{node=\"scraped#"),
        "{page}"
    );
    assert!(page.contains("# TYPE odeon_remote_gossip_datagrams_total counter"));
}
