//! Compute kernels that more than one driver runs, compiled once here and kept out of
//! line, so that every runtime runs the same machine code.
//!
//! Why: Trapezoid is almost all arithmetic, and each driver's copy of its integrand
//! loop was inlined into that runtime's own dispatch code, where the register
//! allocator kept the running sum differently. The same source measured 161 and 169 ms
//! in one binary and the next (odeon at two commits whose difference was a field order
//! in the actor cell, 24 interleaved runs each, 2026-11-25): a comparison of compilers'
//! luck, not of runtimes.

/// Trapezoid's integrand (`savina.md` §3.28): `sin(x³ − 1) / (x + 1) · √(1 + e^√(2x))`.
pub fn trapezoid_fx(x: f64) -> f64 {
    let quotient = (x * x * x - 1.0).sin() / (x + 1.0);
    quotient * (1.0 + (2.0 * x).sqrt().exp()).sqrt()
}

/// One Trapezoid worker's area: `[left, right]` in pieces of width `h`, each piece
/// `h · (f(lx) + f(lx + h)) / 2`, summed in order.
///
/// ```
/// // ∫₀¹ over 1,000 pieces: a fixed value, the same for every driver.
/// let a = savina::kernels::trapezoid_area(0.0, 1.0, 0.001);
/// assert_eq!(a, savina::kernels::trapezoid_area(0.0, 1.0, 0.001));
/// assert!(a.is_finite());
/// ```
#[inline(never)]
pub fn trapezoid_area(left: f64, right: f64, h: f64) -> f64 {
    let pieces = ((right - left) / h) as u64;
    (0..pieces)
        .map(|k| {
            let lx = k as f64 * h + left;
            0.5 * (trapezoid_fx(lx) + trapezoid_fx(lx + h)) * h
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_area_matches_a_direct_sum_of_the_pieces() {
        let (l, r, h): (f64, f64, f64) = (1.0, 5.0, 0.01);
        let mut direct = 0.0;
        let mut k = 0u64;
        while (k as f64) < ((r - l) / h).floor() {
            let lx = k as f64 * h + l;
            direct += 0.5 * (trapezoid_fx(lx) + trapezoid_fx(lx + h)) * h;
            k += 1;
        }
        assert_eq!(trapezoid_area(l, r, h), direct);
    }

    #[test]
    fn empty_and_reversed_ranges_have_no_area() {
        assert_eq!(trapezoid_area(2.0, 2.0, 0.1), 0.0);
        assert_eq!(trapezoid_area(3.0, 2.0, 0.1), 0.0);
    }
}
