// Control for run-to-run spread: a fixed amount of single-threaded work per process
// (a pointer chase over 8 MiB plus arithmetic), timed like a Savina iteration.
use std::time::Instant;
fn main() {
    let n: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1 << 20);
    let iters: usize = std::env::args().nth(2).and_then(|s| s.parse().ok()).unwrap_or(3_000_000);
    let mut next: Vec<u32> = (0..n as u32).collect();
    let mut x: u64 = 88172645463325252;
    for i in (1..n).rev() { x ^= x << 13; x ^= x >> 7; x ^= x << 17; let j = (x % (i as u64 + 1)) as usize; next.swap(i, j); }
    let t = Instant::now();
    let mut p = 0usize; let mut acc = 0u64;
    for k in 0..iters { p = next[p] as usize; acc = acc.wrapping_mul(31).wrapping_add(p as u64 ^ k as u64); }
    let ns = t.elapsed().as_nanos();
    println!("SAVINA-RESULT {{\"ns\":{ns},\"acc\":{acc}}}");
}
