package dev.odeon.bench.pekko;

import java.util.function.Supplier;

/**
 * The Pekko driver: parses the protocol's command line, runs the warm-up then the measured
 * iterations in this one JVM (so the JIT has compiled the hot code before the measured ones) and
 * prints one {@code SAVINA-RESULT {json}} line per iteration.
 *
 * <p>Exit status: 0 when every iteration validated, 3 when one did not, 2 for bad arguments, 4
 * (after {@code SAVINA-UNSUPPORTED <id>}) for a benchmark of the catalog this driver lacks.
 */
public final class Main {
    static final String RUNTIME = "pekko";
    static final int EXIT_INVALID = 3;
    static final int EXIT_USAGE = 2;
    static final int EXIT_UNSUPPORTED = 4;

    private Main() {}

    public static void main(String[] argv) throws InterruptedException {
        // SLF4J's own notice about replaying the logger's start-up message is noise on stderr.
        System.setProperty("slf4j.internal.verbosity", "ERROR");
        if (argv.length > 0 && Args.CATALOG.contains(argv[0]) && !Args.implemented(argv[0])) {
            System.out.println("SAVINA-UNSUPPORTED " + argv[0]);
            System.out.flush();
            System.exit(EXIT_UNSUPPORTED);
        }
        Args args;
        Supplier<Bench> factory;
        try {
            args = Args.parse(argv);
            factory = factory(args);
        } catch (Args.UsageException e) {
            System.err.println(RUNTIME + ": " + e.getMessage());
            System.exit(EXIT_USAGE);
            return;
        }
        Harness harness = new Harness(args.threads);
        System.err.println(RUNTIME + ": " + args.bench + " " + args.params + " threads="
                + args.threads + " " + harness.describe() + " java=" + Runtime.version());
        boolean allValid = true;
        for (int k = 0; k < args.warmup + args.iterations; k++) {
            boolean warmup = k < args.warmup;
            int iteration = warmup ? k : k - args.warmup;
            Harness.Outcome out = harness.run(factory.get());
            allValid &= out.check().valid();
            System.out.println("SAVINA-RESULT " + json(args, iteration, warmup, out));
            System.out.flush();
        }
        System.exit(allValid ? 0 : EXIT_INVALID);
    }

    /** Reads the benchmark's parameters (bad values are usage errors) into a per-iteration factory. */
    private static Supplier<Bench> factory(Args a) throws Args.UsageException {
        switch (a.bench) {
            case "pingpong": {
                int n = a.get("n", 1);
                return () -> new PingPong(n);
            }
            case "counting": {
                int n = a.get("n", 0);
                return () -> new Counting(n);
            }
            case "fjthrput": {
                int n = a.get("n", 1);
                int actors = a.get("a", 1);
                return () -> new FjThroughput(n, actors);
            }
            case "fjcreate": {
                int n = a.get("n", 1);
                return () -> new FjCreate(n);
            }
            case "threadring":
            case "threadring503": {
                int n = a.get("n", 1);
                int r = a.get("r", 0);
                return () -> new ThreadRing(n, r);
            }
            case "chameneos": {
                int c = a.get("c", 2);
                int m = a.get("m", 0);
                return () -> new Chameneos(c, m);
            }
            case "big": {
                int n = a.get("n", 0);
                int w = a.get("w", 1);
                return () -> new Big(n, w);
            }
            default:
                throw new Args.UsageException("unknown benchmark \"" + a.bench + "\"");
        }
    }

    /** The fields of {@code savina::protocol::ResultLine}, serialized by hand. */
    static String json(Args a, int iteration, boolean warmup, Harness.Outcome out) {
        return "{\"bench\":" + quote(a.bench)
                + ",\"runtime\":" + quote(RUNTIME)
                + ",\"variant\":" + quote(a.variant)
                + ",\"iteration\":" + iteration
                + ",\"warmup\":" + warmup
                + ",\"ns\":" + out.ns()
                + ",\"valid\":" + out.check().valid()
                + ",\"detail\":" + quote(out.check().detail()) + "}";
    }

    static String quote(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
