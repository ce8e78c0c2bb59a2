//! The `odeon-examples` crate holds runnable examples (see the `[[example]]` targets in
//! `Cargo.toml`). This library exists only so that `cargo test` compiles and runs the
//! Rust code in the workspace README, keeping it in step with the real API.

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
