package dev.odeon.bench.pekko;

/** The work unit of the fork-join benchmarks (savina.md §3.4, §3.5). */
final class Work {
    private Work() {}

    /**
     * Computes sin(37.2)² and fails when it is not positive: the check keeps the JIT from
     * dropping the computation, exactly as Savina's version does.
     */
    static double sinSquared() {
        double s = Math.sin(37.2);
        double r = s * s;
        if (r <= 0) {
            throw new IllegalStateException("sin(37.2)^2 = " + r + " is not positive");
        }
        return r;
    }
}
