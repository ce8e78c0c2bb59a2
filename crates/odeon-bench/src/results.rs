//! What a session measured: one [`Cell`] per (benchmark, runtime configuration).
//!
//! A cell is only ever in one of three states, and the reports never show a time for
//! anything but [`CellState::Measured`]: a configuration that failed once for a
//! benchmark is FAILED for that benchmark, even if earlier runs had produced times
//! (those are kept in the JSON, as raw data, but never summarised).

use savina::Bench;

/// The state of one (benchmark, runtime) pair after all its runs.
#[derive(Clone, Debug, PartialEq)]
pub enum CellState {
    /// Every run produced a validated time (or none has run yet).
    Measured,
    /// The driver does not implement the benchmark (exit 4 / `SAVINA-UNSUPPORTED`).
    Unsupported,
    /// A run failed: invalid result, bad output, non-zero exit, crash or timeout.
    Failed(String),
}

/// One (benchmark, runtime) pair.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    /// Validated run times, in nanoseconds, in the order they were measured.
    pub times_ns: Vec<u64>,
    /// See [`CellState`].
    pub state: CellState,
    /// What the driver checked on its last validated run (`"40000 round trips"`).
    pub detail: String,
}

impl Cell {
    /// A cell before any run.
    pub fn new() -> Self {
        Self {
            times_ns: Vec::new(),
            state: CellState::Measured,
            detail: String::new(),
        }
    }

    /// The times to summarise: only those of a configuration that never failed.
    pub fn valid_times(&self) -> Option<&[u64]> {
        match self.state {
            CellState::Measured if !self.times_ns.is_empty() => Some(&self.times_ns),
            _ => None,
        }
    }

    /// Whether more runs should be started (not after n/a or a failure: a failure is
    /// not retried, and a driver that timed out would only time out again).
    pub fn wants_more(&self) -> bool {
        self.state == CellState::Measured
    }
}

impl Default for Cell {
    fn default() -> Self {
        Self::new()
    }
}

/// Everything measured for one benchmark.
#[derive(Clone, Debug)]
pub struct BenchResult {
    /// The catalog entry.
    pub bench: &'static Bench,
    /// The `-flag value` parameters every driver got, in catalog order.
    pub params: Vec<(String, String)>,
    /// One cell per runtime configuration, in the order of the session's runtimes.
    pub cells: Vec<Cell>,
}
