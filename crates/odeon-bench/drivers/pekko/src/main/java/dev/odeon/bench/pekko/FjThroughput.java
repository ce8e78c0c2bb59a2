package dev.odeon.bench.pekko;

import java.util.concurrent.CountDownLatch;

import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

/**
 * Fork-Join Throughput (savina.md §3.4): the driver sends N rounds of one shared empty message to
 * each of A actors in index order; each actor does the sin² work unit per message and stops after
 * its N-th.
 */
final class FjThroughput implements Bench {

    /** The one shared, empty message. */
    enum Msg { INSTANCE }

    private final int n;
    private final int a;
    private CountDownLatch exited;
    /** Messages each actor handled, each slot written by its own actor before it stops. */
    private final int[] handled;

    FjThroughput(int n, int a) {
        this.n = n;
        this.a = a;
        this.handled = new int[a];
    }

    @Override
    public int actors() {
        return a;
    }

    @Override
    public Behavior<Void> guardian(CountDownLatch exited) {
        this.exited = exited;
        return Behaviors.setup(ctx -> {
            @SuppressWarnings({"unchecked", "rawtypes"})
            ActorRef<Msg>[] actors = new ActorRef[a];
            for (int i = 0; i < a; i++) {
                int id = i;
                actors[i] = ctx.spawnAnonymous(Behaviors.setup(c -> new Worker(c, id)));
            }
            for (int m = 0; m < n; m++) {
                for (ActorRef<Msg> actor : actors) {
                    actor.tell(Msg.INSTANCE);
                }
            }
            return Behaviors.empty();
        });
    }

    private final class Worker extends AbstractBehavior<Msg> {
        private final int id;
        private int count;

        Worker(ActorContext<Msg> ctx, int id) {
            super(ctx);
            this.id = id;
        }

        @Override
        public Receive<Msg> createReceive() {
            return newReceiveBuilder().onMessage(Msg.class, m -> {
                count++;
                Work.sinSquared();
                if (count == n) {
                    handled[id] = count;
                    return Behaviors.stopped(exited::countDown);
                }
                return this;
            }).build();
        }
    }

    @Override
    public Check validate() {
        long total = 0;
        for (int h : handled) {
            total += h;
        }
        return Check.eq("handled messages", total, (long) a * n);
    }
}
