//! `ratios.svg`: odeon's median over the best peer's, one bar per benchmark.
//!
//! The y axis is logarithmic so that "twice as fast" (0.5) and "twice as slow" (2)
//! are the same distance from parity. Bars start at 1.0: a bar going down is a
//! benchmark odeon wins, a bar going up one it loses. Two reference lines: parity
//! (1.0) and the project's target (0.5, twice as fast as the best peer). A benchmark
//! with no ratio (odeon or every peer n/a or FAILED) keeps its label, with "–".

use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{Report, fmt_ratio};

/// The target ratio drawn as a reference line.
pub const TARGET: f64 = 0.5;

const WIDTH_PER_BENCH: u32 = 34;
const HEIGHT: u32 = 560;
const FONT: &str = "sans-serif";
const WIN: RGBColor = RGBColor(46, 139, 87);
const GOAL: RGBColor = RGBColor(0, 100, 0);
const LOSS: RGBColor = RGBColor(200, 60, 50);

/// The chart as an SVG document.
pub fn render(report: &Report) -> Result<String, String> {
    let ids: Vec<&str> = report.benches.iter().map(|b| b.bench.id).collect();
    let ratios: Vec<Option<f64>> = report
        .comparisons()
        .into_iter()
        .map(|c| c.vs_best.filter(|r| r.is_finite() && *r > 0.0))
        .collect();
    let mut svg = String::new();
    draw(&mut svg, &ids, &ratios, &caption(report)).map_err(|e| format!("chart: {e}"))?;
    Ok(svg)
}

/// The chart's caption, opening with the quick label in a `--quick` session.
pub fn caption(report: &Report) -> String {
    let text = format!("odeon median / best peer median ({})", report.meta.date);
    match report.quick_label() {
        "" => text,
        label => format!("{label}: {text}"),
    }
}

/// The y range: every ratio, 1.0 and the target, with a margin, widened to at least
/// one decade so that the axis always has labels.
fn y_range(ratios: &[Option<f64>]) -> (f64, f64) {
    let values = ratios.iter().flatten().copied().chain([1.0, TARGET]);
    let (lo, hi) = values.fold((f64::MAX, f64::MIN), |(lo, hi), r| (lo.min(r), hi.max(r)));
    let (mut lo, mut hi) = (lo / 1.6, hi * 1.6);
    if hi / lo < 10.0 {
        let widen = (10.0 / (hi / lo)).sqrt();
        lo /= widen;
        hi *= widen;
    }
    (lo, hi)
}

/// Powers of two within `[lo, hi]`: on a log axis they are evenly spaced, and
/// "half" and "twice" are the ratios a reader thinks in.
fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    (-12..=12)
        .map(|e| 2f64.powi(e))
        .filter(|t| (lo..=hi).contains(t))
        .collect()
}

fn draw(
    svg: &mut String,
    ids: &[&str],
    ratios: &[Option<f64>],
    caption: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let n = ids.len().max(1);
    let width = 160 + WIDTH_PER_BENCH * n as u32;
    let root = SVGBackend::with_string(svg, (width.max(480), HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    let (lo, hi) = y_range(ratios);
    let mut chart = ChartBuilder::on(&root)
        .caption(caption, (FONT, 18))
        .margin(12)
        .x_label_area_size(110)
        .y_label_area_size(70)
        .build_cartesian_2d(
            (0..n).into_segmented(),
            (lo..hi).log_scale().with_key_points(ticks(lo, hi)),
        )?;
    let tick = |y: &f64| {
        let text = format!("{y:.3}");
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n)
        // Labels are drawn below, by hand: the mesh centres rotated labels on the
        // tick, across the axis.
        .x_label_formatter(&|_| String::new())
        .y_desc("odeon / best peer (log scale, lower is better)")
        .y_label_formatter(&tick)
        .draw()?;
    chart.draw_series(ratios.iter().enumerate().filter_map(|(i, r)| {
        let r = (*r)?;
        let color = if r <= TARGET {
            GOAL
        } else if r <= 1.0 {
            WIN
        } else {
            LOSS
        };
        let mut bar = Rectangle::new(
            [
                (SegmentValue::Exact(i), 1.0),
                (SegmentValue::Exact(i + 1), r),
            ],
            color.filled(),
        );
        bar.set_margin(0, 0, 5, 5);
        Some(bar)
    }))?;
    let value_style =
        TextStyle::from((FONT, 11).into_font()).pos(Pos::new(HPos::Center, VPos::Bottom));
    chart.draw_series(ratios.iter().enumerate().map(|(i, r)| {
        let (text, y) = match r {
            Some(r) => (fmt_ratio(*r), r.max(1.0) * 1.04),
            None => ("–".to_owned(), 1.04),
        };
        Text::new(text, (SegmentValue::CenterOf(i), y), value_style.clone())
    }))?;
    for (y, style, name) in [
        (1.0, BLACK.stroke_width(1), "parity (1.0)"),
        (TARGET, GOAL.stroke_width(2), "target (0.5)"),
    ] {
        chart
            .draw_series(LineSeries::new(
                [(SegmentValue::Exact(0), y), (SegmentValue::Last, y)],
                style,
            ))?
            .label(name)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], style));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .label_font((FONT, 12))
        .draw()?;
    // Benchmark ids, rotated to read downwards, starting just below the axis.
    let id_style = TextStyle::from((FONT, 13).into_font().transform(FontTransform::Rotate90))
        .pos(Pos::new(HPos::Left, VPos::Center));
    for (i, id) in ids.iter().enumerate() {
        let (x, y) = chart.backend_coord(&(SegmentValue::CenterOf(i), lo));
        root.draw(&Text::new(id.to_string(), (x, y + 8), id_style.clone()))?;
    }
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture;

    #[test]
    fn svg_has_every_benchmark_and_both_reference_lines() {
        let svg = render(&fixture::report()).unwrap();
        assert!(svg.starts_with("<svg"));
        for text in [
            "pingpong",
            "counting",
            "0.50×",
            "parity (1.0)",
            "target (0.5)",
        ] {
            assert!(svg.contains(text), "missing {text}");
        }
    }

    #[test]
    fn range_covers_ratios_parity_and_target() {
        let (lo, hi) = y_range(&[Some(0.1), None, Some(3.0)]);
        assert!(lo < 0.1 && hi > 3.0);
        let (lo, hi) = y_range(&[]);
        assert!(lo < TARGET && hi > 1.0 && hi / lo >= 10.0 - 1e-9);
        assert_eq!(ticks(0.3, 2.5), [0.5, 1.0, 2.0]);
    }

    #[test]
    fn a_report_without_ratios_still_draws() {
        let mut report = fixture::report();
        report.runtimes[0] = "not-odeon".into();
        assert!(render(&report).unwrap().contains("counting"));
    }
}
