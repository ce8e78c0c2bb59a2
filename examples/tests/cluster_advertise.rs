//! The two-machine demo of the README, on one machine: both `odeon-node` processes bind
//! every interface (`--listen 0.0.0.0:0`) and advertise a loopback address
//! (`--advertise 127.0.0.1:0`, port 0 standing for the bound port).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const SECRET: &str = "the multi-process test secret";
const EVERY_INTERFACE: [&str; 4] = ["--listen", "0.0.0.0:0", "--advertise", "127.0.0.1:0"];

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
fn the_demo_runs_with_every_interface_bound_and_a_loopback_address_advertised() {
    let wait = Duration::from_secs(60);
    let mut server = Proc::start(&[&["serve", "--name", "server"][..], &EVERY_INTERFACE].concat());
    let addr = server
        .expect("listening ", wait)
        .trim_start_matches("listening ")
        .to_string();
    assert!(
        addr.starts_with("127.0.0.1:"),
        "the advertised address: {addr}"
    );
    server.expect("registered tally", wait);

    let probe = Proc::start(
        &[
            &["probe", "--name", "probe", "--seed", &addr][..],
            &EVERY_INTERFACE,
        ]
        .concat(),
    );
    probe.expect("found tally", wait);
    assert_eq!(probe.expect("total ", wait), "total 55");
    assert_eq!(
        probe.expect("spawned tally", wait),
        "spawned tally on server with total 100"
    );
    probe.expect("watching", wait);
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
}

#[test]
fn binding_every_interface_without_advertise_is_refused_with_a_reason() {
    let out = Command::new(env!("CARGO_BIN_EXE_odeon-node"))
        .args(["serve", "--name", "server", "--listen", "0.0.0.0:0"])
        .env("ODEON_SECRET", SECRET)
        .stdin(Stdio::null())
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("advertise"), "{err}");
}
