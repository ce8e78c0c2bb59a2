//! The runtime configurations: a name shown in reports, and how to build and run it.
//!
//! | name | driver |
//! |---|---|
//! | `odeon` | `savina-odeon` (Rust, this workspace) |
//! | `actix/single`, `actix/per-core` | `savina-actix --variant single` / `per-core` |
//! | `kameo`, `ractor` | `savina-kameo`, `savina-ractor` |
//! | `erlang`, `caf` | `drivers/<name>/build.sh` and `run.sh` |
//! | `pekko/jdkNN` | `drivers/pekko/{build,run}.sh`, once per JDK under `/usr/lib/jvm` |
//!
//! The JVM is the only runtime given warm-up iterations inside its process: its JIT
//! needs them, and Savina itself measures JVM libraries after warm-up. The native
//! runtimes gain nothing from them.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::cli::CustomDriver;

/// Where JDKs are looked for.
pub const JVM_ROOT: &str = "/usr/lib/jvm";

/// How a configuration is built and started.
#[derive(Clone, Debug, PartialEq)]
pub enum Recipe {
    /// A Rust driver of this workspace: `cargo build --release -p <package>`, then
    /// `target/release/<package> [--variant V]`.
    Cargo {
        /// The package, also the binary's name.
        package: &'static str,
        /// `--variant` to pass, if any.
        variant: Option<&'static str>,
    },
    /// A non-Rust driver: `drivers/<dir>/build.sh`, then `drivers/<dir>/run.sh`.
    Script {
        /// The folder under `drivers/`.
        dir: &'static str,
        /// `--variant` to pass, if any.
        variant: Option<String>,
        /// Environment for both scripts (`JAVA_HOME`).
        env: Vec<(String, String)>,
    },
    /// A `--driver` command, not built.
    Command {
        /// Program and leading arguments.
        argv: Vec<String>,
    },
    /// A configuration that cannot run on this machine, and why.
    Unavailable(String),
}

/// One runtime configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// The name in reports (`actix/single`).
    pub name: String,
    /// How to build and start it.
    pub recipe: Recipe,
    /// Runs on the JVM, so it gets more warm-up iterations (JIT).
    pub jvm: bool,
}

impl Config {
    /// Warm-up iterations inside each process: 3 on the JVM (its JIT), 1 elsewhere;
    /// with `--quick`, 1 on the JVM and none elsewhere.
    ///
    /// Every runtime gets at least one, because the first iteration of a fresh process
    /// also pays the process's first touches (fresh heap pages, the allocator's arenas,
    /// thread stacks): for a native runtime that is 1 to 3 ms, as much as a whole
    /// PingPong run, and it says nothing about the runtime's steady state. Savina itself
    /// runs every iteration in one process and its outlier filter drops the first ones.
    pub fn warmup(&self, quick: bool) -> u32 {
        match (self.jvm, quick) {
            (false, true) => 0,
            (false, false) => 1,
            (true, true) => 1,
            (true, false) => 3,
        }
    }

    fn cargo(name: &str, package: &'static str, variant: Option<&'static str>) -> Self {
        Self {
            name: name.to_owned(),
            recipe: Recipe::Cargo { package, variant },
            jvm: false,
        }
    }

    fn script(name: &str, dir: &'static str) -> Self {
        Self {
            name: name.to_owned(),
            recipe: Recipe::Script {
                dir,
                variant: None,
                env: Vec::new(),
            },
            jvm: false,
        }
    }
}

/// A JDK found on this machine.
#[derive(Clone, Debug, PartialEq)]
pub struct Jdk {
    /// The feature release (17, 25).
    pub major: u32,
    /// Its `JAVA_HOME`, symlinks resolved.
    pub home: PathBuf,
}

/// The JDKs under `root`: folders with a `bin/java` and a `release` file, symlinks
/// resolved, one per major version (the first in name order), sorted by version so
/// that the oldest one builds first (its bytecode runs on the newer ones).
pub fn discover_jdks(root: &Path) -> Vec<Jdk> {
    let Ok(entries) = fs::read_dir(root) else {
        return Vec::new();
    };
    let mut homes: Vec<PathBuf> = entries
        .filter_map(|e| fs::canonicalize(e.ok()?.path()).ok())
        .filter(|p| p.join("bin/java").is_file())
        .collect();
    homes.sort();
    homes.dedup();
    let mut by_major = BTreeMap::new();
    for home in homes {
        if let Some(major) = jdk_major(&home) {
            by_major.entry(major).or_insert(home);
        }
    }
    by_major
        .into_iter()
        .map(|(major, home)| Jdk { major, home })
        .collect()
}

/// The major version in `<home>/release` (`JAVA_VERSION="17.0.15"` is 17; the old
/// `"1.8.0_412"` scheme is 8).
fn jdk_major(home: &Path) -> Option<u32> {
    let release = fs::read_to_string(home.join("release")).ok()?;
    let version = release
        .lines()
        .find_map(|l| l.strip_prefix("JAVA_VERSION="))?
        .trim_matches('"');
    let mut parts = version.split(['.', '_', '-', '+']);
    let first: u32 = parts.next()?.parse().ok()?;
    if first == 1 {
        parts.next()?.parse().ok()
    } else {
        Some(first)
    }
}

