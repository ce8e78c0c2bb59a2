//! Turning a finished driver process into one [`Attempt`].
//!
//! The rules, in order (the first that applies wins):
//!
//! 1. Timed out, could not start, or killed by a signal: FAILED.
//! 2. `SAVINA-UNSUPPORTED` on stdout or exit status 4: n/a.
//! 3. A `SAVINA-RESULT` line that does not parse, or names another benchmark: FAILED
//!    (a driver that prints garbage has not shown a valid result).
//! 4. Any result, warm-up included, with `"valid": false`: FAILED with its detail.
//! 5. A non-zero exit status: FAILED, with the end of stderr.
//! 6. No measured (non-warm-up) result: FAILED. Otherwise the first measured
//!    result's time is the run's time.
//!
//! Every other stdout line is ignored, so drivers may print what they like.

use savina::protocol::{EXIT_UNSUPPORTED, ResultLine, UNSUPPORTED_PREFIX};

use crate::process::{Exit, Finished};

/// What one process run gave.
#[derive(Clone, Debug, PartialEq)]
pub enum Attempt {
    /// A validated time.
    Measured {
        /// The measured iteration's time.
        ns: u64,
        /// What the driver checked.
        detail: String,
    },
    /// The driver does not implement the benchmark.
    Unsupported,
    /// Why this run does not count.
    Failed(String),
}

/// Interprets the process that ran benchmark `bench`.
pub fn interpret(bench: &str, run: &Finished) -> Attempt {
    match &run.exit {
        Exit::TimedOut(limit) => {
            return Attempt::Failed(format!("timed out after {} s", limit.as_secs()));
        }
        Exit::SpawnFailed(why) => return Attempt::Failed(why.clone()),
        Exit::Signal(signal) => {
            return Attempt::Failed(with_stderr(format!("killed by signal {signal}"), run));
        }
        Exit::Code(_) => {}
    }
    let unsupported = run
        .stdout
        .lines()
        .any(|l| l.trim_start().starts_with(UNSUPPORTED_PREFIX.trim_end()));
    if unsupported || run.exit == Exit::Code(EXIT_UNSUPPORTED) {
        return Attempt::Unsupported;
    }
    let results = match parse_results(bench, &run.stdout) {
        Ok(results) => results,
        Err(why) => return Attempt::Failed(why),
    };
    if let Some(bad) = results.iter().find(|r| !r.valid) {
        let which = if bad.warmup { "warm-up" } else { "measured" };
        return Attempt::Failed(format!(
            "invalid result ({which} iteration {}): {}",
            bad.iteration, bad.detail
        ));
    }
    if let Exit::Code(code) = run.exit
        && code != 0
    {
        return Attempt::Failed(with_stderr(format!("exit status {code}"), run));
    }
    match results.into_iter().find(|r| !r.warmup) {
        Some(r) => Attempt::Measured {
            ns: r.ns,
            detail: r.detail,
        },
        None => Attempt::Failed(with_stderr("no measured SAVINA-RESULT line".into(), run)),
    }
}

/// Every result line of `stdout`; an error for the first one that does not parse or
/// is about another benchmark.
pub fn parse_results(bench: &str, stdout: &str) -> Result<Vec<ResultLine>, String> {
    let mut results = Vec::new();
    for line in stdout.lines() {
        match ResultLine::parse(line) {
            None => {}
            Some(Err(e)) => {
                return Err(format!(
                    "malformed result line ({e}): {}",
                    clip(line.trim(), 120)
                ));
            }
            Some(Ok(r)) if r.bench != bench => {
                return Err(format!("result for {:?} while running {bench:?}", r.bench));
            }
            Some(Ok(r)) => results.push(r),
        }
    }
    Ok(results)
}

/// `why`, then the last non-empty stderr line, if any.
fn with_stderr(why: String, run: &Finished) -> String {
    match run
        .stderr
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
    {
        Some(last) => format!("{why}: {}", clip(last, 200)),
        None => why,
    }
}

fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn finished(code: i32, stdout: &str) -> Finished {
        Finished {
            exit: Exit::Code(code),
            stdout: stdout.to_owned(),
            stderr: String::new(),
        }
    }

    fn line(warmup: bool, ns: u64, valid: bool) -> String {
        format!(
            r#"SAVINA-RESULT {{"bench":"pingpong","runtime":"x","iteration":0,"warmup":{warmup},"ns":{ns},"valid":{valid},"detail":"d"}}"#
        )
    }

    #[test]
    fn unknown_lines_are_ignored_and_the_measured_result_is_used() {
        let out = format!(
            "hello\n{}\nnoise\n{}\n",
            line(true, 9, true),
            line(false, 42, true)
        );
        let got = interpret("pingpong", &finished(0, &out));
        assert_eq!(
            got,
            Attempt::Measured {
                ns: 42,
                detail: "d".into()
            }
        );
    }

    #[test]
    fn malformed_result_line_is_a_failure_not_a_panic() {
        let out = format!("{}\nSAVINA-RESULT {{\"bench\": 1", line(false, 1, true));
        let Attempt::Failed(why) = interpret("pingpong", &finished(0, &out)) else {
            panic!("a malformed line must fail");
        };
        assert!(why.starts_with("malformed result line"), "{why}");
        assert!(matches!(
            interpret("pingpong", &finished(0, "SAVINA-RESULT")),
            Attempt::Failed(_)
        ));
    }

    #[test]
    fn invalid_results_fail_even_in_warmup() {
        let out = format!("{}\n{}", line(true, 1, false), line(false, 1, true));
        let Attempt::Failed(why) = interpret("pingpong", &finished(0, &out)) else {
            panic!("an invalid warm-up must fail");
        };
        assert!(why.contains("warm-up"), "{why}");
        let out = line(false, 5, false);
        assert!(
            matches!(interpret("pingpong", &finished(3, &out)), Attempt::Failed(w) if w.contains("invalid"))
        );
    }

    #[test]
    fn unsupported_by_line_or_by_status() {
        let na = interpret("pingpong", &finished(4, "SAVINA-UNSUPPORTED pingpong\n"));
        assert_eq!(na, Attempt::Unsupported);
        assert_eq!(
            interpret("pingpong", &finished(4, "")),
            Attempt::Unsupported
        );
    }

    #[test]
    fn exit_status_signal_timeout_and_silence_fail() {
        let mut run = finished(1, &line(false, 1, true));
        run.stderr = "panicked at main.rs\n\n".into();
        assert_eq!(
            interpret("pingpong", &run),
            Attempt::Failed("exit status 1: panicked at main.rs".into())
        );
        run.exit = Exit::Signal(9);
        assert!(
            matches!(interpret("pingpong", &run), Attempt::Failed(w) if w.contains("signal 9"))
        );
        run.exit = Exit::TimedOut(Duration::from_secs(60));
        assert_eq!(
            interpret("pingpong", &run),
            Attempt::Failed("timed out after 60 s".into())
        );
        let only_warmup = finished(0, &line(true, 1, true));
        assert!(
            matches!(interpret("pingpong", &only_warmup), Attempt::Failed(w) if w.contains("no measured"))
        );
    }

    #[test]
    fn a_result_for_another_benchmark_fails() {
        let out = line(false, 1, true).replace("pingpong", "counting");
        assert!(
            matches!(interpret("pingpong", &finished(0, &out)), Attempt::Failed(w) if w.contains("counting"))
        );
    }
}
