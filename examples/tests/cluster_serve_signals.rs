//! `odeon-node serve` as a service runs it: with its standard input closed (systemd,
//! a container, `&` in a shell), it keeps serving, and SIGTERM or SIGINT make it leave
//! the cluster and exit with status 0.
#![cfg(unix)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const SECRET: &str = "the multi-process test secret";
/// Only turns a hang into a failure.
const WAIT: Duration = Duration::from_secs(60);

struct Proc {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Proc {
    /// Starts `odeon-node` with `args`; its standard input is closed from the start.
    fn start(args: &[&str]) -> Proc {
        let mut child = Command::new(env!("CARGO_BIN_EXE_odeon-node"))
            .args(args)
            .env("ODEON_SECRET", SECRET)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the odeon-node binary runs");
        // Close our end at once: the child reads end-of-file, as under `< /dev/null`.
        drop(child.stdin.take());
        let out = child.stdout.take().expect("piped");
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

    /// The next line, which must start with `prefix`.
    fn expect_next(&self, prefix: &str) -> String {
        match self.lines.recv_timeout(WAIT) {
            Ok(l) if l.starts_with(prefix) => l,
            Ok(l) => panic!("expected a line starting with {prefix:?}, got {l:?}"),
            Err(e) => panic!("no line starting with {prefix:?}: {e}"),
        }
    }

    /// The next line that starts with `prefix`, skipping others.
    fn expect(&self, prefix: &str) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) if l.starts_with(prefix) => return l,
                Ok(_) => {}
                Err(e) => panic!("no line starting with {prefix:?}: {e}"),
            }
        }
    }

    fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -{name}: {status:?}");
    }

    /// The exit status, waiting at most `WAIT`.
    fn exit_status(&mut self) -> ExitStatus {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(Instant::now() < deadline, "the process did not exit");
            std::thread::sleep(Duration::from_millis(20));
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
fn serve_with_stdin_closed_keeps_serving_until_sigterm_then_leaves_and_exits_cleanly() {
    let mut server = Proc::start(&["serve", "--name", "server"]);
    let addr = server
        .expect_next("listening ")
        .trim_start_matches("listening ")
        .to_string();
    server.expect_next("registered tally");

    // Its stdin has been closed all along; a whole probe session still finds it.
    let mut probe = Proc::start(&["probe", "--name", "probe", "--seed", &addr]);
    probe.expect("found tally");
    assert_eq!(probe.expect("total "), "total 55");
    assert_eq!(
        probe.expect("spawned tally"),
        "spawned tally on server with total 100"
    );
    probe.expect("watching");
    assert!(
        server.child.try_wait().expect("try_wait").is_none(),
        "the server exited before it was signalled"
    );
    assert!(
        server.lines.try_recv().is_err(),
        "the server printed something before it was signalled"
    );

    server.signal("TERM");
    assert_eq!(server.expect_next("received"), "received SIGTERM, leaving");
    assert_eq!(server.expect_next("left"), "left");
    let status = server.exit_status();
    assert!(status.success(), "{status:?}");
    // As the README says of Ctrl-C: the probe sees the node go, and exits 0 once it has
    // also seen an ask fail.
    assert_eq!(
        probe.expect("terminated: "),
        "terminated: its node was lost"
    );
    let status = probe.exit_status();
    assert!(status.success(), "{status:?}");
}

#[test]
fn serve_stops_on_sigint_as_on_ctrl_c() {
    let mut server = Proc::start(&["serve", "--name", "server"]);
    server.expect_next("listening ");
    server.expect_next("registered tally");
    server.signal("INT");
    assert_eq!(server.expect_next("received"), "received SIGINT, leaving");
    assert_eq!(server.expect_next("left"), "left");
    let status = server.exit_status();
    assert!(status.success(), "{status:?}");
}
