package dev.odeon.bench.pekko;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The driver command line of {@code crates/odeon-bench/savina/src/protocol.rs}:
 * {@code <bench-id> [--variant V] [--iterations K] [--warmup W] [--threads T] [--quick] [-flag value]...}.
 *
 * <p>The runner always passes every parameter; the defaults (and {@code --quick} values) of the
 * Rust catalog are repeated here for the benchmarks this driver implements, so that it can also
 * be run by hand.
 */
final class Args {

    /** Bad arguments: the protocol's exit status 2. */
    static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        UsageException(String message) {
            super(message);
        }
    }

    /** Every id of {@code savina::catalog::ALL}: unknown ids are usage errors, others unsupported. */
    static final List<String> CATALOG = List.of(
            "pingpong", "threadring", "counting", "fjthrput", "fjcreate", "fib", "chameneos", "big",
            "concdict", "concsll", "bndbuffer", "philosopher", "barber", "cigsmok", "logmap", "banking",
            "apsp", "astar", "nqueenk", "recmatmul", "quicksort", "radixsort", "filterbank",
            "bitonicsort", "sieve", "uct", "facloc", "trapezoid", "piprecision", "sor", "threadring503");

    /** The implemented benchmarks, in the catalog's order. */
    static final List<String> IMPLEMENTED = List.of(
            "pingpong", "threadring", "counting", "fjthrput", "fjcreate", "chameneos", "big",
            "threadring503");

    /** Defaults then quick values (flag, default, quick) of the implemented benchmarks. */
    private static final Map<String, String[][]> PARAMS = Map.of(
            "pingpong", new String[][] {{"n", "40000", "2000"}},
            "threadring", new String[][] {{"n", "100", "10"}, {"r", "100000", "2000"}},
            "threadring503", new String[][] {{"n", "503", "503"}, {"r", "10000000", "20000"}},
            "counting", new String[][] {{"n", "1000000", "20000"}},
            "fjthrput", new String[][] {{"n", "10000", "200"}, {"a", "60", "10"}},
            "fjcreate", new String[][] {{"n", "40000", "1000"}},
            "chameneos", new String[][] {{"c", "100", "10"}, {"m", "200000", "2000"}},
            "big", new String[][] {{"n", "20000", "200"}, {"w", "120", "10"}});

    final String bench;
    final Map<String, Long> params = new LinkedHashMap<>();
    String variant = "";
    int iterations = 1;
    int warmup = 0;
    int threads = Runtime.getRuntime().availableProcessors();

    private Args(String bench) {
        this.bench = bench;
    }

    /** Whether this driver implements {@code bench} (checked before the flags are parsed). */
    static boolean implemented(String bench) {
        return PARAMS.containsKey(bench);
    }

    /** Parses the arguments after the program name; {@code bench} must be implemented. */
    static Args parse(String[] argv) throws UsageException {
        if (argv.length == 0) {
            throw new UsageException(usage());
        }
        Args args = new Args(argv[0]);
        String[][] table = PARAMS.get(args.bench);
        if (table == null) {
            throw new UsageException("unknown benchmark \"" + args.bench + "\"\n" + usage());
        }
        boolean quick = List.of(argv).subList(1, argv.length).contains("--quick");
        for (String[] p : table) {
            args.params.put(p[0], Long.parseLong(quick ? p[2] : p[1]));
        }
        for (int i = 1; i < argv.length; i += 2) {
            String flag = argv[i];
            if (flag.equals("--quick")) {
                i -= 1;
                continue;
            }
            if (i + 1 >= argv.length) {
                throw new UsageException(flag + " needs a value");
            }
            String value = argv[i + 1];
            switch (flag) {
                case "--variant" -> args.variant = value;
                case "--iterations" -> args.iterations = count(flag, value);
                case "--warmup" -> args.warmup = count(flag, value);
                case "--threads" -> args.threads = Math.max(1, count(flag, value));
                default -> {
                    if (!flag.startsWith("-") || flag.startsWith("--")) {
                        throw new UsageException("unexpected argument \"" + flag + "\"\n" + usage());
                    }
                    String key = flag.substring(1);
                    if (!args.params.containsKey(key)) {
                        StringBuilder known = new StringBuilder();
                        for (String[] p : table) {
                            known.append(known.length() == 0 ? "-" : " -").append(p[0]);
                        }
                        throw new UsageException(args.bench + ": unknown parameter -" + key
                                + " (known: " + known + ")");
                    }
                    try {
                        args.params.put(key, Long.parseLong(value));
                    } catch (NumberFormatException e) {
                        throw new UsageException(args.bench + ": -" + key + " \"" + value
                                + "\" is not an integer");
                    }
                }
            }
        }
        checkVariant(args.variant);
        return args;
    }

    /**
     * Pekko has one configuration; the runner names the JDK it runs on ({@code jdk17},
     * {@code jdk25}: it sets JAVA_HOME accordingly). A JDK that is not the one running would
     * mislabel every result, so it is refused.
     */
    private static void checkVariant(String variant) throws UsageException {
        if (variant.isEmpty() || variant.equals("default")) {
            return;
        }
        String running = "jdk" + Runtime.version().feature();
        if (variant.matches("jdk[0-9]+")) {
            if (!variant.equals(running)) {
                throw new UsageException("--variant " + variant + " but this JVM is " + running
                        + " (" + System.getProperty("java.home") + ")");
            }
            return;
        }
        throw new UsageException("unknown --variant \"" + variant
                + "\" (pekko has one configuration; the variant names the JDK: " + running + ")");
    }

    /** A parameter as an {@code int} no smaller than {@code min}, else a usage error. */
    int get(String key, int min) throws UsageException {
        long v = params.get(key);
        if (v < min || v > Integer.MAX_VALUE) {
            throw new UsageException(bench + ": -" + key + " " + v + " must be in " + min + ".."
                    + Integer.MAX_VALUE);
        }
        return (int) v;
    }

    private static int count(String flag, String value) throws UsageException {
        try {
            int n = Integer.parseInt(value);
            if (n >= 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new UsageException(flag + " \"" + value + "\" is not a count");
    }

    static String usage() {
        return "usage: run.sh <bench> [--variant V] [--iterations K] [--warmup W] [--threads T]"
                + " [--quick] [-flag value]...\nbenchmarks: " + String.join(" ", IMPLEMENTED);
    }
}
