//! Building the selected configurations, and what is left to run afterwards.
//!
//! 1. The Rust drivers are built with one `cargo build --release --keep-going -p ...`
//!    (one invocation shares the dependency graph; `--keep-going` builds whatever
//!    can be built). If it fails, each package is built alone to learn which one
//!    broke, and only that configuration is skipped, with the compiler's error.
//! 2. Every script driver runs its `build.sh` (idempotent, so cheap when built):
//!    exit 0 is ready, exit 10 means the toolchain is missing (skipped, with the
//!    one-line reason from stderr), anything else is a failed build (skipped).
//! 3. `--driver` commands are not built.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::process::{self, Exit};
use crate::runtimes::{Config, Recipe};

/// `build.sh`'s exit status for "this machine lacks the toolchain".
pub const EXIT_NO_TOOLCHAIN: i32 = 10;
/// A build script taking longer than this is killed (a C++ or Maven build from
/// scratch takes minutes, not hours).
const BUILD_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// Where things are.
#[derive(Clone, Debug)]
pub struct Workspace {
    /// The workspace root (where `cargo build` runs).
    pub root: PathBuf,
    /// Cargo's target directory (`CARGO_TARGET_DIR` or `<root>/target`).
    pub target_dir: PathBuf,
    /// `crates/odeon-bench/drivers`.
    pub drivers_dir: PathBuf,
}

impl Workspace {
    /// Asks `cargo metadata`, so that `CARGO_TARGET_DIR` and `.cargo/config` count;
    /// falls back to the layout this crate was compiled in.
    pub fn locate() -> Self {
        let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let fallback_root = manifest_dir.join("../..");
        let metadata = Command::new(cargo())
            .args(["metadata", "--format-version", "1", "--no-deps"])
            .current_dir(manifest_dir)
            .stderr(Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| serde_json::from_slice::<serde_json::Value>(&o.stdout).ok());
        let field = |key: &str| {
            metadata
                .as_ref()
                .and_then(|m| m.get(key)?.as_str().map(PathBuf::from))
        };
        let root = field("workspace_root").unwrap_or(fallback_root);
        let target_dir = field("target_directory")
            .or_else(|| std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from))
            .unwrap_or_else(|| root.join("target"));
        Self {
            root,
            target_dir,
            drivers_dir: manifest_dir.join("drivers"),
        }
    }
}

/// The cargo that runs us (`cargo run` sets `CARGO`), else the one on `PATH`.
fn cargo() -> PathBuf {
    std::env::var_os("CARGO").map_or_else(|| PathBuf::from("cargo"), PathBuf::from)
}

/// A configuration ready to start: `<program> <prefix..> <bench-id> <suffix..> ...`.
#[derive(Clone, Debug)]
pub struct Ready {
    /// The name in reports.
    pub name: String,
    /// The program to start.
    pub program: PathBuf,
    /// Arguments before the benchmark id (the script of a script driver).
    pub prefix: Vec<String>,
    /// Arguments after it (`--variant V`).
    pub suffix: Vec<String>,
    /// Extra environment (`JAVA_HOME`).
    pub env: Vec<(String, String)>,
    /// Warm-up iterations inside the process.
    pub warmup: u32,
}

/// A configuration that will not run, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Skipped {
    /// The name in reports.
    pub name: String,
    /// Why, for the user.
    pub reason: String,
}

