//! The `odeon-examples` crate holds the distributed examples (the `odeon-node` and
//! `odeon-soak` binaries, the `cluster` example; the single-process ones are odeon's own
//! examples). This library exists only so that `cargo test` compiles and runs the Rust
//! code in the workspace README, keeping it in step with the real API.

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
