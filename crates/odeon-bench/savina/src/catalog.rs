//! Every benchmark of the suite: id, category and parameters.
//!
//! Parameters are named by Savina's own command-line flags without the dash
//! (`-n 40000` is `("n", "40000")`), so results stay comparable with the original
//! suite. The runner always passes every parameter explicitly to a driver, so drivers
//! written in other languages need no copy of this table.
//!
//! `quick` parameters are small enough that the whole suite runs in seconds (CI runs
//! odeon's drivers with them to check that every result validates). A quick entry
//! lists only the parameters it changes.

/// The three groups of the Savina paper.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    /// Benchmarks 1–8: one messaging pattern each.
    Micro,
    /// Benchmarks 9–16: classic concurrency problems.
    Concurrency,
    /// Benchmarks 17–30: parallel algorithms.
    Parallelism,
}

/// One benchmark.
#[derive(Clone, Copy, Debug)]
pub struct Bench {
    /// The id drivers and the runner use (`pingpong`, `threadring`, ...).
    pub id: &'static str,
    /// The name in reports.
    pub title: &'static str,
    /// Savina's number (`#` in `shared/savina.md`); 0 for the non-Savina extra.
    pub number: u8,
    /// The group.
    pub category: Category,
    /// One of the seven micro benchmarks every peer implements (PingPong, Counting,
    /// ForkJoin throughput and creation, ThreadRing, Chameneos, Big).
    pub peer_micro: bool,
    /// Savina's default parameters, every one of them.
    pub defaults: &'static [(&'static str, &'static str)],
    /// The parameters `--quick` changes.
    pub quick: &'static [(&'static str, &'static str)],
}

impl Bench {
    /// The full parameter list, with `quick` applied when asked.
    pub fn params(&self, quick: bool) -> Vec<(&'static str, &'static str)> {
        let mut params = self.defaults.to_vec();
        if quick {
            for (key, value) in self.quick {
                match params.iter_mut().find(|(k, _)| k == key) {
                    Some(slot) => slot.1 = value,
                    None => params.push((key, value)),
                }
            }
        }
        params
    }
}

use Category::{Concurrency, Micro, Parallelism};

macro_rules! bench {
    ($id:literal, $title:literal, $num:literal, $cat:ident, $peer:literal,
     [$($dk:literal = $dv:literal),* $(,)?], quick [$($qk:literal = $qv:literal),* $(,)?]) => {
        Bench {
            id: $id,
            title: $title,
            number: $num,
            category: $cat,
            peer_micro: $peer,
            defaults: &[$(($dk, $dv)),*],
            quick: &[$(($qk, $qv)),*],
        }
    };
}

