//! Several OS processes on loopback, started from the `odeon-node` binary: a cluster
//! forms, messages flow, the serving process is killed, and the other observes
//! `Terminated` and failed asks.

use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const SECRET: &str = "the multi-process test secret";

struct Proc {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Proc {
    fn start(args: &[&str]) -> Proc {
        let mut child = Command::new(env!("CARGO_BIN_EXE_odeon-node"))
            .args(args)
            .env("ODEON_SECRET", SECRET)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the odeon-node binary runs");
        let out: ChildStdout = child.stdout.take().expect("piped");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Proc { child, lines }
    }

    /// The next line that starts with `prefix`, within `within`.
    fn expect(&self, prefix: &str, within: Duration) -> String {
        let deadline = std::time::Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) if l.starts_with(prefix) => return l,
                Ok(_) => {}
                Err(e) => panic!("no line starting with {prefix:?}: {e}"),
            }
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_killed_process_is_seen_as_lost_by_the_others() {
    let wait = Duration::from_secs(60);
    let mut server = Proc::start(&["serve", "--name", "server"]);
    let listening = server.expect("listening ", wait);
    let addr = listening.trim_start_matches("listening ").to_string();
    server.expect("registered tally", wait);

    let probe = Proc::start(&["probe", "--name", "probe", "--seed", &addr]);
    probe.expect("found tally", wait);
    assert_eq!(probe.expect("total ", wait), "total 55");
    assert_eq!(
        probe.expect("spawned tally", wait),
        "spawned tally on server with total 100"
    );
    probe.expect("watching", wait);

    // The serving process dies without leaving.
    server.child.kill().expect("kill the server");
    let _ = server.child.wait();

    let mut seen = vec![probe.expect("", wait), probe.expect("", wait)];
    seen.sort();
    assert_eq!(
        seen,
        vec![
            "ask failed: the actor's node is unreachable".to_string(),
            "terminated: its node was lost".to_string(),
        ]
    );
    let mut probe = probe;
    let status = probe.child.wait().expect("the probe exits");
    assert!(status.success(), "{status:?}");
}

#[test]
fn a_process_with_the_wrong_secret_is_refused() {
    let wait = Duration::from_secs(60);
    let server = Proc::start(&["serve", "--name", "server"]);
    let addr = server
        .expect("listening ", wait)
        .trim_start_matches("listening ")
        .to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_odeon-node"))
        .args(["probe", "--name", "intruder", "--seed", &addr])
        .env("ODEON_SECRET", "some other secret entirely")
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot link"), "{err}");
}

#[test]
fn the_mobile_counter_moves_to_another_process_and_back_twice() {
    let wait = Duration::from_secs(60);
    let server = Proc::start(&["serve", "--name", "home"]);
    let addr = server
        .expect("listening ", wait)
        .trim_start_matches("listening ")
        .to_string();
    server.expect("registered tally", wait);
    // Twice: the second run finds the counter back home, with the first run's count.
    for (name, total) in [("visitor1", 10), ("visitor2", 20)] {
        let mut migrate = Proc::start(&["migrate", "--name", name, "--seed", &addr]);
        assert_eq!(migrate.expect("counter on", wait), "counter on home");
        assert_eq!(
            migrate.expect("counter moved", wait),
            format!("counter moved to {name}")
        );
        assert_eq!(
            migrate.expect("counted", wait),
            format!("counted {total} in all, 10 of them here")
        );
        assert_eq!(migrate.expect("counter back", wait), "counter back on home");
        let status = migrate.child.wait().expect("migrate exits");
        assert!(status.success(), "{status:?}");
    }
}
