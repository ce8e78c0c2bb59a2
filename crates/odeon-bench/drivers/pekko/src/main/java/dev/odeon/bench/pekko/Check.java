package dev.odeon.bench.pekko;

/**
 * What one iteration's validation found: whether the result is right, and what was checked
 * (or why it is wrong). A wrong answer must be reported as invalid, never as fast.
 */
public record Check(boolean valid, String detail) {

    /** A result that validated; {@code detail} says what was checked. */
    public static Check ok(String detail) {
        return new Check(true, detail);
    }

    /** A result that did not validate; {@code detail} says why. */
    public static Check err(String detail) {
        return new Check(false, detail);
    }

    /** Valid when {@code got == expected}, naming both otherwise (like the Rust {@code expect_eq}). */
    public static Check eq(String what, long got, long expected) {
        return got == expected
                ? ok(what + " = " + expected)
                : err(what + ": got " + got + ", expected " + expected);
    }

    /** This check if it failed, else {@code next} with both details joined. */
    public Check and(Check next) {
        if (!valid) {
            return this;
        }
        return next.valid ? ok(detail + "; " + next.detail) : next;
    }
}
