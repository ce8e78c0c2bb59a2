//! Criterion micro-benchmarks of odeon: see `benches/core.rs` (hot paths against a
//! floor measured in the same run) and `benches/allocator.rs` (mimalloc as the global
//! allocator). This library is empty; a package needs a target besides its benches.

#![forbid(unsafe_code)]
