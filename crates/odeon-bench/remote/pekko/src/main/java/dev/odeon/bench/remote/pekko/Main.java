package dev.odeon.bench.remote.pekko;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.odeon.bench.remote.pekko.Protocol.Counted;
import dev.odeon.bench.remote.pekko.Protocol.Done;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorRefResolver;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;

/**
 * The two processes of the Pekko remote-messaging benchmark:
 * <pre>
 *   server [--parent PID]                         prints "REMOTE-READY &lt;port&gt;", serves until killed
 *   client &lt;rtt|throughput&gt; [--quick] --port P  prints "REMOTE-RESULT {...}" lines
 * </pre>
 * Exit status: 0 success, 1 failure (wrong count or sum, timeout, error), 2 bad arguments.
 */
public final class Main {
    private Main() {}

    static final String SERVER_SYSTEM = "RemoteBench";
    static final String CLIENT_SYSTEM = "RemoteBenchClient";
    static final long REPLY_TIMEOUT_S = 120;

    // rtt: round trips; throughput: messages per pass. --quick divides every count by 20.
    static final int RTT_WARMUP = 20_000;
    static final int RTT_SAMPLES = 20_000;
    static final int TP_MESSAGES = 1_000_000;
    static final int TP_WARMUP_PASSES = 3;
    static final int TP_PASSES = 3;

    /** Everything this peer sets on top of the reference.conf of Pekko's modules. */
    static final String CONFIG = """
        pekko {
          loglevel = WARNING
          actor {
            provider = remote
            # Records carrying an ActorRef go through Jackson CBOR; java.lang.Long is bound to
            # Pekko's primitive LongSerializer by pekko-remote's reference.conf.
            serialization-bindings {
              "dev.odeon.bench.remote.pekko.Protocol$CborSerializable" = jackson-cbor
            }
          }
          # This peer uses remoting directly (no cluster): no warnings about it on every start.
          remote.warn-about-direct-use = off
          remote.warn-unsafe-watch-outside-cluster = off
          remote.artery {
            transport = tcp
            canonical.hostname = "127.0.0.1"
            canonical.port = 0        # the OS picks a free port
            # Pekko's reference.conf: "Lowest latency can be achieved with inbound-lanes=1
            # because of one less asynchronous boundary". Lanes are partitioned by recipient, so
            # with a single server actor more lanes could not run in parallel anyway.
            advanced.inbound-lanes = 1
            # Artery drops (never blocks on) messages offered to a full outbound queue; the
            # default queue holds 3072 messages. 2^20 holds a whole throughput pass (10^6 + 1), so
            # that a plain fire-and-forget tell never loses a message (see README.md).
            advanced.outbound-message-queue-size = 1048576
          }
          # As the Savina peer: an actor with a backlog keeps its thread for up to 100 messages
          # (Pekko's default is 5).
          actor.default-dispatcher.throughput = 100
          log-dead-letters = off
          log-dead-letters-during-shutdown = off
        }
        """;

    public static void main(String[] args) {
        int status;
        try {
            status = run(args);
        } catch (Usage e) {
            System.err.println("pekko: " + e.getMessage());
            status = 2;
        } catch (Failure e) {
            System.err.println("pekko: " + e.getMessage());
            status = 1;
        } catch (Throwable t) {
            System.err.println("pekko: " + t);
            t.printStackTrace();
            status = 1;
        }
        System.out.flush();
        System.err.flush();
        // halt rather than exit: no shutdown hooks to wait for, nothing else to flush.
        Runtime.getRuntime().halt(status);
    }

    static final class Usage extends Exception {
        private static final long serialVersionUID = 1L;

        Usage(String msg) {
            super(msg + "\nusage: server [--parent PID] | client <rtt|throughput> [--quick] --port P");
        }
    }

    /** A failed run (wrong count or sum, lost reply): a message, no stack trace. */
    static final class Failure extends Exception {
        private static final long serialVersionUID = 1L;

        Failure(String msg) {
            super(msg);
        }
    }

    static Config config() {
        // -D system properties (PEKKO_JAVA_OPTS) override this peer's settings, which override
        // the reference.conf defaults.
        return ConfigFactory.systemProperties()
                .withFallback(ConfigFactory.parseString(CONFIG))
                .withFallback(ConfigFactory.load());
    }

    private static int run(String[] args) throws Exception {
        if (args.length == 0) {
            throw new Usage("missing mode");
        }
        String bench = null;
        boolean quick = false;
        long parent = -1;
        int port = -1;
        for (int i = 1; i < args.length; i++) {
            switch (args[i]) {
                case "rtt", "throughput" -> {
                    if (bench != null) throw new Usage("two benchmarks given");
                    bench = args[i];
                }
                case "--quick" -> quick = true;
                case "--parent", "--port" -> {
                    if (i + 1 >= args.length) throw new Usage(args[i] + " needs a value");
                    long v;
                    try {
                        v = Long.parseLong(args[i + 1]);
                    } catch (NumberFormatException e) {
                        throw new Usage(args[i] + ": not an integer: " + args[i + 1]);
                    }
                    if (args[i].equals("--parent")) parent = v; else port = (int) v;
                    i++;
                }
                default -> throw new Usage("unexpected argument " + args[i]);
            }
        }
        switch (args[0]) {
            case "server":
                return server(parent);
            case "client":
                if (bench == null) throw new Usage("missing benchmark");
                if (port <= 0 || port > 65535) throw new Usage("missing or bad --port");
                return client(bench, quick, port);
            default:
                throw new Usage("unknown mode " + args[0]);
        }
    }