/// The suite, in Savina's order, then the extra ThreadRing configuration.
pub static ALL: &[Bench] = &[
    bench!(
        "pingpong",
        "Ping Pong",
        1,
        Micro,
        true,
        ["n" = "40000"],
        quick["n" = "2000"]
    ),
    bench!("threadring", "Thread Ring", 2, Micro, true, ["n" = "100", "r" = "100000"],
        quick ["n" = "10", "r" = "2000"]),
    bench!(
        "counting",
        "Counting Actor",
        3,
        Micro,
        true,
        ["n" = "1000000"],
        quick["n" = "20000"]
    ),
    bench!("fjthrput", "Fork-Join Throughput", 4, Micro, true, ["n" = "10000", "a" = "60"],
        quick ["n" = "200", "a" = "10"]),
    bench!(
        "fjcreate",
        "Fork-Join Actor Creation",
        5,
        Micro,
        true,
        ["n" = "40000"],
        quick["n" = "1000"]
    ),
    bench!(
        "fib",
        "Fibonacci",
        6,
        Micro,
        false,
        ["n" = "25"],
        quick["n" = "12"]
    ),
    bench!("chameneos", "Chameneos", 7, Micro, true, ["c" = "100", "m" = "200000"],
        quick ["c" = "10", "m" = "2000"]),
    bench!("big", "Big", 8, Micro, true, ["n" = "20000", "w" = "120"],
        quick ["n" = "200", "w" = "10"]),
    bench!("concdict", "Concurrent Dictionary", 9, Concurrency, false,
        ["e" = "20", "m" = "10000", "w" = "10"], quick ["e" = "4", "m" = "500"]),
    bench!("concsll", "Concurrent Sorted Linked List", 10, Concurrency, false,
        ["e" = "20", "m" = "8000", "w" = "10", "s" = "1"], quick ["e" = "4", "m" = "300"]),
    bench!("bndbuffer", "Producer-Consumer (bounded buffer)", 11, Concurrency, false,
        ["bb" = "50", "np" = "40", "nc" = "40", "ipp" = "1000", "pc" = "25", "cc" = "25"],
        quick ["bb" = "10", "np" = "4", "nc" = "4", "ipp" = "100"]),
    bench!("philosopher", "Dining Philosophers", 12, Concurrency, false, ["n" = "20", "m" = "10000"],
        quick ["n" = "5", "m" = "200"]),
    bench!("barber", "Sleeping Barber", 13, Concurrency, false,
        ["n" = "5000", "w" = "1000", "pr" = "1000", "hr" = "1000"],
        quick ["n" = "200", "w" = "50", "pr" = "100", "hr" = "100"]),
    bench!("cigsmok", "Cigarette Smokers", 14, Concurrency, false, ["r" = "1000", "s" = "200"],
        quick ["r" = "50", "s" = "10"]),
    bench!("logmap", "Logistic Map Series", 15, Concurrency, false,
        ["t" = "25000", "s" = "10", "r" = "3.46"], quick ["t" = "500", "s" = "4"]),
    bench!("banking", "Bank Transaction", 16, Concurrency, false, ["a" = "1000", "n" = "50000"],
        quick ["a" = "50", "n" = "1000"]),
    bench!("apsp", "All-Pairs Shortest Path", 17, Parallelism, false,
        ["n" = "300", "b" = "50", "w" = "100"], quick ["n" = "60", "b" = "20"]),
    bench!(
        "astar",
        "A-Star Search",
        18,
        Parallelism,
        false,
        ["w" = "20", "g" = "30", "p" = "30", "t" = "1024"],
        quick["g" = "10"]
    ),
    bench!(
        "nqueenk",
        "NQueens, first K solutions",
        19,
        Parallelism,
        false,
        [
            "w" = "20",
            "n" = "12",
            "t" = "4",
            "p" = "10",
            "s" = "1500000"
        ],
        quick["n" = "8"]
    ),
    bench!("recmatmul", "Recursive Matrix Multiplication", 20, Parallelism, false,
        ["w" = "20", "n" = "1024", "t" = "16384", "p" = "10"], quick ["n" = "128", "t" = "1024"]),
    bench!("quicksort", "Quicksort", 21, Parallelism, false,
        ["n" = "1000000", "m" = "1152921504606846976", "t" = "2048", "s" = "1024"],
        quick ["n" = "20000", "t" = "512"]),
    bench!(
        "radixsort",
        "Radix Sort",
        22,
        Parallelism,
        false,
        ["n" = "100000", "m" = "1152921504606846976", "s" = "2048"],
        quick["n" = "5000"]
    ),
    bench!("filterbank", "Filter Bank", 23, Parallelism, false,
        ["col" = "16384", "sim" = "34816", "chan" = "8"],
        quick ["col" = "128", "sim" = "4352", "chan" = "4"]),
    bench!(
        "bitonicsort",
        "Bitonic Sort",
        24,
        Parallelism,
        false,
        ["n" = "4096", "m" = "1152921504606846976", "s" = "2048"],
        quick["n" = "256"]
    ),
    bench!("sieve", "Sieve of Eratosthenes", 25, Parallelism, false, ["n" = "100000", "m" = "1000"],
        quick ["n" = "5000", "m" = "100"]),
    bench!(
        "uct",
        "Unbalanced Cobwebbed Tree",
        26,
        Parallelism,
        false,
        [
            "nodes" = "200000",
            "avg" = "500",
            "stdev" = "100",
            "binomial" = "10",
            "urgent" = "50"
        ],
        quick["nodes" = "5000"]
    ),
    bench!(
        "facloc",
        "Online Facility Location",
        27,
        Parallelism,
        false,
        ["n" = "100000", "g" = "500.0", "a" = "2.0"],
        quick["n" = "5000"]
    ),
    bench!("trapezoid", "Trapezoidal Approximation", 28, Parallelism, false,
        ["n" = "10000000", "w" = "100", "l" = "1", "r" = "5"], quick ["n" = "100000", "w" = "10"]),
    bench!(
        "piprecision",
        "Precise Pi Computation",
        29,
        Parallelism,
        false,
        ["w" = "20", "p" = "5000"],
        quick["p" = "200"]
    ),
    bench!("sor", "Successive Over-Relaxation", 30, Parallelism, false, ["n" = "0"], quick []),
    bench!(
        "threadring503",
        "Thread Ring, ActorFoundry's classic (503 actors)",
        0,
        Micro,
        false,
        ["n" = "503", "r" = "10000000"],
        quick["r" = "20000"]
    ),
];

/// The benchmark with this id.
pub fn find(id: &str) -> Option<&'static Bench> {
    ALL.iter().find(|b| b.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_quick_only_names_known_flags() {
        for (i, b) in ALL.iter().enumerate() {
            assert!(
                ALL[i + 1..].iter().all(|o| o.id != b.id),
                "duplicate id {}",
                b.id
            );
            for (key, _) in b.quick {
                assert!(
                    b.defaults.iter().any(|(k, _)| k == key),
                    "{}: quick {key}",
                    b.id
                );
            }
        }
        assert_eq!(ALL.iter().filter(|b| b.peer_micro).count(), 7);
        assert_eq!(ALL.iter().filter(|b| b.number > 0).count(), 30);
    }

    #[test]
    fn quick_overrides_only_what_it_names() {
        let ring = find("threadring").unwrap();
        assert_eq!(ring.params(true), vec![("n", "10"), ("r", "2000")]);
        let sor = find("sor").unwrap();
        assert_eq!(sor.params(true), sor.params(false));
    }
}
