//! The four outputs of a session, all from one [`Report`]:
//!
//! | file | module | holds |
//! |---|---|---|
//! | stdout | [`table`] | median [min–max] per runtime, odeon/best-peer ratio |
//! | `results.json` | [`json`] | everything: header, params, raw times, failures, ratios |
//! | `results.md` | [`markdown`] | the stdout table as Markdown, with a header line |
//! | `ratios.svg` | [`chart`] | odeon/best peer per benchmark, log scale |

pub mod chart;
pub mod json;
pub mod markdown;
pub mod meta;
pub mod table;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::prepare::Skipped;
use crate::results::{BenchResult, Cell, CellState};
use crate::stats::{self, Comparison, Summary};

pub use meta::{Machine, Meta};

/// A finished session.
#[derive(Clone, Debug)]
pub struct Report {
    /// Header.
    pub meta: Meta,
    /// The configurations that ran, in column order.
    pub runtimes: Vec<String>,
    /// The configurations that did not (build failed, toolchain missing).
    pub skipped: Vec<Skipped>,
    /// One per benchmark, cells in `runtimes` order.
    pub benches: Vec<BenchResult>,
}

impl Report {
    /// odeon against its peers, per benchmark.
    pub fn comparisons(&self) -> Vec<Comparison> {
        self.benches
            .iter()
            .map(|b| stats::compare(&self.runtimes, &b.cells))
            .collect()
    }

    /// The table shared by stdout and Markdown: a header row, then one row per
    /// benchmark (id, one cell per runtime, ratio to the best peer, best peer).
    pub fn grid(&self) -> (Vec<String>, Vec<Vec<String>>) {
        let mut header = vec!["benchmark".to_owned()];
        header.extend(self.runtimes.iter().cloned());
        header.extend([
            format!("{}/best peer", stats::SUBJECT),
            "best peer".to_owned(),
        ]);
        let rows = self
            .benches
            .iter()
            .zip(self.comparisons())
            .map(|(b, cmp)| {
                let mut row = vec![b.bench.id.to_owned()];
                row.extend(b.cells.iter().map(cell_text));
                row.push(cmp.vs_best.map_or_else(|| "–".to_owned(), fmt_ratio));
                row.push(
                    cmp.best_peer
                        .map_or_else(|| "–".to_owned(), |i| self.runtimes[i].clone()),
                );
                row
            })
            .collect();
        (header, rows)
    }

    /// `(benchmark, runtime, reason)` of every FAILED cell.
    pub fn failures(&self) -> Vec<(&str, &str, &str)> {
        self.benches
            .iter()
            .flat_map(|b| {
                b.cells
                    .iter()
                    .zip(&self.runtimes)
                    .filter_map(|(c, r)| match &c.state {
                        CellState::Failed(why) => Some((b.bench.id, r.as_str(), why.as_str())),
                        _ => None,
                    })
            })
            .collect()
    }

    /// What every output of a `--quick` session starts with (the table, the markdown
    /// title, the chart's caption): its sizes are too small for the numbers to compare
    /// runtimes, and a pasted table must say so. Empty otherwise.
    pub fn quick_label(&self) -> &'static str {
        if self.meta.quick { QUICK_LABEL } else { "" }
    }

    /// One line on what the numbers are.
    pub fn legend(&self) -> String {
        format!(
            "{} parameters, {} run{} per runtime (one process each, interleaved), median [min–max] in ms; ratio < 1: odeon faster. n/a: not implemented by that driver.",
            if self.meta.quick { "quick" } else { "default" },
            self.meta.runs,
            if self.meta.runs == 1 { "" } else { "s" }
        )
    }
}

/// The label that opens every output of a `--quick` session ([`Report::quick_label`]).
pub const QUICK_LABEL: &str = "QUICK SIZES, NOT A COMPARISON";

/// `median [min–max]` in ms, `n/a`, `FAILED`, or `–` when nothing ran.
pub fn cell_text(cell: &Cell) -> String {
    match (&cell.state, Summary::of_cell(cell)) {
        (CellState::Unsupported, _) => "n/a".to_owned(),
        (CellState::Failed(_), _) => "FAILED".to_owned(),
        (CellState::Measured, Some(s)) => format!(
            "{} [{}–{}]",
            fmt_ms(s.median_ns),
            fmt_ms(s.min_ns as f64),
            fmt_ms(s.max_ns as f64)
        ),
        (CellState::Measured, None) => "–".to_owned(),
    }
}

/// Nanoseconds as milliseconds with three significant digits (at least one decimal
/// below 1000 ms, none above).
pub fn fmt_ms(ns: f64) -> String {
    let ms = ns / 1e6;
    match ms {
        m if m >= 100.0 => format!("{m:.0}"),
        m if m >= 10.0 => format!("{m:.1}"),
        m if m >= 1.0 => format!("{m:.2}"),
        m => format!("{m:.3}"),
    }
}

/// `0.42×`.
pub fn fmt_ratio(r: f64) -> String {
    if r >= 10.0 {
        format!("{r:.1}×")
    } else {
        format!("{r:.2}×")
    }
}

