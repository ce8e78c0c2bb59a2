//! Every benchmark this driver implements validates at `--quick` sizes, with one and
//! with two worker threads, and the process exits by itself.

use std::process::Command;

const BENCHES: &[&str] = &[
    "pingpong",
    "counting",
    "fjthrput",
    "fjcreate",
    "threadring",
    "threadring503",
    "chameneos",
    "big",
    "fib",
    "concdict",
    "philosopher",
    "logmap",
    "banking",
    "trapezoid",
];

fn run(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_savina-ractor"))
        .args(args)
        .output()
        .expect("the driver runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn every_benchmark_validates_at_quick_sizes() {
    for bench in BENCHES {
        for threads in ["1", "2"] {
            let (code, stdout) =
                run(&[bench, "--quick", "--iterations", "2", "--threads", threads]);
            assert_eq!(code, 0, "{bench} --threads {threads}:\n{stdout}");
            let results: Vec<_> = stdout
                .lines()
                .filter_map(savina::protocol::ResultLine::parse)
                .collect();
            assert_eq!(results.len(), 2, "{bench}: {stdout}");
            for line in results {
                let line = line.expect("a well-formed result line");
                assert!(line.valid, "{bench}: {}", line.detail);
                assert_eq!(line.runtime, "ractor");
            }
        }
    }
}

#[test]
fn unimplemented_benchmarks_say_so() {
    let (code, stdout) = run(&["sor", "--quick"]);
    assert_eq!(code, savina::protocol::EXIT_UNSUPPORTED);
    assert!(stdout.starts_with(savina::protocol::UNSUPPORTED_PREFIX));
}
