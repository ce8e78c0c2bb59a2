//! Medians, spreads and percentiles of samples.

/// Sorted copy of `v`.
fn sorted(v: &[f64]) -> Vec<f64> {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s
}

/// The `q` quantile (`0.0..=1.0`) of `v`, nearest rank; `NaN` if `v` is empty.
pub(crate) fn quantile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let s = sorted(v);
    let rank = ((q * s.len() as f64).ceil() as usize).clamp(1, s.len());
    s[rank - 1]
}

/// `median [min–max]` of `v`, with `unit`.
pub(crate) fn spread(v: &[f64], unit: &str) -> String {
    let s = sorted(v);
    match (s.first(), s.last()) {
        (Some(lo), Some(hi)) => {
            format!("{:.1} {unit} [{lo:.1}–{hi:.1}]", quantile(&s, 0.5))
        }
        _ => "no samples".into(),
    }
}

/// How much more `x` costs than `base`, in percent.
pub(crate) fn overhead(x: f64, base: f64) -> String {
    format!("{:+.1}%", (x / base - 1.0) * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_quantiles() {
        let v = [5.0, 1.0, 4.0, 2.0, 3.0];
        assert_eq!(quantile(&v, 0.5), 3.0);
        assert_eq!(quantile(&v, 0.0), 1.0);
        assert_eq!(quantile(&v, 0.99), 5.0);
        assert!(quantile(&[], 0.5).is_nan());
        assert_eq!(spread(&v, "ns"), "3.0 ns [1.0–5.0]");
        assert_eq!(overhead(130.0, 100.0), "+30.0%");
    }
}
