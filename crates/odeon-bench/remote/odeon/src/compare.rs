//! `remote-odeon compare`: odeon, Erlang distribution and Pekko Artery side by side,
//! interleaved (odeon, erlang, pekko, odeon, ...) so that machine drift hits all alike.
//! The order rotates every round and each run starts after a pause, so that no runtime
//! always follows the same one (a JVM that has just exited leaves the kernel freeing
//! its heap for a while: the runtime after it paid for that in every round).
//! A peer whose toolchain or build is missing is skipped with a message.
//!
//! `REMOTE_ODEON_BASELINE=<path to another remote-odeon binary>` adds that build as the
//! runtime `odeon-base`, run in the same rounds, so a change is measured side by side
//! against the build before it.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// How long the machine rests before each run.
const PAUSE: std::time::Duration = std::time::Duration::from_secs(1);

/// Runs `rounds` rounds of `rtt` and `throughput` on every runtime; prints a Markdown
/// table of medians with min–max.
pub(crate) fn compare(rounds: usize, quick: bool) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut runners: Vec<(String, Command)> = Vec::new();
    let mut samples: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    let baseline = std::env::var_os("REMOTE_ODEON_BASELINE");
    for round in 0..rounds {
        for bench in ["rtt", "throughput"] {
            runners.clear();
            let mut own = Command::new(&exe);
            own.arg(bench);
            runners.push(("odeon".into(), own));
            if let Some(base) = &baseline {
                let mut old = Command::new(base);
                old.arg(bench);
                runners.push(("odeon-base".into(), old));
            }
            for peer in ["erlang", "pekko"] {
                let mut c = Command::new("bash");
                c.arg(here.join("..").join(peer).join("run.sh")).arg(bench);
                runners.push((peer.into(), c));
            }
            let turn = round % runners.len();
            runners.rotate_left(turn);
            for (name, cmd) in &mut runners {
                std::thread::sleep(PAUSE);
                if quick {
                    cmd.arg("--quick");
                }
                let out = cmd.output().map_err(|e| format!("{name}: {e}"))?;
                if !out.status.success() {
                    eprintln!(
                        "round {round}: {name} {bench} skipped (exit {:?}): {}",
                        out.status.code(),
                        String::from_utf8_lossy(&out.stderr)
                            .lines()
                            .last()
                            .unwrap_or("")
                    );
                    continue;
                }
                for line in String::from_utf8_lossy(&out.stdout).lines() {
                    let Some(json) = line.strip_prefix("REMOTE-RESULT ") else {
                        continue;
                    };
                    let v: Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
                    for key in ["p50_us", "p99_us", "msgs_per_s"] {
                        if let Some(x) = v.get(key).and_then(Value::as_f64) {
                            samples
                                .entry((key.to_string(), name.clone()))
                                .or_default()
                                .push(x);
                        }
                    }
                }
            }
        }
    }
    println!("| metric | runtime | median | min | max | runs |");
    println!("|---|---|---:|---:|---:|---:|");
    for ((metric, runtime), mut v) in samples {
        v.sort_by(f64::total_cmp);
        println!(
            "| {metric} | {runtime} | {:.1} | {:.1} | {:.1} | {} |",
            v[v.len() / 2],
            v[0],
            v[v.len() - 1],
            v.len()
        );
    }
    Ok(())
}
