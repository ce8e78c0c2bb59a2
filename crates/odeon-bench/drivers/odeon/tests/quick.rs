//! CI's check of the Savina suite on odeon: every benchmark of the catalog runs once with
//! its `--quick` parameters, through the real driver binary and its output protocol, and
//! must report a result that validated. (Full-size runs are for the runner, not for CI.)

use std::process::Command;

use savina::protocol::{EXIT_UNSUPPORTED, ResultLine, UNSUPPORTED_PREFIX};

fn run_quick(id: &str) -> Result<ResultLine, String> {
    let out = Command::new(env!("CARGO_BIN_EXE_savina-odeon"))
        .args([id, "--quick", "--iterations", "1"])
        .output()
        .map_err(|e| format!("{id}: could not start the driver: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if out.status.code() == Some(EXIT_UNSUPPORTED) || stdout.contains(UNSUPPORTED_PREFIX) {
        return Err(format!("{id}: not implemented on odeon"));
    }
    let lines: Vec<ResultLine> = stdout
        .lines()
        .filter_map(ResultLine::parse)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{id}: malformed result line: {e}"))?;
    let [line] = lines.as_slice() else {
        return Err(format!(
            "{id}: expected one result line, got {}:\n{stdout}",
            lines.len()
        ));
    };
    if !out.status.success() || !line.valid {
        return Err(format!(
            "{id}: exit {:?}, detail: {}\nstderr: {}",
            out.status.code(),
            line.detail,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(line.clone())
}

#[test]
fn every_benchmark_validates_at_quick_size() {
    let failures: Vec<String> = savina::catalog::ALL
        .iter()
        .filter_map(|b| run_quick(b.id).err())
        .collect();
    assert!(
        failures.is_empty(),
        "{} benchmark(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn bad_arguments_are_refused_with_the_usage_status() {
    // The driver rejects bad input with the protocol's usage status instead of running.
    let out = Command::new(env!("CARGO_BIN_EXE_savina-odeon"))
        .args(["pingpong", "-n", "many"])
        .output()
        .expect("the driver starts");
    assert_eq!(out.status.code(), Some(savina::protocol::EXIT_USAGE));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a number"));
}
