//! `results.json`: everything a session knows, for scripts and later comparisons.
//!
//! ```json
//! {
//!   "date": "2026-11-23 17:40 UTC",
//!   "machine": { "cpu": "...", "cores": 2, "memory_bytes": 25769803776 },
//!   "command": "odeon-bench --quick", "argv": ["odeon-bench", "--quick"],
//!   "settings": { "quick": true, "runs": 5, "threads": 2, "timeout_s": 60 },
//!   "runtimes": ["odeon", "kameo"],
//!   "skipped": [{ "name": "erlang", "reason": "..." }],
//!   "benchmarks": [{
//!     "id": "pingpong", "title": "Ping Pong", "params": { "n": "2000" },
//!     "results": { "odeon": { "status": "ok", "times_ns": [..], "median_ms": 1.2,
//!                              "min_ms": 1.1, "max_ms": 1.4, "detail": "..." },
//!                  "kameo": { "status": "failed", "times_ns": [], "reason": "..." } },
//!     "best_peer": "kameo", "odeon_vs_best_peer": 0.5, "odeon_vs": { "kameo": 0.5 }
//!   }]
//! }
//! ```
//!
//! `status` is `ok`, `n/a`, `failed` or `not run`. The times of a failed cell are the
//! runs that validated before the failure: raw data, never summarised.

use std::collections::BTreeMap;

use serde::Serialize;

use super::Report;
use crate::prepare::Skipped;
use crate::results::{Cell, CellState};
use crate::stats::Summary;

#[derive(Serialize)]
struct Doc<'a> {
    date: &'a str,
    machine: Machine<'a>,
    command: String,
    argv: &'a [String],
    settings: Settings,
    runtimes: &'a [String],
    skipped: Vec<SkippedDoc<'a>>,
    benchmarks: Vec<BenchDoc<'a>>,
}

#[derive(Serialize)]
struct Machine<'a> {
    cpu: &'a str,
    cores: usize,
    memory_bytes: u64,
}

#[derive(Serialize)]
struct Settings {
    quick: bool,
    runs: u32,
    threads: usize,
    timeout_s: u64,
}

#[derive(Serialize)]
struct SkippedDoc<'a> {
    name: &'a str,
    reason: &'a str,
}

#[derive(Serialize)]
struct BenchDoc<'a> {
    id: &'a str,
    title: &'a str,
    params: BTreeMap<&'a str, &'a str>,
    results: BTreeMap<&'a str, CellDoc<'a>>,
    best_peer: Option<&'a str>,
    odeon_vs_best_peer: Option<f64>,
    odeon_vs: BTreeMap<&'a str, f64>,
}

#[derive(Serialize)]
struct CellDoc<'a> {
    status: &'static str,
    times_ns: &'a [u64],
    #[serde(skip_serializing_if = "Option::is_none")]
    median_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    min_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_ms: Option<f64>,
    #[serde(skip_serializing_if = "str::is_empty")]
    detail: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
}

fn cell_doc(cell: &Cell) -> CellDoc<'_> {
    let summary = Summary::of_cell(cell);
    let (status, reason) = match &cell.state {
        CellState::Unsupported => ("n/a", None),
        CellState::Failed(why) => ("failed", Some(why.as_str())),
        CellState::Measured if summary.is_some() => ("ok", None),
        CellState::Measured => ("not run", None),
    };
    CellDoc {
        status,
        times_ns: &cell.times_ns,
        median_ms: summary.map(|s| s.median_ns / 1e6),
        min_ms: summary.map(|s| s.min_ns as f64 / 1e6),
        max_ms: summary.map(|s| s.max_ns as f64 / 1e6),
        detail: if status == "ok" { &cell.detail } else { "" },
        reason,
    }
}

/// The pretty-printed document.
pub fn render(report: &Report) -> serde_json::Result<String> {
    let meta = &report.meta;
    let names = &report.runtimes;
    let benchmarks = report
        .benches
        .iter()
        .zip(report.comparisons())
        .map(|(b, cmp)| BenchDoc {
            id: b.bench.id,
            title: b.bench.title,
            params: b
                .params
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect(),
            results: names
                .iter()
                .map(String::as_str)
                .zip(b.cells.iter().map(cell_doc))
                .collect(),
            best_peer: cmp.best_peer.map(|i| names[i].as_str()),
            odeon_vs_best_peer: cmp.vs_best,
            odeon_vs: cmp
                .vs_each
                .iter()
                .map(|(i, r)| (names[*i].as_str(), *r))
                .collect(),
        })
        .collect();
    let doc = Doc {
        date: &meta.date,
        machine: Machine {
            cpu: &meta.machine.cpu,
            cores: meta.machine.cores,
            memory_bytes: meta.machine.memory_bytes,
        },
        command: meta.command(),
        argv: &meta.argv,
        settings: Settings {
            quick: meta.quick,
            runs: meta.runs,
            threads: meta.threads,
            timeout_s: meta.timeout_s,
        },
        runtimes: names,
        skipped: report
            .skipped
            .iter()
            .map(|Skipped { name, reason }| SkippedDoc { name, reason })
            .collect(),
        benchmarks,
    };
    serde_json::to_string_pretty(&doc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture;
    use serde_json::{Value, json};

    #[test]
    fn raw_times_failures_and_ratios_are_kept() {
        let doc: Value = serde_json::from_str(&render(&fixture::report()).unwrap()).unwrap();
        assert_eq!(doc["machine"]["cores"], 2);
        assert_eq!(doc["command"], "odeon-bench --quick");
        assert_eq!(doc["skipped"][0]["name"], "erlang");
        let ping = &doc["benchmarks"][0];
        assert_eq!(ping["params"], json!({ "n": "2000" }));
        assert_eq!(
            ping["results"]["odeon"]["times_ns"],
            json!([10_000_000, 12_000_000, 11_000_000])
        );
        assert_eq!(ping["results"]["odeon"]["median_ms"], 11.0);
        assert_eq!(ping["best_peer"], "kameo");
        assert_eq!(ping["odeon_vs_best_peer"], 0.5);
        assert_eq!(ping["odeon_vs"]["ractor"], 11.0 / 41.0);
        let count = &doc["benchmarks"][1]["results"];
        assert_eq!(count["kameo"]["status"], "failed");
        assert!(
            count["kameo"]["reason"]
                .as_str()
                .unwrap()
                .contains("invalid")
        );
        assert!(count["kameo"].get("median_ms").is_none());
        assert_eq!(count["ractor"]["status"], "n/a");
        assert_eq!(doc["benchmarks"][1]["odeon_vs_best_peer"], Value::Null);
    }
}
