//! When, where and how a session ran: the header of every report.

use std::fs;
use std::time::{SystemTime, UNIX_EPOCH};

/// The machine, as far as the reports care.
#[derive(Clone, Debug, PartialEq)]
pub struct Machine {
    /// `model name` of `/proc/cpuinfo`.
    pub cpu: String,
    /// Cores available to this process.
    pub cores: usize,
    /// `MemTotal` of `/proc/meminfo`, in bytes.
    pub memory_bytes: u64,
}

impl Machine {
    /// Reads `/proc`; unknown values stay empty or 0 rather than failing a session.
    pub fn probe() -> Self {
        let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let meminfo = fs::read_to_string("/proc/meminfo").unwrap_or_default();
        Self {
            cpu: cpu_model(&cpuinfo).unwrap_or_else(|| "unknown CPU".to_owned()),
            cores: savina::protocol::default_threads(),
            memory_bytes: mem_total(&meminfo).unwrap_or(0),
        }
    }

    /// `AMD EPYC 7B13, 2 cores, 24 GiB`.
    pub fn describe(&self) -> String {
        let gib = self.memory_bytes as f64 / f64::from(1u32 << 30);
        format!("{}, {} cores, {gib:.0} GiB", self.cpu, self.cores)
    }
}

fn cpu_model(cpuinfo: &str) -> Option<String> {
    cpuinfo.lines().find_map(|l| {
        let (key, value) = l.split_once(':')?;
        (key.trim() == "model name").then(|| value.split_whitespace().collect::<Vec<_>>().join(" "))
    })
}

fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The session's header.
#[derive(Clone, Debug)]
pub struct Meta {
    /// UTC, `2026-11-23 17:40 UTC`.
    pub date: String,
    /// See [`Machine`].
    pub machine: Machine,
    /// The command line, as given (program name without its path).
    pub argv: Vec<String>,
    /// Quick parameters.
    pub quick: bool,
    /// Runs per (benchmark, runtime).
    pub runs: u32,
    /// `--threads` given to every driver.
    pub threads: usize,
    /// Per-process time limit, seconds.
    pub timeout_s: u64,
}

impl Meta {
    /// The command line as one shell-quoted string.
    pub fn command(&self) -> String {
        self.argv
            .iter()
            .map(|a| shell_quote(a))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The process's command line, with `argv[0]` reduced to its file name (the full
/// path only says where the target directory was).
pub fn own_argv() -> Vec<String> {
    let mut argv: Vec<String> = std::env::args().collect();
    if let Some(first) = argv.first_mut()
        && let Some(name) = std::path::Path::new(first.as_str()).file_name()
    {
        *first = name.to_string_lossy().into_owned();
    }
    argv
}

fn shell_quote(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=,:+@%".contains(c));
    if plain {
        arg.to_owned()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

/// Now, in UTC, as `YYYY-MM-DD HH:MM UTC`.
pub fn utc_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    utc(secs)
}

/// Formats seconds since the Unix epoch (UTC). The date is the proleptic Gregorian
/// calendar computed from the day count through 400-year eras of 146097 days.
pub fn utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let (hour, minute) = ((secs % 86_400) / 3600, (secs % 3600) / 60);
    let z = days + 719_468; // days since 0000-03-01
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153; // 0 = March
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02} {hour:02}:{minute:02} UTC")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_gregorian_utc() {
        assert_eq!(utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00 UTC");
        assert_eq!(utc(1_709_251_199), "2024-02-29 23:59 UTC");
        assert_eq!(utc(4_102_444_800), "2100-01-01 00:00 UTC");
    }

    #[test]
    fn proc_files_parse() {
        let cpu = "processor\t: 0\nmodel name\t: AMD  EPYC 7B13 64-Core Processor\n";
        assert_eq!(
            cpu_model(cpu).as_deref(),
            Some("AMD EPYC 7B13 64-Core Processor")
        );
        assert_eq!(mem_total("MemTotal:       2048 kB\n"), Some(2 << 20));
        let m = Machine {
            cpu: "X".into(),
            cores: 2,
            memory_bytes: 24 << 30,
        };
        assert_eq!(m.describe(), "X, 2 cores, 24 GiB");
    }

    #[test]
    fn commands_are_quoted_for_the_shell() {
        let meta = Meta {
            date: String::new(),
            machine: Machine {
                cpu: String::new(),
                cores: 1,
                memory_bytes: 0,
            },
            argv: vec![
                "odeon-bench".into(),
                "--only".into(),
                "a b".into(),
                "it's".into(),
            ],
            quick: false,
            runs: 1,
            threads: 1,
            timeout_s: 1,
        };
        assert_eq!(meta.command(), r"odeon-bench --only 'a b' 'it'\''s'");
    }
}