    // ------------------------------------------------------------------------------ server

    private static int server(long parent) throws InterruptedException {
        ActorSystem<Object> system = ActorSystem.create(Server.create(), SERVER_SYSTEM, config());
        int port = system.address().getPort().orElseThrow();
        System.out.println("REMOTE-READY " + port);
        System.out.flush();
        // Serve until killed; never outlive the run.sh that started us, nor an hour.
        long deadline = System.nanoTime() + TimeUnit.HOURS.toNanos(1);
        while (System.nanoTime() < deadline) {
            Thread.sleep(1000);
            if (parent > 0 && !ProcessHandle.of(parent).map(ProcessHandle::isAlive).orElse(false)) {
                return 2;
            }
        }
        return 3;
    }

    // ------------------------------------------------------------------------------ client

    private static int client(String bench, boolean quick, int port) throws Exception {
        int div = quick ? 20 : 1;
        String serverPath = "pekko://" + SERVER_SYSTEM + "@127.0.0.1:" + port + "/user";
        ActorSystem<Object> system =
                ActorSystem.create(Client.create(serverPath), CLIENT_SYSTEM, config());
        if (bench.equals("rtt")) {
            rtt(system, RTT_WARMUP / div, RTT_SAMPLES / div);
        } else {
            ActorRef<Object> server = ActorRefResolver.get(system).resolveActorRef(serverPath);
            throughput(system, server, TP_MESSAGES / div);
        }
        // No orderly terminate(): main() halts the JVM right after (the server only logs the
        // lost association, and run.sh stops it anyway).
        return 0;
    }

    private static long[] roundTrips(ActorSystem<Object> client, int rounds) throws Exception {
        CompletableFuture<long[]> result = new CompletableFuture<>();
        client.tell(new Client.Run(rounds, result));
        try {
            return result.get(REPLY_TIMEOUT_S + rounds / 100, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            throw new Failure("rtt: " + (e.getCause() != null ? e.getCause() : e));
        }
    }

    private static void rtt(ActorSystem<Object> client, int warmup, int samples) throws Exception {
        roundTrips(client, warmup);
        long[] times = roundTrips(client, samples);
        Arrays.sort(times);
        System.out.println(String.format(Locale.ROOT,
                "REMOTE-RESULT {\"runtime\":\"pekko\",\"bench\":\"rtt\",\"p50_us\":%.3f,"
                        + "\"p99_us\":%.3f,\"samples\":%d}",
                percentile(times, 50) / 1000.0, percentile(times, 99) / 1000.0, times.length));
    }

    /** Nearest-rank percentile of sorted samples. */
    static long percentile(long[] sorted, int p) {
        int rank = Math.max(1, (int) (((long) p * sorted.length + 99) / 100));
        return sorted[rank - 1];
    }

    private static void throughput(ActorSystem<Object> system, ActorRef<Object> server, int n)
            throws Exception {
        for (int w = 0; w < TP_WARMUP_PASSES; w++) {
            pass(system, server, n);
        }
        for (int p = 1; p <= TP_PASSES; p++) {
            long ns = pass(system, server, n);
            System.out.println(String.format(Locale.ROOT,
                    "REMOTE-RESULT {\"runtime\":\"pekko\",\"bench\":\"throughput\",\"pass\":%d,"
                            + "\"messages\":%d,\"msgs_per_s\":%.1f}",
                    p, n, n * 1e9 / ns));
        }
    }

    /** One pass: n one-way tells of 1..n, then done?; the time from the first send to the reply. */
    private static long pass(ActorSystem<Object> system, ActorRef<Object> server, int n)
            throws Exception {
        long start = System.nanoTime();
        for (long i = 1; i <= n; i++) {
            server.tell(i);
        }
        Counted counted;
        try {
            counted = AskPattern.<Object, Counted>ask(
                            server,
                            replyTo -> new Done(n, replyTo),
                            Duration.ofSeconds(REPLY_TIMEOUT_S),
                            system.scheduler())
                    .toCompletableFuture()
                    .get(REPLY_TIMEOUT_S + 5, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            throw new Failure(String.format(Locale.ROOT,
                    "throughput: the server did not report %d messages within %d s (lost messages?"
                            + " Artery drops what does not fit its outbound queue): %s",
                    n, REPLY_TIMEOUT_S, e.getCause() != null ? e.getCause() : e));
        }
        long ns = System.nanoTime() - start;
        long expectedSum = (long) n * (n + 1) / 2;
        if (counted.count() != n || counted.sum() != expectedSum) {
            throw new Failure(String.format(Locale.ROOT,
                    "throughput: server counted %d messages summing to %d, expected %d and %d",
                    counted.count(), counted.sum(), n, expectedSum));
        }
        return ns;
    }
}
