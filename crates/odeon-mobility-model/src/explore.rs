//! The explorer: an exhaustive depth-first search over every interleaving of a small
//! configuration, and seeded random walks for larger ones.
//!
//! States are remembered by a 64-bit fingerprint (`DefaultHasher`, whose keys are
//! fixed, so runs are reproducible), as TLC and stateright do: two distinct states
//! sharing a fingerprint would hide one of them, with a probability around
//! `states² / 2⁶⁵`, about 10⁻⁸ for the largest run in the tests. A violation comes back
//! with the trace of actions that reaches it.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};

use crate::actions::{Action, apply, enabled};
use crate::model::{Config, State};
use crate::props::{Property, check_always, check_terminal};

/// A property broken, and how to get there from the initial state.
#[derive(Clone, Debug)]
pub struct Violation {
    /// Which property.
    pub property: Property,
    /// The actions from the initial state to the breaking state.
    pub trace: Vec<Action>,
    /// The breaking state.
    pub state: State,
}

/// What an exploration did.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Distinct states visited (exhaustive) or steps taken (walks).
    pub states: u64,
    /// Terminal states checked (exhaustive: distinct; walks: one per walk).
    pub terminals: u64,
    /// The longest trace seen.
    pub max_depth: usize,
    /// The events seen at least once (see `props::Event`).
    pub events: u16,
    /// Whether the exhaustive search stopped at its state limit before finishing.
    pub truncated: bool,
    /// The first violation found, if any.
    pub violation: Option<Violation>,
}

/// The longest run the explorer accepts. Every run of a configuration ends (moves,
/// crashes and messages are bounded), well below this; a longer one is a livelock and
/// breaks [`Property::Progress`].
pub const DEPTH_LIMIT: usize = 500;

fn fingerprint(st: &State) -> u64 {
    let mut h = DefaultHasher::new();
    st.hash(&mut h);
    h.finish()
}

/// Explores every interleaving of `cfg` depth-first, up to `max_states` distinct
/// states, and stops at the first violation.
pub fn exhaustive(cfg: &Config, max_states: u64) -> Report {
    search(cfg, max_states, |_| true)
}

/// Like [`exhaustive`], but only `property` counts: the search goes on through states
/// that break others, and stops at the first that breaks this one. For mutation
/// tests: "this defect breaks FIFO", whatever else it breaks first.
pub fn find(cfg: &Config, max_states: u64, property: Property) -> Report {
    search(cfg, max_states, |p| p == property)
}

fn search(cfg: &Config, max_states: u64, wanted: impl Fn(Property) -> bool) -> Report {
    let mut report = Report::default();
    let mut seen = HashSet::new();
    let init = State::initial(cfg);
    seen.insert(fingerprint(&init));
    report.states = 1;
    // Each frame: a state, its enabled actions, the index of the next one to try.
    let mut stack: Vec<(State, Vec<Action>, usize)> = Vec::new();
    let mut path: Vec<Action> = Vec::new();
    let first = enabled(cfg, &init);
    if first.is_empty() {
        report.terminals = 1;
    }
    stack.push((init, first, 0));
    while let Some((st, actions, next)) = stack.last_mut() {
        if *next == actions.len() {
            stack.pop();
            path.pop();
            continue;
        }
        let action = actions[*next];
        *next += 1;
        let mut succ = st.clone();
        report.events |= apply(cfg, &mut succ, action);
        if !seen.insert(fingerprint(&succ)) {
            continue;
        }
        report.states += 1;
        path.push(action);
        report.max_depth = report.max_depth.max(path.len());
        let too_long = (path.len() > DEPTH_LIMIT).then_some(Property::Progress);
        if let Some(property) = check_always(&succ).or(too_long).filter(|p| wanted(*p)) {
            report.violation = Some(Violation {
                property,
                trace: path,
                state: succ,
            });
            return report;
        }
        if too_long.is_some() {
            path.pop();
            continue;
        }
        let acts = enabled(cfg, &succ);
        if acts.is_empty() {
            report.terminals += 1;
            if let Some(property) = check_terminal(cfg, &succ).filter(|p| wanted(*p)) {
                report.violation = Some(Violation {
                    property,
                    trace: path,
                    state: succ,
                });
                return report;
            }
            path.pop();
            continue;
        }
        if report.states >= max_states {
            report.truncated = true;
            return report;
        }
        stack.push((succ, acts, 0));
    }
    report
}

/// A small, fast, seedable generator (SplitMix64): the walks need no crate.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// Runs `walks` random schedules of `cfg`, each to a terminal state, checking every
/// state on the way; stops at the first violation. Walk `i` is seeded with
/// `base + i`, where `base` is drawn from `seed`, so that two seeds give unrelated
/// walks (not the same ones shifted by a few).
pub fn random_walks(cfg: &Config, seed: u64, walks: u64) -> Report {
    let mut report = Report::default();
    let base = SplitMix64::new(seed).next_u64();
    for w in 0..walks {
        let mut rng = SplitMix64::new(base.wrapping_add(w));
        let mut st = State::initial(cfg);
        let mut path = Vec::new();
        loop {
            let acts = enabled(cfg, &st);
            if acts.is_empty() {
                report.terminals += 1;
                if let Some(property) = check_terminal(cfg, &st) {
                    report.violation = Some(Violation {
                        property,
                        trace: path,
                        state: st,
                    });
                    return report;
                }
                break;
            }
            let action = acts[rng.below(acts.len())];
            report.events |= apply(cfg, &mut st, action);
            report.states += 1;
            path.push(action);
            report.max_depth = report.max_depth.max(path.len());
            let too_long = (path.len() > DEPTH_LIMIT).then_some(Property::Progress);
            if let Some(property) = check_always(&st).or(too_long) {
                report.violation = Some(Violation {
                    property,
                    trace: path,
                    state: st,
                });
                return report;
            }
        }
    }
    report
}

/// A compact, readable dump of a state: one line per node, then the non-empty links.
pub fn describe(st: &State) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    for (i, n) in st.nodes.iter().enumerate() {
        let _ = writeln!(
            out,
            "node {i}{}: {:?} epoch {} holders {:?} export {} lost {:#b} pending {:?}",
            if n.alive { "" } else { " (crashed)" },
            n.place,
            n.epoch,
            &n.holders[..st.nodes.len()],
            n.export,
            n.lost,
            n.pending,
        );
    }
    let m = crate::model::MAX_NODES;
    for (i, link) in st.links.iter().enumerate() {
        if !link.is_empty() {
            let _ = writeln!(out, "link {}->{}: {:?}", i / m, i % m, link);
        }
    }
    let _ = writeln!(out, "ghost: {:?}", st.ghost);
    out
}

impl Violation {
    /// The property, the trace and the final state, for a failing test's message.
    pub fn explain(&self) -> String {
        let trace: Vec<String> = self.trace.iter().map(|a| format!("  {a:?}")).collect();
        format!(
            "{:?} broken after {} steps:\n{}\n{}",
            self.property,
            self.trace.len(),
            trace.join("\n"),
            describe(&self.state)
        )
    }
}
