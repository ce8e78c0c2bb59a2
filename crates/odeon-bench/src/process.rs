//! Starting one driver process with a time limit and collecting its output.
//!
//! The driver runs in its own process group so that a timeout kills everything it
//! started (a `run.sh` that execs `java` or starts `erl` has children of its own).
//! Output is read by two threads while the process runs, so a chatty driver can
//! never block on a full pipe.

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// How long to wait for the pipes to close after the process exited, in case a
/// grandchild it left behind still holds them.
const DRAIN: Duration = Duration::from_secs(2);
/// How often to check whether the process has exited. Only the runner's reaction
/// time depends on it: drivers time themselves.
const POLL: Duration = Duration::from_millis(5);

/// The process group of the driver running now (0: none), for [`interrupted`].
/// Drivers run in their own group, so a Ctrl-C at the terminal does not reach them.
static RUNNING: AtomicU32 = AtomicU32::new(0);

/// Call on SIGINT: kills the running driver's process group, so that interrupting
/// the runner leaves no benchmark behind.
pub fn interrupted() {
    let pgid = RUNNING.swap(0, Ordering::SeqCst);
    if pgid != 0 {
        kill_group(pgid);
    }
}

/// How a process ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Exit {
    /// It exited with this status.
    Code(i32),
    /// It was killed by this signal (a crash, or the OOM killer).
    Signal(i32),
    /// It ran past the time limit and was killed.
    TimedOut(Duration),
    /// It could not be started.
    SpawnFailed(String),
}

/// A finished process.
#[derive(Clone, Debug)]
pub struct Finished {
    /// How it ended.
    pub exit: Exit,
    /// Everything it printed on stdout (lossy UTF-8).
    pub stdout: String,
    /// Everything it printed on stderr (lossy UTF-8).
    pub stderr: String,
}

/// Runs `cmd` (stdin closed, stdout and stderr captured) for at most `timeout`.
pub fn run(mut cmd: Command, timeout: Duration) -> Finished {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            let program = cmd.get_program().to_string_lossy().into_owned();
            return Finished {
                exit: Exit::SpawnFailed(format!("cannot start {program}: {e}")),
                stdout: String::new(),
                stderr: String::new(),
            };
        }
    };
    RUNNING.store(child.id(), Ordering::SeqCst);
    let (tx, rx) = mpsc::channel();
    let readers = [
        child.stdout.take().map(|p| spawn_reader(p, 0, tx.clone())),
        child.stderr.take().map(|p| spawn_reader(p, 1, tx.clone())),
    ];
    drop(tx);
    let exit = wait(&mut child, timeout);
    let mut out = [String::new(), String::new()];
    let deadline = Instant::now() + DRAIN;
    let expected = readers.iter().flatten().count();
    for _ in 0..expected {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok((i, text)) => out[i] = text,
            // Something the driver started still holds the pipes: end it.
            Err(_) => {
                kill_group(child.id());
                break;
            }
        }
    }
    RUNNING.store(0, Ordering::SeqCst);
    let [stdout, stderr] = out;
    Finished {
        exit,
        stdout,
        stderr,
    }
}

fn spawn_reader(
    mut pipe: impl Read + Send + 'static,
    index: usize,
    tx: mpsc::Sender<(usize, String)>,
) -> thread::JoinHandle<()> {
    thread::spawn(move || {
        let mut bytes = Vec::new();
        // A read error just ends the output early; the exit status tells the rest.
        let _ = pipe.read_to_end(&mut bytes);
        let _ = tx.send((index, String::from_utf8_lossy(&bytes).into_owned()));
    })
}

fn wait(child: &mut Child, timeout: Duration) -> Exit {
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                return match (status.code(), status.signal()) {
                    (Some(code), _) => Exit::Code(code),
                    (None, Some(signal)) => Exit::Signal(signal),
                    (None, None) => Exit::Code(-1),
                };
            }
            Ok(None) if start.elapsed() >= timeout => {
                kill_group(child.id());
                let _ = child.kill();
                let _ = child.wait();
                return Exit::TimedOut(timeout);
            }
            Ok(None) => thread::sleep(POLL),
            Err(e) => return Exit::SpawnFailed(format!("cannot wait for the driver: {e}")),
        }
    }
}

/// SIGKILLs a driver's process group (the driver's pid, as it was started with
/// `process_group(0)`). Done with `kill(1)` to keep this crate free of `unsafe`.
fn kill_group(pgid: u32) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", script]);
        cmd
    }

    #[test]
    fn output_and_status_are_captured() {
        let f = run(
            sh("echo out; echo err >&2; exit 3"),
            Duration::from_secs(10),
        );
        assert_eq!(f.exit, Exit::Code(3));
        assert_eq!((f.stdout.as_str(), f.stderr.as_str()), ("out\n", "err\n"));
    }

    #[test]
    fn a_hung_process_and_its_children_are_killed() {
        let start = Instant::now();
        let f = run(
            sh("sleep 30 & sleep 30; echo never"),
            Duration::from_millis(200),
        );
        assert_eq!(f.exit, Exit::TimedOut(Duration::from_millis(200)));
        assert!(start.elapsed() < Duration::from_secs(10));
        assert!(!f.stdout.contains("never"));
    }

    #[test]
    fn a_crash_is_a_signal() {
        let f = run(sh("kill -SEGV $$"), Duration::from_secs(10));
        assert_eq!(f.exit, Exit::Signal(11));
    }

    #[test]
    fn a_missing_program_is_reported() {
        let f = run(Command::new("/nonexistent/driver"), Duration::from_secs(1));
        assert!(matches!(f.exit, Exit::SpawnFailed(ref m) if m.contains("/nonexistent/driver")));
    }
}