/// Every built-in configuration, in report order, given the JDKs found.
pub fn builtin(jdks: &[Jdk]) -> Vec<Config> {
    let mut all = vec![
        Config::cargo("odeon", "savina-odeon", None),
        Config::cargo("actix/single", "savina-actix", Some("single")),
        Config::cargo("actix/per-core", "savina-actix", Some("per-core")),
        Config::cargo("kameo", "savina-kameo", None),
        Config::cargo("ractor", "savina-ractor", None),
        Config::script("erlang", "erlang"),
        Config::script("caf", "caf"),
    ];
    if jdks.is_empty() {
        all.push(Config {
            name: "pekko".to_owned(),
            recipe: Recipe::Unavailable(format!("no JDK (bin/java and release) under {JVM_ROOT}")),
            jvm: true,
        });
    }
    for jdk in jdks {
        let variant = format!("jdk{}", jdk.major);
        all.push(Config {
            name: format!("pekko/{variant}"),
            recipe: Recipe::Script {
                dir: "pekko",
                variant: Some(variant),
                env: vec![("JAVA_HOME".to_owned(), jdk.home.display().to_string())],
            },
            jvm: true,
        });
    }
    all
}

/// The built-ins with `--driver` configurations applied (a same-named built-in is
/// replaced in place, a new name is appended), then filtered by name prefix.
/// A prefix that selects nothing is an error: it is almost always a typo.
pub fn select(
    mut all: Vec<Config>,
    custom: &[CustomDriver],
    prefixes: &[String],
) -> Result<Vec<Config>, String> {
    for driver in custom {
        let config = Config {
            name: driver.name.clone(),
            recipe: Recipe::Command {
                argv: driver.argv.clone(),
            },
            jvm: false,
        };
        match all.iter_mut().find(|c| c.name == driver.name) {
            Some(slot) => *slot = config,
            None => all.push(config),
        }
    }
    if let Some(p) = prefixes
        .iter()
        .find(|p| !all.iter().any(|c| c.name.starts_with(p.as_str())))
    {
        let names: Vec<_> = all.iter().map(|c| c.name.as_str()).collect();
        return Err(format!(
            "--runtimes: {p:?} matches no configuration (known: {})",
            names.join(", ")
        ));
    }
    all.retain(|c| prefixes.is_empty() || prefixes.iter().any(|p| c.name.starts_with(p.as_str())));
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jdks() -> Vec<Jdk> {
        vec![
            Jdk {
                major: 17,
                home: "/j17".into(),
            },
            Jdk {
                major: 25,
                home: "/j25".into(),
            },
        ]
    }

    fn names(configs: &[Config]) -> Vec<&str> {
        configs.iter().map(|c| c.name.as_str()).collect()
    }

    #[test]
    fn pekko_runs_once_per_jdk_with_warmup() {
        let all = builtin(&jdks());
        let pekko: Vec<_> = all.iter().filter(|c| c.name.starts_with("pekko")).collect();
        assert_eq!(names(&all[all.len() - 2..]), ["pekko/jdk17", "pekko/jdk25"]);
        assert_eq!((pekko[0].warmup(false), pekko[0].warmup(true)), (3, 1));
        assert_eq!((all[0].warmup(false), all[0].warmup(true)), (1, 0));
        let Recipe::Script { env, variant, .. } = &pekko[1].recipe else {
            panic!("pekko is a script driver");
        };
        assert_eq!(variant.as_deref(), Some("jdk25"));
        assert_eq!(env, &[("JAVA_HOME".to_owned(), "/j25".to_owned())]);
    }

    #[test]
    fn no_jdk_leaves_pekko_unavailable() {
        let all = builtin(&[]);
        let last = all.last().unwrap();
        assert_eq!(last.name, "pekko");
        assert!(matches!(last.recipe, Recipe::Unavailable(_)));
    }

    #[test]
    fn prefixes_select_and_typos_are_errors() {
        let picked = select(builtin(&jdks()), &[], &["actix".into(), "odeon".into()]).unwrap();
        assert_eq!(names(&picked), ["odeon", "actix/single", "actix/per-core"]);
        assert!(select(builtin(&jdks()), &[], &["akka".into()]).is_err());
        assert_eq!(select(builtin(&jdks()), &[], &[]).unwrap().len(), 9);
    }

    #[test]
    fn custom_drivers_replace_or_append() {
        let custom = [
            CustomDriver {
                name: "odeon".into(),
                argv: vec!["/x".into()],
            },
            CustomDriver {
                name: "odeon-old".into(),
                argv: vec!["/y".into()],
            },
        ];
        let picked = select(builtin(&[]), &custom, &["odeon".into()]).unwrap();
        assert_eq!(names(&picked), ["odeon", "odeon-old"]);
        assert_eq!(
            picked[0].recipe,
            Recipe::Command {
                argv: vec!["/x".into()]
            }
        );
    }

    #[test]
    fn jdks_are_found_deduped_and_versioned() {
        let dir = tempfile::tempdir().unwrap();
        let make = |name: &str, version: &str| {
            let home = dir.path().join(name);
            fs::create_dir_all(home.join("bin")).unwrap();
            fs::write(home.join("bin/java"), "").unwrap();
            fs::write(
                home.join("release"),
                format!("JAVA_VERSION=\"{version}\"\n"),
            )
            .unwrap();
        };
        make("a-17", "17.0.15");
        make("b-25", "25.0.3");
        make("c-8", "1.8.0_412");
        std::os::unix::fs::symlink(dir.path().join("a-17"), dir.path().join("z-link")).unwrap();
        fs::create_dir_all(dir.path().join("src-only")).unwrap();
        let found = discover_jdks(dir.path());
        let majors: Vec<_> = found.iter().map(|j| j.major).collect();
        assert_eq!(majors, [8, 17, 25]);
        assert!(found[1].home.ends_with("a-17"));
    }
}
