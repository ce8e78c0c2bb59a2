//! The plain-text table printed on stdout at the end of a session.

use std::fmt::Write;

use super::Report;

/// The quick label (`--quick` only), the table, then the skipped runtimes and the
/// failures with their reasons.
pub fn render(report: &Report) -> String {
    let (header, rows) = report.grid();
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain([header[i].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, w))| {
                let pad = w - c.chars().count();
                // Names left, numbers right, as a reader scans them.
                if i == 0 || i == cells.len() - 1 {
                    format!("{c}{}", " ".repeat(pad))
                } else {
                    format!("{}{c}", " ".repeat(pad))
                }
            })
            .collect();
        padded.join("  ").trim_end().to_owned()
    };
    let mut out = String::new();
    if !report.quick_label().is_empty() {
        let _ = writeln!(out, "{}", report.quick_label());
    }
    let _ = writeln!(out, "{}", line(&header));
    let _ = writeln!(
        out,
        "{}",
        "-".repeat(widths.iter().sum::<usize>() + 2 * (widths.len() - 1))
    );
    for row in &rows {
        let _ = writeln!(out, "{}", line(row));
    }
    let _ = writeln!(out, "\n{}", report.legend());
    for s in &report.skipped {
        let _ = writeln!(out, "skipped {}: {}", s.name, s.reason);
    }
    for (bench, runtime, why) in report.failures() {
        let _ = writeln!(out, "FAILED {bench} on {runtime}: {why}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture;

    #[test]
    fn columns_line_up_and_reasons_follow() {
        let text = render(&fixture::report());
        // Line 0 is the quick label (the fixture is a quick session).
        let lines: Vec<&str> = text.lines().skip(1).collect();
        assert!(lines[0].starts_with("benchmark"));
        assert!(
            lines[2].starts_with("pingpong   11.0 [10.0–12.0]"),
            "{text}"
        );
        // Every cell of a column ends at the same place.
        let end = |l: &str, cell: &str| {
            l.find(cell)
                .map(|i| l[..i].chars().count() + cell.chars().count())
        };
        assert_eq!(end(lines[2], "22.0 [20.0–25.0]"), end(lines[3], "FAILED"));
        assert!(text.contains("skipped erlang: erl not found"));
        assert!(text.contains("FAILED counting on kameo: invalid result"));
    }
}
