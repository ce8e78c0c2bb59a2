//! Counting with mimalloc as the *global* allocator too, beside the same SPSC floor.
//!
//! Every message is one node, allocated by the sender's thread and freed by the worker
//! that handles it. odeon allocates those nodes with mimalloc whatever the global
//! allocator is (`crates/odeon/src/mailbox/alloc.rs`), because glibc serves that
//! cross-thread pattern from its arena slow path (`_int_malloc`/`_int_free`: half of all
//! samples of `tell/counting` under `perf record -e cpu-clock` before the change). What
//! is left for this target to show is the global allocator's effect on everything else
//! (the messages' own buffers, cells, run-queue blocks). The floor does not allocate.
//!
//! Run: `cargo bench -p odeon-microbench --bench allocator`, then compare with
//! `cargo bench -p odeon-microbench --bench core -- 'tell/counting$|baseline/spsc$'`.

// `criterion_group!` generates an undocumented `pub fn`.
#![allow(missing_docs)]

use std::time::Duration;

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use odeon::System;

mod common;
use common::{Counter, counting, spsc_ring};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const N: u64 = 1_000_000;

fn counting_under_mimalloc(c: &mut Criterion) {
    let mut g = c.benchmark_group("mimalloc");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sampling_mode(SamplingMode::Flat)
        .throughput(Throughput::Elements(N));
    let system = System::new();
    let (counter, done) = Counter::new(N);
    let counter = system.spawn(counter);
    g.bench_function("tell/counting", |b| {
        b.iter_custom(|iters| counting(&counter, &done, N, iters));
    });
    g.bench_function("baseline/spsc", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| spsc_ring(N, |i| i, |v| v)).sum());
    });
    g.finish();
}

criterion_group!(benches, counting_under_mimalloc);
criterion_main!(benches);