/// Writes `results.json`, `results.md` and `ratios.svg` into `dir`; returns the paths.
pub fn write_files(report: &Report, dir: &Path) -> io::Result<Vec<PathBuf>> {
    fs::create_dir_all(dir)?;
    let json_path = dir.join("results.json");
    fs::write(&json_path, json::render(report)?)?;
    let md_path = dir.join("results.md");
    fs::write(&md_path, markdown::render(report))?;
    let svg_path = dir.join("ratios.svg");
    fs::write(&svg_path, chart::render(report).map_err(io::Error::other)?)?;
    Ok(vec![json_path, md_path, svg_path])
}

#[cfg(test)]
pub(crate) mod fixture {
    //! A small report for the renderers' tests.
    use super::*;

    pub fn cell(ms: &[u64]) -> Cell {
        Cell {
            times_ns: ms.iter().map(|m| m * 1_000_000).collect(),
            ..Cell::new()
        }
    }

    pub fn report() -> Report {
        let bench = |id| savina::catalog::find(id).unwrap();
        let mut failed = cell(&[1]);
        failed.state = CellState::Failed("invalid result (measured iteration 0): count | 3".into());
        let mut na = Cell::new();
        na.state = CellState::Unsupported;
        Report {
            meta: Meta {
                date: "2026-11-23 17:40 UTC".into(),
                machine: Machine {
                    cpu: "Test CPU".into(),
                    cores: 2,
                    memory_bytes: 24 << 30,
                },
                argv: vec!["odeon-bench".into(), "--quick".into()],
                quick: true,
                runs: 3,
                threads: 2,
                timeout_s: 60,
            },
            runtimes: vec!["odeon".into(), "kameo".into(), "ractor".into()],
            skipped: vec![Skipped {
                name: "erlang".into(),
                reason: "erl not found".into(),
            }],
            benches: vec![
                BenchResult {
                    bench: bench("pingpong"),
                    params: vec![("n".into(), "2000".into())],
                    cells: vec![
                        cell(&[10, 12, 11]),
                        cell(&[20, 25, 22]),
                        cell(&[40, 44, 41]),
                    ],
                },
                BenchResult {
                    bench: bench("counting"),
                    params: vec![("n".into(), "20000".into())],
                    cells: vec![cell(&[300, 310, 305]), failed, na],
                },
            ],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_show_times_only_when_valid() {
        assert_eq!(cell_text(&fixture::cell(&[10, 12, 11])), "11.0 [10.0–12.0]");
        let r = fixture::report();
        assert_eq!(cell_text(&r.benches[1].cells[1]), "FAILED");
        assert_eq!(cell_text(&r.benches[1].cells[2]), "n/a");
        assert_eq!(cell_text(&Cell::new()), "–");
    }

    #[test]
    fn numbers_keep_three_digits() {
        assert_eq!(fmt_ms(123_456_789.0), "123");
        assert_eq!(fmt_ms(1_234_567.0), "1.23");
        assert_eq!(fmt_ms(12_345.0), "0.012");
        assert_eq!(fmt_ratio(0.5), "0.50×");
        assert_eq!(fmt_ratio(12.34), "12.3×");
    }

    #[test]
    fn grid_has_ratio_and_best_peer() {
        let (header, rows) = fixture::report().grid();
        assert_eq!(
            header,
            [
                "benchmark",
                "odeon",
                "kameo",
                "ractor",
                "odeon/best peer",
                "best peer"
            ]
        );
        assert_eq!(rows[0][4..], ["0.50×", "kameo"]);
        assert_eq!(rows[1][4..], ["–", "–"]);
        assert_eq!(fixture::report().failures().len(), 1);
    }
}

#[cfg(test)]
mod quick_label_tests {
    use super::*;

    #[test]
    fn every_output_of_a_quick_session_starts_with_the_label() {
        let report = fixture::report();
        assert!(report.meta.quick);
        assert_eq!(report.quick_label(), "QUICK SIZES, NOT A COMPARISON");
        assert!(table::render(&report).starts_with("QUICK SIZES, NOT A COMPARISON\n"));
        assert!(markdown::render(&report).starts_with("QUICK SIZES, NOT A COMPARISON: Savina"));
        assert!(chart::caption(&report).starts_with("QUICK SIZES, NOT A COMPARISON: odeon"));
        let svg = chart::render(&report).unwrap();
        assert!(
            svg.contains("QUICK SIZES, NOT A COMPARISON"),
            "not in the chart"
        );
    }

    #[test]
    fn a_default_session_has_no_label() {
        let mut report = fixture::report();
        report.meta.quick = false;
        assert_eq!(report.quick_label(), "");
        assert!(table::render(&report).starts_with("benchmark"));
        assert!(markdown::render(&report).starts_with("Savina"));
        assert!(chart::caption(&report).starts_with("odeon median"));
        assert!(!chart::render(&report).unwrap().contains("QUICK"));
    }
}
