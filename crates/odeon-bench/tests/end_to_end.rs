//! The whole runner against fake drivers: a shell script written to a temporary
//! folder plays a valid runtime, a faster valid one, one whose result does not
//! validate, one that does not implement the benchmark, and one that hangs. Nothing
//! here depends on the real drivers (they are never built: every configuration is a
//! `--driver` one).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// `fake.sh <mode> <ns> <bench> <args..>`: logs its command line, then behaves as
/// `mode` says.
const FAKE: &str = r#"#!/bin/sh
mode=$1; ns=$2; shift 2
echo "$mode $*" >> "$(dirname "$0")/calls.log"
bench=$1
echo "some chatter the runner must ignore"
case $mode in
  valid)
    echo "SAVINA-RESULT {\"bench\":\"$bench\",\"runtime\":\"fake\",\"iteration\":0,\"warmup\":false,\"ns\":$ns,\"valid\":true,\"detail\":\"checked\"}"
    exit 0 ;;
  invalid)
    echo "SAVINA-RESULT {\"bench\":\"$bench\",\"runtime\":\"fake\",\"iteration\":0,\"warmup\":false,\"ns\":1,\"valid\":false,\"detail\":\"count 7, expected 8\"}"
    exit 3 ;;
  unsupported)
    echo "SAVINA-UNSUPPORTED $bench"
    exit 4 ;;
  hang)
    sleep 30 ;;
esac
"#;

struct Session {
    dir: tempfile::TempDir,
    output: Output,
}

impl Session {
    fn json(&self) -> Value {
        let text = fs::read_to_string(self.out().join("results.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    fn out(&self) -> PathBuf {
        self.dir.path().join("out")
    }

    fn calls(&self) -> Vec<String> {
        let log = fs::read_to_string(self.dir.path().join("calls.log")).unwrap_or_default();
        log.lines().map(str::to_owned).collect()
    }

    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }
}

/// Runs the runner with `drivers` as `(name, mode and ns)` and extra arguments.
fn session(drivers: &[(&str, &str)], extra: &[&str]) -> Session {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("fake.sh");
    fs::write(&fake, FAKE).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_odeon-bench"));
    let names: Vec<&str> = drivers.iter().map(|(n, _)| *n).collect();
    cmd.args(["--runtimes", &names.join(",")]);
    for (name, mode) in drivers {
        cmd.arg("--driver")
            .arg(format!("{name}=sh {} {mode}", fake.display()));
    }
    cmd.arg("--out").arg(dir.path().join("out")).args(extra);
    let output = cmd.output().unwrap();
    Session { dir, output }
}

fn assert_success(s: &Session) {
    assert!(
        s.output.status.success(),
        "runner failed: {}\n{}",
        s.stdout(),
        String::from_utf8_lossy(&s.output.stderr)
    );
}

#[test]
fn one_interleaved_session_with_valid_invalid_and_unsupported_runtimes() {
    let s = session(
        &[
            ("odeon", "valid 1000000"),
            ("peer", "valid 2000000"),
            ("wrong", "invalid 0"),
            ("absent", "unsupported 0"),
        ],
        &["--only", "pingpong", "--runs", "2", "--threads", "2"],
    );
    assert_success(&s);

    // Interleaved: every runtime in round 1, then round 2 without the n/a and the
    // failed ones, which are never retried.
    let calls = s.calls();
    let order: Vec<&str> = calls
        .iter()
        .map(|c| c.split(' ').next().unwrap_or(""))
        .collect();
    assert_eq!(
        order,
        ["valid", "valid", "invalid", "unsupported", "valid", "valid"]
    );
    assert_eq!(
        calls[0],
        "valid pingpong --iterations 1 --warmup 1 --threads 2 -n 40000"
    );

    let stdout = s.stdout();
    let row = stdout
        .lines()
        .find(|l| l.starts_with("pingpong"))
        .expect("a pingpong row");
    for cell in [
        "1.00 [1.00–1.00]",
        "2.00 [2.00–2.00]",
        "FAILED",
        "n/a",
        "0.50×",
        "peer",
    ] {
        assert!(row.contains(cell), "{cell:?} missing from {row:?}");
    }
    assert!(stdout.contains(
        "FAILED pingpong on wrong: invalid result (measured iteration 0): count 7, expected 8"
    ));

    let doc = s.json();
    let ping = &doc["benchmarks"][0];
    assert_eq!(
        doc["runtimes"],
        serde_json::json!(["odeon", "peer", "wrong", "absent"])
    );
    assert_eq!(ping["params"]["n"], "40000");
    assert_eq!(
        ping["results"]["odeon"]["times_ns"],
        serde_json::json!([1000000, 1000000])
    );
    assert_eq!(ping["results"]["wrong"]["status"], "failed");
    assert_eq!(ping["results"]["absent"]["status"], "n/a");
    assert_eq!(ping["best_peer"], "peer");
    assert_eq!(ping["odeon_vs_best_peer"], 0.5);
    assert!(
        doc["command"]
            .as_str()
            .unwrap()
            .starts_with("odeon-bench --runtimes")
    );

    let md = fs::read_to_string(s.out().join("results.md")).unwrap();
    assert!(md.contains(
        "| pingpong | 1.00 [1.00–1.00] | 2.00 [2.00–2.00] | FAILED | n/a | 0.50× | peer |"
    ));
    let svg = fs::read_to_string(s.out().join("ratios.svg")).unwrap();
    assert!(svg.contains("pingpong") && svg.contains("0.50×"));
}

#[test]
fn quick_parameters_are_passed_and_a_hung_driver_times_out() {
    let s = session(
        &[("odeon", "valid 5000000"), ("stuck", "hang 0")],
        &[
            "--quick",
            "--only",
            "threadring",
            "--runs",
            "1",
            "--timeout",
            "1",
        ],
    );
    assert_success(&s);
    assert!(s.calls()[0].ends_with("-n 10 -r 2000"), "{:?}", s.calls());
    let doc = s.json();
    let cell = &doc["benchmarks"][0]["results"]["stuck"];
    assert_eq!(cell["status"], "failed");
    assert_eq!(cell["reason"], "timed out after 1 s");
    assert_eq!(doc["benchmarks"][0]["odeon_vs_best_peer"], Value::Null);
}

#[test]
fn bad_arguments_exit_2_with_a_message() {
    let out = Command::new(env!("CARGO_BIN_EXE_odeon-bench"))
        .args(["--only", "nosuch"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown benchmark"));
    let out = Command::new(env!("CARGO_BIN_EXE_odeon-bench"))
        .args(["--runtimes", "akka", "--out"])
        .arg(Path::new("/nonexistent"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("matches no configuration"));
}
