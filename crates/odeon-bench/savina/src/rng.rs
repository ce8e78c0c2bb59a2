//! The suite's two generators, bit-exact with the reference, so that every runtime
//! (and every language) computes on the same data and the expected values of
//! `shared/savina.md` §5 apply.

/// Savina's `PseudoRandom` (used by most benchmarks at HEAD): a 16-bit LCG.
///
/// ```
/// use savina::rng::PseudoRandom;
/// let mut r = PseudoRandom::default();
/// let first = r.next_int();
/// assert_eq!(first, (74755 * 1309 + 13849) & 65535);
/// assert!((0..65536).contains(&first));
/// ```
#[derive(Clone, Debug)]
pub struct PseudoRandom {
    value: i64,
}

impl Default for PseudoRandom {
    fn default() -> Self {
        Self::new(Self::DEFAULT_SEED)
    }
}

impl PseudoRandom {
    /// The seed `new PseudoRandom()` uses.
    pub const DEFAULT_SEED: i64 = 74755;

    /// A generator whose state is `seed`.
    pub fn new(seed: i64) -> Self {
        Self { value: seed }
    }

    /// Advances and returns the new state, in `0..65536`.
    pub fn next_long(&mut self) -> i64 {
        self.value = (self.value.wrapping_mul(1309).wrapping_add(13849)) & 65535;
        self.value
    }

    /// Same as [`next_long`](Self::next_long), as Java's `int`.
    pub fn next_int(&mut self) -> i32 {
        self.next_long() as i32
    }

    /// Advances and returns the state modulo `bound` (Java's `%`).
    pub fn next_int_bounded(&mut self, bound: i32) -> i32 {
        self.next_int() % bound
    }

    /// Advances and returns `1 / (state + 1)`: in `(1/65536, 1]`, *not* uniform.
    pub fn next_double(&mut self) -> f64 {
        1.0 / (self.next_long() + 1) as f64
    }
}

/// `java.util.Random`, bit-exact: used by Concurrent Dictionary's workers, UCT, A\*'s
/// grid and (unseeded, as busy-work) `Math.random()`.
///
/// ```
/// use savina::rng::JavaRandom;
/// // new java.util.Random(42).nextInt() == -1170105035
/// assert_eq!(JavaRandom::new(42).next_int(), -1170105035);
/// // new java.util.Random(42).nextInt(10) == 0
/// assert_eq!(JavaRandom::new(42).next_int_bounded(10), 0);
/// ```
#[derive(Clone, Debug)]
pub struct JavaRandom {
    seed: i64,
    next_gaussian: Option<f64>,
}

const MULTIPLIER: i64 = 0x5DEECE66D;
const ADDEND: i64 = 0xB;
const MASK: i64 = (1 << 48) - 1;

impl JavaRandom {
    /// `new java.util.Random(seed)`.
    pub fn new(seed: i64) -> Self {
        Self {
            seed: (seed ^ MULTIPLIER) & MASK,
            next_gaussian: None,
        }
    }

    fn next(&mut self, bits: u32) -> i32 {
        self.seed = (self.seed.wrapping_mul(MULTIPLIER).wrapping_add(ADDEND)) & MASK;
        (self.seed >> (48 - bits)) as i32
    }

    /// `nextInt()`.
    pub fn next_int(&mut self) -> i32 {
        self.next(32)
    }

    /// `nextInt(bound)`, with Java's rejection loop. Panics if `bound <= 0`, as Java
    /// throws.
    pub fn next_int_bounded(&mut self, bound: i32) -> i32 {
        assert!(bound > 0, "bound must be positive");
        if bound & (bound - 1) == 0 {
            return ((bound as i64 * self.next(31) as i64) >> 31) as i32;
        }
        loop {
            let bits = self.next(31);
            let val = bits % bound;
            if bits.wrapping_sub(val).wrapping_add(bound - 1) >= 0 {
                return val;
            }
        }
    }

    /// `nextLong()`.
    pub fn next_long(&mut self) -> i64 {
        ((self.next(32) as i64) << 32).wrapping_add(self.next(32) as i64)
    }

    /// `nextBoolean()`.
    pub fn next_boolean(&mut self) -> bool {
        self.next(1) != 0
    }

    /// `nextDouble()`: 53 random bits in `[0, 1)`.
    pub fn next_double(&mut self) -> f64 {
        let high = (self.next(26) as i64) << 27;
        (high + self.next(27) as i64) as f64 * (1.0 / (1i64 << 53) as f64)
    }

    /// `nextGaussian()`: Marsaglia's polar method, caching the second value.
    pub fn next_gaussian(&mut self) -> f64 {
        if let Some(g) = self.next_gaussian.take() {
            return g;
        }
        loop {
            let v1 = 2.0 * self.next_double() - 1.0;
            let v2 = 2.0 * self.next_double() - 1.0;
            let s = v1 * v1 + v2 * v2;
            if s < 1.0 && s != 0.0 {
                let multiplier = (-2.0 * s.ln() / s).sqrt();
                self.next_gaussian = Some(v2 * multiplier);
                return v1 * multiplier;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_random_matches_the_jdk() {
        // Values printed by OpenJDK 17 for `new Random(42)`.
        let mut r = JavaRandom::new(42);
        assert_eq!(r.next_int(), -1170105035);
        assert_eq!(r.next_int(), 234785527);
        let mut r = JavaRandom::new(42);
        assert_eq!(r.next_long(), -5025562857975149833);
        let mut r = JavaRandom::new(42);
        assert_eq!(r.next_double(), 0.7275636800328681);
        let mut r = JavaRandom::new(42);
        assert_eq!(r.next_int_bounded(100), 30);
        assert_eq!(r.next_int_bounded(100), 63);
        assert_eq!(r.next_int_bounded(10), 8);
        let mut r = JavaRandom::new(7);
        assert_eq!(r.next_gaussian(), 0.8452060657049847);
        assert_eq!(r.next_gaussian(), 0.9128761787534405);
        assert!(!r.next_boolean());
    }

    #[test]
    fn pseudo_random_has_the_full_period() {
        let mut r = PseudoRandom::default();
        let first = r.next_long();
        let period = (1..=65536).find(|_| r.next_long() == first).unwrap();
        assert_eq!(period, 65536);
    }
}
