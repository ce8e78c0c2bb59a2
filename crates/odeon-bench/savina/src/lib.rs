//! The contract shared by every Savina driver (odeon and its peers) and the runner.
//!
//! Savina is the standard actor benchmark suite: Imam & Sarkar, *Savina – An Actor
//! Benchmark Suite*, AGERE! 2014. The workloads are specified in `shared/savina.md`;
//! this crate holds what every implementation must agree on:
//!
//! - [`catalog`]: each benchmark's id, category, default and `--quick` parameters;
//! - [`protocol`]: how the runner starts a driver process and reads its results, and
//!   [`protocol::drive`], the `main` of every Rust driver;
//! - [`rng`]: the two generators the suite uses, bit-exact (`PseudoRandom` and
//!   `java.util.Random`), so every runtime computes on the same data;
//! - [`kernels`]: compute kernels every driver calls, so every runtime also runs the
//!   same machine code for them.
//!
//! ```
//! use savina::catalog;
//! let pingpong = catalog::find("pingpong").unwrap();
//! assert_eq!(pingpong.defaults, &[("n", "40000")]);
//! ```

pub mod catalog;
pub mod kernels;
pub mod protocol;
pub mod rng;

pub use catalog::{Bench, Category};
pub use protocol::{Outcome, Params};
