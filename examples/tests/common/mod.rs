//! One `odeon-node` process driven by a test: started with the test secret, its
//! standard output read line by line, killed when dropped.

use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub const SECRET: &str = "the multi-process test secret";

pub struct Proc {
    pub child: Child,
    lines: mpsc::Receiver<String>,
}

impl Proc {
    pub fn start(args: &[&str]) -> Proc {
        Proc::start_env(args, &[])
    }

    /// [`Proc::start`] with these environment variables too.
    pub fn start_env(args: &[&str], env: &[(&str, &str)]) -> Proc {
        let mut child = Command::new(env!("CARGO_BIN_EXE_odeon-node"))
            .args(args)
            .envs(env.iter().copied())
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
    pub fn expect(&self, prefix: &str, within: Duration) -> String {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) if l.starts_with(prefix) => return l,
                Ok(_) => {}
                Err(e) => panic!("no line starting with {prefix:?}: {e}"),
            }
        }
    }

    /// The next line, within `within`.
    pub fn next_line(&self, within: Duration) -> String {
        self.lines
            .recv_timeout(within)
            .unwrap_or_else(|e| panic!("no further line: {e}"))
    }

    /// Sends `signal` (`STOP`, `CONT`, ...) to the process with kill(1).
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.child.id().to_string())
            .status()
            .expect("kill(1) runs");
        assert!(status.success(), "kill -{signal}: {status:?}");
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        // SIGKILL ends a stopped process too; the SIGCONT is for a test that fails
        // between its STOP and CONT, so that nothing is left behind stopped.
        let _ = Command::new("kill")
            .arg("-CONT")
            .arg(self.child.id().to_string())
            .stderr(Stdio::null())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