/// Builds what `configs` need (when `build`) and splits them into ready and skipped.
pub fn prepare(
    configs: &[Config],
    ws: &Workspace,
    build: bool,
    quick: bool,
) -> (Vec<Ready>, Vec<Skipped>) {
    let mut packages: Vec<&'static str> = Vec::new();
    for c in configs {
        if let Recipe::Cargo { package, .. } = c.recipe
            && !packages.contains(&package)
        {
            packages.push(package);
        }
    }
    let broken = if build {
        build_rust(ws, &packages)
    } else {
        Vec::new()
    };
    let mut ready = Vec::new();
    let mut skipped = Vec::new();
    for c in configs {
        let mut outcome = |result: Result<Ready, String>| match result {
            Ok(r) => ready.push(r),
            Err(reason) => skipped.push(Skipped {
                name: c.name.clone(),
                reason,
            }),
        };
        let base = |program: PathBuf, prefix: Vec<String>, variant: Option<&str>| Ready {
            name: c.name.clone(),
            program,
            prefix,
            suffix: variant.map_or_else(Vec::new, |v| vec!["--variant".into(), v.into()]),
            env: Vec::new(),
            warmup: c.warmup(quick),
        };
        match &c.recipe {
            Recipe::Unavailable(why) => outcome(Err(why.clone())),
            Recipe::Command { argv } => {
                outcome(Ok(base(PathBuf::from(&argv[0]), argv[1..].to_vec(), None)))
            }
            Recipe::Cargo { package, variant } => {
                let binary = ws.target_dir.join("release").join(package);
                outcome(match broken.iter().find(|(p, _)| p == package) {
                    Some((_, error)) => Err(format!("cargo build failed: {error}")),
                    None if !binary.is_file() => Err(format!(
                        "{} not found (build it or drop --no-build)",
                        binary.display()
                    )),
                    None => Ok(base(binary, Vec::new(), *variant)),
                })
            }
            Recipe::Script { dir, variant, env } => {
                let folder = ws.drivers_dir.join(dir);
                outcome(
                    build_script(&c.name, &folder, ws, env, build).map(|run_sh| Ready {
                        // run.sh finds what build.sh built under the same target dir.
                        env: script_env(ws, env),
                        ..base(PathBuf::from("bash"), vec![run_sh], variant.as_deref())
                    }),
                )
            }
        }
    }
    (ready, skipped)
}

