//! Summaries of the runs: median, min and max per cell, and odeon's ratio to its peers.
//!
//! The median, not the mean, is the headline figure: a run disturbed by the rest of
//! the machine (the usual case on a shared box) moves the mean but not the median.
//! Min and max are shown beside it so that a wide spread is visible, and every raw
//! time is kept in the JSON for anyone who wants another statistic.
//!
//! Ratios are `odeon median / peer median`: below 1.0 odeon is faster. The "best
//! peer" is the non-odeon configuration with the lowest median among those that
//! validated every run; n/a and FAILED configurations never compete.

use crate::results::Cell;

/// The name of the runtime the others are compared with.
pub const SUBJECT: &str = "odeon";

/// Median, min and max of a non-empty list of times.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// The median; for an even count, the mean of the two middle times.
    pub median_ns: f64,
    /// The fastest run.
    pub min_ns: u64,
    /// The slowest run.
    pub max_ns: u64,
}

impl Summary {
    /// The summary of `times`, `None` when there are none.
    pub fn of(times: &[u64]) -> Option<Self> {
        Some(Self {
            median_ns: median(times)?,
            min_ns: *times.iter().min()?,
            max_ns: *times.iter().max()?,
        })
    }

    /// The summary of a cell's times, `None` for n/a, FAILED or not run.
    pub fn of_cell(cell: &Cell) -> Option<Self> {
        Self::of(cell.valid_times()?)
    }
}

/// The median of `times`: the middle one for an odd count, the mean of the two
/// middle ones for an even count; `None` when empty.
pub fn median(times: &[u64]) -> Option<f64> {
    let mut sorted = times.to_vec();
    sorted.sort_unstable();
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2] as f64),
        _ => Some((sorted[n / 2 - 1] as f64 + sorted[n / 2] as f64) / 2.0),
    }
}

/// `subject / reference`, `None` when the reference is not positive.
pub fn ratio(subject: f64, reference: f64) -> Option<f64> {
    (reference > 0.0).then(|| subject / reference)
}

/// Whether a runtime configuration is another build of odeon (`--driver odeon-old=…`):
/// shown beside odeon, but not a peer, so no ratio is taken against it.
pub fn is_baseline(name: &str) -> bool {
    name != SUBJECT && name.starts_with(SUBJECT)
}

/// odeon against its peers for one benchmark.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Comparison {
    /// Index (into the runtime list) of the fastest validated peer, if any.
    pub best_peer: Option<usize>,
    /// odeon's median / the best peer's median, when both exist.
    pub vs_best: Option<f64>,
    /// odeon's median / each validated peer's median: (peer index, ratio).
    pub vs_each: Vec<(usize, f64)>,
}

/// Compares the [`SUBJECT`] cell with every other one. `names[i]` names `cells[i]`.
pub fn compare(names: &[String], cells: &[Cell]) -> Comparison {
    let medians: Vec<Option<f64>> = cells
        .iter()
        .map(|c| Summary::of_cell(c).map(|s| s.median_ns))
        .collect();
    let subject = names.iter().position(|n| n == SUBJECT);
    let peers = || {
        medians
            .iter()
            .enumerate()
            .filter(|(i, _)| Some(*i) != subject && !is_baseline(&names[*i]))
            .filter_map(|(i, m)| Some((i, (*m)?)))
    };
    let best_peer = peers().min_by(|a, b| a.1.total_cmp(&b.1)).map(|(i, _)| i);
    let subject_median = subject.and_then(|i| medians[i]);
    let Some(own) = subject_median else {
        return Comparison {
            best_peer,
            ..Comparison::default()
        };
    };
    Comparison {
        best_peer,
        vs_best: best_peer.and_then(|i| ratio(own, medians[i]?)),
        vs_each: peers()
            .filter_map(|(i, m)| Some((i, ratio(own, m)?)))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::CellState;

    fn cell(times: &[u64]) -> Cell {
        Cell {
            times_ns: times.to_vec(),
            ..Cell::new()
        }
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn median_of_odd_count_is_the_middle_time() {
        assert_eq!(median(&[5, 1, 3]), Some(3.0));
        assert_eq!(median(&[7]), Some(7.0));
    }

    #[test]
    fn median_of_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(median(&[4, 1, 3, 10]), Some(3.5));
        assert_eq!(median(&[2, 3]), Some(2.5));
    }

    #[test]
    fn median_of_nothing_is_none() {
        assert_eq!(median(&[]), None);
        assert_eq!(Summary::of(&[]), None);
    }

    #[test]
    fn summary_has_min_and_max() {
        let s = Summary::of(&[30, 10, 20]).unwrap();
        assert_eq!((s.median_ns, s.min_ns, s.max_ns), (20.0, 10, 30));
    }

    #[test]
    fn ratio_divides_and_refuses_zero() {
        assert_eq!(ratio(1.0, 4.0), Some(0.25));
        assert_eq!(ratio(1.0, 0.0), None);
    }

    #[test]
    fn best_peer_skips_failed_and_unsupported_runtimes() {
        let mut failed = cell(&[1, 1, 1]);
        failed.state = CellState::Failed("exit status 3".into());
        let mut na = cell(&[]);
        na.state = CellState::Unsupported;
        let cells = vec![cell(&[50, 60, 40]), failed, na, cell(&[200]), cell(&[100])];
        let c = compare(
            &names(&["odeon", "fast-but-wrong", "na", "slow", "mid"]),
            &cells,
        );
        assert_eq!(c.best_peer, Some(4));
        assert_eq!(c.vs_best, Some(0.5));
        assert_eq!(c.vs_each, vec![(3, 0.25), (4, 0.5)]);
    }

    #[test]
    fn another_build_of_odeon_is_shown_but_is_not_a_peer() {
        let cells = vec![cell(&[50]), cell(&[10]), cell(&[100])];
        let c = compare(&names(&["odeon", "odeon-old", "actix"]), &cells);
        assert_eq!(
            c.best_peer,
            Some(2),
            "the faster old build is not the best peer"
        );
        assert_eq!(c.vs_best, Some(0.5));
        assert_eq!(c.vs_each, vec![(2, 0.5)]);
        assert!(is_baseline("odeon-old") && !is_baseline("odeon") && !is_baseline("actix"));
    }

    #[test]
    fn no_ratio_without_odeon_or_without_peers() {
        let c = compare(&names(&["actix", "kameo"]), &[cell(&[3]), cell(&[2])]);
        assert_eq!((c.best_peer, c.vs_best), (Some(1), None));
        assert!(c.vs_each.is_empty());
        let mut na = cell(&[]);
        na.state = CellState::Unsupported;
        let c = compare(&names(&["odeon", "kameo"]), &[cell(&[3]), na]);
        assert_eq!(c, Comparison::default());
    }

    #[test]
    fn odeon_failing_gives_no_ratio_but_still_a_best_peer() {
        let mut bad = cell(&[1]);
        bad.state = CellState::Failed("invalid".into());
        let c = compare(&names(&["odeon", "kameo"]), &[bad, cell(&[9])]);
        assert_eq!((c.best_peer, c.vs_best), (Some(1), None));
    }
}
