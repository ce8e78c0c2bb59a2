package dev.odeon.bench.pekko;

/**
 * Savina's {@code PseudoRandom}, bit-exact with the reference (and with
 * {@code savina::rng::PseudoRandom} of the Rust drivers): a 16-bit LCG, so that every runtime
 * computes on the same random targets.
 */
final class PseudoRandom {
    private long value;

    /** A generator whose state is {@code seed}. */
    PseudoRandom(long seed) {
        this.value = seed;
    }

    /** Advances and returns the new state, in {@code 0..65535}. */
    long nextLong() {
        value = (value * 1309 + 13849) & 65535;
        return value;
    }

    /** Advances and returns the state modulo {@code bound} (Java's {@code %}). */
    int nextInt(int bound) {
        return (int) nextLong() % bound;
    }
}
