//! `odeon-node top`: the snapshot of a live node (in this process, with a named actor)
//! drawn on ratatui's in-memory `TestBackend`; and `top --once` against a live
//! `odeon-node serve --http` process.

#[allow(dead_code)]
#[path = "../cluster/top.rs"]
mod top;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use odeon::{Actor, Context, Handler, Message, SpawnOptions, Strategy, SupervisorSpec, System};
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

/// Panics on `Crash` (its supervisor restarts it).
#[derive(Default)]
struct Reel;
impl Actor for Reel {}
struct Crash;
impl Message for Crash {
    type Reply = ();
}
impl Handler<Crash> for Reel {
    fn handle(&mut self, _: Crash, _: &mut Context<Self>) {
        panic!("a crash top must show as a restart");
    }
}
impl Handler<Frame> for Reel {
    fn handle(&mut self, _: Frame, _: &mut Context<Self>) {}
}

/// Stuck in its first message (its own thread) until released.
struct Queue;
impl Actor for Queue {}
struct Hold(mpsc::Sender<()>, mpsc::Receiver<()>);
impl Message for Hold {
    type Reply = ();
}
impl Handler<Hold> for Queue {
    fn handle(&mut self, h: Hold, _: &mut Context<Self>) {
        let _ = h.0.send(());
        let _ = h.1.recv_timeout(WAIT);
    }
}
impl Handler<Frame> for Queue {
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
fn top_draws_the_deepest_mailboxes_and_the_supervision_tree() {
    let system = System::builder().observe(true).build();
    let node = system
        .block_on(
            Node::builder("usher")
                .secret(Secret::new("the top test secret").unwrap())
                .metrics_http("127.0.0.1:0".parse().unwrap())
                .start(&system.handle()),
        )
        .unwrap();
    let http = node.metrics_http_addr().unwrap();
    let spec = SupervisorSpec::new(Strategy::OneForOne).max_restarts(10, Duration::from_secs(60));
    let (_sup, reels) = system.supervise(spec, |c| {
        ["reel-1", "reel-2", "reel-3"]
            .map(|n| c.spawn_with(Reel::default, SpawnOptions::new().name(n)))
    });
    for _ in 0..2 {
        reels[1].tell(Crash).unwrap();
        system.block_on(reels[1].ask(Frame)).unwrap();
    }
    let queue = system.spawn_with(Queue, SpawnOptions::new().name("queue-9").blocking());
    let (started, wait_started) = mpsc::channel();
    let (release, wait) = mpsc::channel();
    queue.tell(Hold(started, wait)).unwrap();
    wait_started.recv_timeout(WAIT).unwrap();
    for _ in 0..50 {
        queue.tell(Frame).unwrap();
    }

    let draw = |view| {
        let snapshot = top::fetch(http).unwrap();
        let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
        terminal
            .draw(|f| top::draw_view(f, &snapshot, view))
            .unwrap();
        text(&terminal)
    };
    let deadline = Instant::now() + WAIT;
    let screen = loop {
        let screen = draw(top::View::Overview);
        if screen.contains("queue-9") && screen.contains("restarts 2") {
            break screen;
        }
        assert!(Instant::now() < deadline, "never drawn:\n{screen}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(screen.contains("deepest mailboxes"), "{screen}");
    // The deepest mailboxes are the left pane of the middle row (the busiest actors
    // list queue-9 too, in the right pane of the top row).
    let queued = screen
        .lines()
        .map(|l| l.split("││").next().unwrap_or(l))
        .find(|l| l.contains("queue-9") && l.contains(&format!("#{}", queue.id().as_u64())))
        .unwrap_or_else(|| panic!("no mailbox row:\n{screen}"));
    assert!(queued.contains(" 50 "), "{queued}");
    assert!(screen.contains("supervision tree"), "{screen}");

    let tree = draw(top::View::Tree);
    let lines: Vec<&str> = tree.lines().collect();
    let sup = lines
        .iter()
        .position(|l| l.contains("+ Supervisor"))
        .unwrap_or_else(|| panic!("no supervisor:\n{tree}"));
    for (i, name) in ["reel-1", "reel-2", "reel-3"].iter().enumerate() {
        let line = lines[sup + 1 + i];
        assert!(line.contains(&format!("  - Reel \"{name}\"")), "{tree}");
        assert_eq!(line.contains("restarts 2"), *name == "reel-2", "{tree}");
    }
    release.send(()).unwrap();
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
