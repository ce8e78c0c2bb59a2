package dev.odeon.bench.pekko;

import java.util.concurrent.CountDownLatch;

import org.apache.pekko.actor.typed.Behavior;

/**
 * One iteration of one benchmark. A fresh instance per iteration holds the counters its actors
 * fill in; {@link Harness} reads them only after every actor has stopped, so the latch's
 * count-downs order those writes before the reads (no atomics needed on the hot path).
 */
interface Bench {

    /** How many actors the iteration starts: the iteration ends when all of them have stopped. */
    int actors();

    /**
     * The user guardian of the iteration's fresh {@code ActorSystem}: it plays Savina's driver
     * (typed Pekko creates actors only from inside an actor), creating the benchmark actors and
     * sending the first messages, then stays idle. Every benchmark actor ends with
     * {@code Behaviors.stopped(exited::countDown)}, so the count-down runs once the actor has
     * really stopped (its PostStop).
     */
    Behavior<Void> guardian(CountDownLatch exited);

    /** Checks the result once every actor has stopped. */
    Check validate();
}
