//! `results.md`: the table ready to paste into a README.

use std::fmt::Write;

use super::Report;

/// `QUICK SIZES, NOT A COMPARISON: ` before the title of a `--quick` session.
fn quick_title(report: &Report) -> String {
    match report.quick_label() {
        "" => String::new(),
        label => format!("{label}: "),
    }
}

/// A header line (date, machine, command), the table, a legend, then skipped
/// runtimes and failures as lists.
pub fn render(report: &Report) -> String {
    let meta = &report.meta;
    let (header, rows) = report.grid();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}Savina, odeon and its peers: {} · {} · `{}`\n",
        quick_title(report),
        meta.date,
        meta.machine.describe(),
        meta.command()
    );
    let _ = writeln!(out, "{}", row(&header));
    let align: Vec<&str> = (0..header.len())
        .map(|i| {
            if i == 0 || i == header.len() - 1 {
                ":--"
            } else {
                "--:"
            }
        })
        .collect();
    let _ = writeln!(out, "| {} |", align.join(" | "));
    for r in &rows {
        let _ = writeln!(out, "{}", row(r));
    }
    let _ = writeln!(out, "\n{}", report.legend());
    if !report.skipped.is_empty() {
        let _ = writeln!(out, "\nNot run:\n");
        for s in &report.skipped {
            let _ = writeln!(out, "- {}: {}", s.name, escape(&s.reason));
        }
    }
    let failures = report.failures();
    if !failures.is_empty() {
        let _ = writeln!(out, "\nFailures (never shown as times):\n");
        for (bench, runtime, why) in failures {
            let _ = writeln!(out, "- {bench} on {runtime}: {}", escape(why));
        }
    }
    out
}

fn row(cells: &[String]) -> String {
    let escaped: Vec<String> = cells.iter().map(|c| escape(c)).collect();
    format!("| {} |", escaped.join(" | "))
}

/// Keeps driver-supplied text from breaking the table or turning into markup.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '|' | '*' | '_' | '`' | '<' | '>' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture;

    #[test]
    fn header_line_table_and_lists() {
        let md = render(&fixture::report());
        let lines: Vec<&str> = md.lines().collect();
        assert_eq!(
            lines[0],
            "QUICK SIZES, NOT A COMPARISON: Savina, odeon and its peers: 2026-11-23 17:40 UTC · Test CPU, 2 cores, 24 GiB · `odeon-bench --quick`"
        );
        assert_eq!(
            lines[2],
            "| benchmark | odeon | kameo | ractor | odeon/best peer | best peer |"
        );
        assert_eq!(lines[3], "| :-- | --: | --: | --: | --: | :-- |");
        assert_eq!(
            lines[4],
            "| pingpong | 11.0 [10.0–12.0] | 22.0 [20.0–25.0] | 41.0 [40.0–44.0] | 0.50× | kameo |"
        );
        assert_eq!(
            lines[5],
            "| counting | 305 [300–310] | FAILED | n/a | – | – |"
        );
        assert!(md.contains("- erlang: erl not found"));
        assert!(
            md.contains("- counting on kameo: invalid result (measured iteration 0): count \\| 3")
        );
    }

    #[test]
    fn driver_text_is_escaped() {
        assert_eq!(escape("a|b_c\nd"), "a\\|b\\_c d");
    }
}