/// Builds `packages`; returns the ones that failed, each with its error.
fn build_rust(ws: &Workspace, packages: &[&'static str]) -> Vec<(&'static str, String)> {
    if packages.is_empty() {
        return Vec::new();
    }
    eprintln!("building {} (cargo build --release)", packages.join(", "));
    let mut all = cargo_build(ws, packages);
    all.arg("--keep-going").stdout(Stdio::null());
    match all.status() {
        Ok(s) if s.success() => return Vec::new(),
        Ok(_) => {}
        Err(e) => {
            let why = format!("cannot run cargo: {e}");
            return packages.iter().map(|p| (*p, why.clone())).collect();
        }
    }
    // Attribute the failure: the packages that built are cached, so this is quick.
    let mut broken = Vec::new();
    for package in packages {
        let output = cargo_build(ws, &[package]).output();
        match output {
            Ok(o) if o.status.success() => {}
            Ok(o) => broken.push((*package, first_error(&String::from_utf8_lossy(&o.stderr)))),
            Err(e) => broken.push((*package, format!("cannot run cargo: {e}"))),
        }
    }
    broken
}

fn cargo_build(ws: &Workspace, packages: &[&str]) -> Command {
    let mut cmd = Command::new(cargo());
    cmd.args(["build", "--release"]).current_dir(&ws.root);
    for p in packages {
        cmd.args(["-p", p]);
    }
    cmd
}

/// The first `error` line of cargo's stderr and the location line after it.
fn first_error(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().collect();
    match lines.iter().position(|l| l.starts_with("error")) {
        Some(i) => lines[i..]
            .iter()
            .take(2)
            .map(|l| l.trim())
            .collect::<Vec<_>>()
            .join(" "),
        None => last_line(stderr).unwrap_or("(no output)").to_owned(),
    }
}

fn last_line(text: &str) -> Option<&str> {
    text.lines().rev().map(str::trim).find(|l| !l.is_empty())
}

/// The environment of a script driver's `run.sh`: its configuration's, plus Cargo's
/// target directory, where its `build.sh` put the driver.
fn script_env(ws: &Workspace, env: &[(String, String)]) -> Vec<(String, String)> {
    let mut all = vec![(
        "CARGO_TARGET_DIR".to_owned(),
        ws.target_dir.display().to_string(),
    )];
    all.extend(env.iter().cloned());
    all
}

/// Runs `<folder>/build.sh` if `build`; returns the path of `run.sh` when ready.
fn build_script(
    name: &str,
    folder: &Path,
    ws: &Workspace,
    env: &[(String, String)],
    build: bool,
) -> Result<String, String> {
    let (build_sh, run_sh) = (folder.join("build.sh"), folder.join("run.sh"));
    for script in [&build_sh, &run_sh] {
        if !script.is_file() {
            return Err(format!("{} not found", script.display()));
        }
    }
    if build {
        let shown = build_sh.strip_prefix(&ws.root).unwrap_or(&build_sh);
        let java = env.iter().find(|(k, _)| k == "JAVA_HOME");
        let java = java.map_or_else(String::new, |(_, v)| format!(", JAVA_HOME={v}"));
        eprintln!("building {name} ({}{java})", shown.display());
        let mut cmd = Command::new("bash");
        cmd.arg(&build_sh)
            .current_dir(folder)
            .env("CARGO_TARGET_DIR", &ws.target_dir)
            .envs(env.iter().map(|(k, v)| (k, v)));
        let done = process::run(cmd, BUILD_TIMEOUT);
        let tail = last_line(&done.stderr).unwrap_or("(no output on stderr)");
        match done.exit {
            Exit::Code(0) => {}
            Exit::Code(EXIT_NO_TOOLCHAIN) => return Err(tail.to_owned()),
            Exit::Code(code) => return Err(format!("build.sh failed (exit {code}): {tail}")),
            other => return Err(format!("build.sh failed ({other:?}): {tail}")),
        }
    }
    Ok(run_sh.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn workspace(drivers: &Path) -> Workspace {
        Workspace {
            root: drivers.to_path_buf(),
            target_dir: drivers.join("target"),
            drivers_dir: drivers.to_path_buf(),
        }
    }

    fn script_config(name: &str, dir: &'static str) -> Config {
        Config {
            name: name.into(),
            recipe: Recipe::Script {
                dir,
                variant: Some("v1".into()),
                env: vec![("MARK".into(), "m".into())],
            },
            jvm: true,
        }
    }

    #[test]
    fn build_scripts_decide_ready_missing_toolchain_or_broken() {
        let dir = tempfile::tempdir().unwrap();
        let make = |name: &str, build: &str| {
            let folder = dir.path().join(name);
            fs::create_dir_all(&folder).unwrap();
            fs::write(folder.join("build.sh"), build).unwrap();
            fs::write(folder.join("run.sh"), "exit 0\n").unwrap();
        };
        make(
            "ok",
            "test \"$MARK\" = m && test -n \"$CARGO_TARGET_DIR\"\n",
        );
        make(
            "notool",
            "echo 'erl not found: apt-get install erlang' >&2; exit 10\n",
        );
        make("broken", "echo 'compile error' >&2; exit 1\n");
        let configs = [
            script_config("a", "ok"),
            script_config("b", "notool"),
            script_config("c", "broken"),
            script_config("d", "absent"),
        ];
        let (ready, skipped) = prepare(&configs, &workspace(dir.path()), true, false);
        assert_eq!(ready.len(), 1);
        assert_eq!((ready[0].name.as_str(), ready[0].warmup), ("a", 3));
        assert_eq!(ready[0].suffix, ["--variant", "v1"]);
        assert!(ready[0].prefix[0].ends_with("ok/run.sh"));
        let target = dir.path().join("target").display().to_string();
        assert_eq!(
            ready[0].env,
            [
                ("CARGO_TARGET_DIR".to_owned(), target),
                ("MARK".to_owned(), "m".to_owned())
            ]
        );
        assert_eq!(skipped[0].reason, "erl not found: apt-get install erlang");
        assert!(
            skipped[1].reason.contains("exit 1") && skipped[1].reason.contains("compile error")
        );
        assert!(skipped[2].reason.contains("not found"));
    }

    #[test]
    fn missing_binary_without_build_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let configs = [Config {
            name: "odeon".into(),
            recipe: Recipe::Cargo {
                package: "savina-odeon",
                variant: None,
            },
            jvm: false,
        }];
        let (ready, skipped) = prepare(&configs, &workspace(dir.path()), false, true);
        assert!(ready.is_empty());
        assert!(skipped[0].reason.contains("not found"));
    }

    #[test]
    fn cargo_errors_are_summarised() {
        let stderr =
            "   Compiling x\nerror[E0425]: cannot find value `y`\n  --> src/main.rs:3:5\nmore\n";
        assert_eq!(
            first_error(stderr),
            "error[E0425]: cannot find value `y` --> src/main.rs:3:5"
        );
    }
}
