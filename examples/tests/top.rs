//! `odeon-node top`: the snapshot of a live node (in this process, with a named actor)
//! drawn on ratatui's in-memory `TestBackend`; and `top --once` against a live
//! `odeon-node serve --http` process.

#[allow(dead_code)]
#[path = "../cluster/top.rs"]
mod top;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use odeon::{Actor, Context, Handler, Message, SpawnOptions, System};
use odeon_remote::{Node, Secret};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// Only turns a hang into a failure.
const WAIT: Duration = Duration::from_secs(60);

struct Projector;
impl Actor for Projector {}
struct Frame;
impl Message for Frame {
    type Reply = ();
}
impl Handler<Frame> for Projector {
    fn handle(&mut self, _: Frame, _: &mut Context<Self>) {}
}

fn text(terminal: &Terminal<TestBackend>) -> String {
    let buffer = terminal.backend().buffer();
    let mut out = String::new();
    for y in 0..buffer.area.height {
        for x in 0..buffer.area.width {
            out.push_str(buffer[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

#[test]
fn top_draws_the_node_and_a_named_actor_of_a_live_node() {
    let system = System::builder().observe(true).build();
    let node = system
        .block_on(
            Node::builder("screening")
                .secret(Secret::new("the top test secret").unwrap())
                .metrics_http("127.0.0.1:0".parse().unwrap())
                .start(&system.handle()),
        )
        .unwrap();
    let http = node.metrics_http_addr().unwrap();
    let projector = system.spawn_with(Projector, SpawnOptions::new().name("projector-7"));
    for _ in 0..41 {
        projector.tell(Frame).unwrap();
    }
    system.block_on(projector.ask(Frame)).unwrap();

    let deadline = Instant::now() + WAIT;
    let screen = loop {
        let snapshot = top::fetch(http).unwrap();
        let mut terminal = Terminal::new(TestBackend::new(110, 30)).unwrap();
        terminal.draw(|f| top::draw(f, &snapshot)).unwrap();
        let screen = text(&terminal);
        // The sampler runs once a second: wait for the sample that saw all 42.
        if screen.contains("projector-7") && screen.contains(" 42 ") {
            break screen;
        }
        assert!(Instant::now() < deadline, "never drawn:\n{screen}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(screen.contains(&node.id().to_string()), "{screen}");
    assert!(screen.contains("alive"), "{screen}");
    assert!(screen.contains("Projector"), "{screen}");
    assert!(screen.contains("messages per second"), "{screen}");
    drop(node);
    assert!(system.shutdown());
}

#[test]
fn top_once_prints_a_serving_node() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_odeon-node"))
        .args(["serve", "--name", "topped", "--http", "127.0.0.1:0"])
        .env("ODEON_SECRET", "the multi-process test secret")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the odeon-node binary runs");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut http = None;
    for line in lines.by_ref() {
        let line = line.unwrap();
        if let Some(url) = line.strip_prefix("metrics http://") {
            http = url.strip_suffix("/metrics").map(str::to_owned);
        }
        if line == "registered tally" {
            break;
        }
    }
    let http = http.expect("a metrics line");
    let deadline = Instant::now() + WAIT;
    let out = loop {
        let out = Command::new(env!("CARGO_BIN_EXE_odeon-node"))
            .args(["top", "--once", "--http", &http])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let out = String::from_utf8(out.stdout).unwrap();
        // The tally is listed once it handled a message; `serve` sends it none, so
        // the node and the empty table are what is checked here.
        if out.contains("topped#") {
            break out;
        }
        assert!(Instant::now() < deadline, "never: {out}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(out.contains("odeon top"), "{out}");
    assert!(out.contains("alive"), "{out}");
    let _ = child.kill();
    let _ = child.wait();
}
