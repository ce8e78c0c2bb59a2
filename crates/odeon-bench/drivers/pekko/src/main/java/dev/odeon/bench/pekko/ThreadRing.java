package dev.odeon.bench.pekko;

import java.util.concurrent.CountDownLatch;

import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

/**
 * Thread Ring (savina.md §3.2), also {@code threadring503} (the same protocol with other
 * parameters): one token makes R hops around a ring of N actors, then an exit token makes N+1
 * hops. The last one reaches an actor that has already stopped and becomes a dead letter, as
 * Savina's protocol intends.
 */
final class ThreadRing implements Bench {

    sealed interface RingMsg permits Data, Ping, Exit {}

    /** Wiring: the next actor of the ring. */
    record Data(ActorRef<RingMsg> next) implements RingMsg {}

    record Ping(int pingsLeft) implements RingMsg {}

    record Exit(int exitsLeft) implements RingMsg {}

    private final int n;
    private final int r;
    private CountDownLatch exited;
    /** Pings each actor received, written by that actor before it stops. */
    private final int[] pings;

    ThreadRing(int n, int r) {
        this.n = n;
        this.r = r;
        this.pings = new int[n];
    }

    @Override
    public int actors() {
        return n;
    }

    @Override
    public Behavior<Void> guardian(CountDownLatch exited) {
        this.exited = exited;
        return Behaviors.setup(ctx -> {
            @SuppressWarnings({"unchecked", "rawtypes"})
            ActorRef<RingMsg>[] ring = new ActorRef[n];
            for (int i = 0; i < n; i++) {
                int id = i;
                ring[i] = ctx.spawnAnonymous(Behaviors.setup(c -> new Node(c, id)));
            }
            for (int i = 0; i < n; i++) {
                ring[i].tell(new Data(ring[(i + 1) % n]));
            }
            ring[0].tell(new Ping(r));
            return Behaviors.empty();
        });
    }

    private final class Node extends AbstractBehavior<RingMsg> {
        private final int id;
        private ActorRef<RingMsg> next;
        private int received;

        Node(ActorContext<RingMsg> ctx, int id) {
            super(ctx);
            this.id = id;
        }

        @Override
        public Receive<RingMsg> createReceive() {
            return newReceiveBuilder()
                    .onMessage(Ping.class, this::onPing)
                    .onMessage(Exit.class, this::onExit)
                    .onMessage(Data.class, m -> {
                        next = m.next();
                        return this;
                    })
                    .build();
        }

        private Behavior<RingMsg> onPing(Ping m) {
            received++;
            if (m.pingsLeft() > 0) {
                next.tell(new Ping(m.pingsLeft() - 1));
            } else {
                next.tell(new Exit(n));
            }
            return this;
        }

        private Behavior<RingMsg> onExit(Exit m) {
            if (m.exitsLeft() > 0) {
                next.tell(new Exit(m.exitsLeft() - 1));
            }
            pings[id] = received;
            return Behaviors.stopped(exited::countDown);
        }
    }

    @Override
    public Check validate() {
        long total = 0;
        for (int p : pings) {
            total += p;
        }
        return Check.eq("ping deliveries", total, (long) r + 1)
                .and(Check.ok("all " + n + " actors exited"));
    }
}
