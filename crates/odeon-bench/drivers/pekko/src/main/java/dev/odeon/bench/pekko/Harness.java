package dev.odeon.bench.pekko;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;

import org.apache.pekko.actor.typed.ActorSystem;

/**
 * Runs one iteration the way Savina times it (savina.md §1.1): the clock starts before the fresh
 * {@code ActorSystem} is created and stops when every actor of the benchmark has stopped; the
 * system is then terminated outside the timed region.
 */
final class Harness {

    /** The longest an iteration may take before it is reported as invalid (a hang, not a time). */
    private static final Duration LIMIT = Duration.ofMinutes(10);

    private final Config config;
    private int systems;

    /** The configuration every iteration's system uses, built once (outside the timed region). */
    Harness(int threads) {
        this.config = config(threads);
    }

    /**
     * Pekko's settings for this kind of work, on top of the defaults of {@code reference.conf}.
     * System properties ({@code -Dpekko...}) still win, so settings can be compared by hand.
     *
     * <ul>
     *   <li>the default dispatcher is a fork-join pool of exactly {@code threads} workers
     *       (parallelism-min = parallelism-max = T, as Savina configures Akka);
     *   <li>the internal dispatcher is an alias of the default one, so that Pekko's own actors
     *       do not bring a second pool of threads: the runtime uses at most T workers;
     *   <li>throughput (messages an actor handles before it gives its thread back) is 100
     *       instead of Pekko's default 5: faster in aggregate over the seven benchmarks on both
     *       JDKs (measurements in the README), chiefly where an actor has a backlog or sends to
     *       itself (PingPong, Counting, FJ Creation);
     *   <li>dead letters are not logged: ThreadRing's protocol sends a message to an actor that
     *       has already stopped, on purpose (savina.md §3.2), and Savina drops those silently.
     * </ul>
     * Typed actors already use {@code SingleConsumerOnlyUnboundedMailbox}, Savina's mailbox.
     */
    static Config config(int threads) {
        String settings = String.join("\n",
                "pekko.actor.default-dispatcher.executor = fork-join-executor",
                "pekko.actor.default-dispatcher.fork-join-executor.parallelism-min = " + threads,
                "pekko.actor.default-dispatcher.fork-join-executor.parallelism-max = " + threads,
                "pekko.actor.default-dispatcher.fork-join-executor.parallelism-factor = 1.0",
                "pekko.actor.default-dispatcher.throughput = 100",
                "pekko.actor.internal-dispatcher = \"pekko.actor.default-dispatcher\"",
                "pekko.loglevel = WARNING",
                "pekko.log-dead-letters = off",
                "pekko.log-dead-letters-during-shutdown = off",
                "pekko.jvm-shutdown-hooks = off");
        return ConfigFactory.systemProperties()
                .withFallback(ConfigFactory.parseString(settings))
                .withFallback(ConfigFactory.load());
    }

    /** The settings in force, for the log on stderr. */
    String describe() {
        Config d = config.getConfig("pekko.actor.default-dispatcher");
        return "executor=" + d.getString("executor")
                + " parallelism=" + d.getInt("fork-join-executor.parallelism-min")
                + ".." + d.getInt("fork-join-executor.parallelism-max")
                + " throughput=" + d.getInt("throughput")
                + " mailbox=" + config.getString("pekko.actor.typed.default-mailbox.mailbox-type");
    }

    /** One timed iteration: the elapsed nanoseconds and the check. */
    record Outcome(long ns, Check check) {}

    Outcome run(Bench bench) throws InterruptedException {
        CountDownLatch exited = new CountDownLatch(bench.actors());
        String name = "savina" + (systems++);
        long start = System.nanoTime();
        ActorSystem<Void> system = ActorSystem.create(bench.guardian(exited), name, config);
        boolean done = exited.await(LIMIT.toMillis(), TimeUnit.MILLISECONDS);
        long ns = System.nanoTime() - start;
        system.terminate();
        try {
            system.getWhenTerminated().toCompletableFuture().get(1, TimeUnit.MINUTES);
        } catch (Exception e) {
            System.err.println("pekko: " + name + " did not terminate: " + e);
        }
        if (!done) {
            return new Outcome(ns, Check.err("timed out after " + LIMIT.toSeconds() + " s with "
                    + exited.getCount() + " of " + bench.actors() + " actors still running"));
        }
        return new Outcome(ns, bench.validate());
    }
}
