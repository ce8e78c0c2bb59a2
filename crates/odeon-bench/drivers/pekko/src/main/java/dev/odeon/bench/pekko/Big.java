package dev.odeon.bench.pekko;

import java.util.List;
import java.util.concurrent.CountDownLatch;

import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

/**
 * Big (savina.md §3.8): W workers each ping random workers (their own {@code PseudoRandom}
 * seeded with their id) N times, waiting for each pong; a Sink collects their exits and then
 * stops them all.
 */
final class Big implements Bench {

    /** What a worker receives. */
    sealed interface WorkerMsg permits Neighbors, Ping, Pong, Exit {}

    /** What the Sink receives. */
    sealed interface SinkMsg permits Neighbors, Exit {}

    record Neighbors(List<ActorRef<WorkerMsg>> workers) implements WorkerMsg, SinkMsg {}

    record Ping(int senderId) implements WorkerMsg {}

    record Pong(int senderId) implements WorkerMsg {}

    enum Exit implements WorkerMsg, SinkMsg { INSTANCE }

    private final int n;
    private final int w;
    private CountDownLatch exited;
    /** Per worker, written by that worker before it stops. */
    private final int[] pingsSent;
    private final int[] pongsReceived;
    private final int[] mismatches;
    /** Exits the Sink received, written by the Sink before it stops. */
    private int sinkExits;

    Big(int n, int w) {
        this.n = n;
        this.w = w;
        this.pingsSent = new int[w];
        this.pongsReceived = new int[w];
        this.mismatches = new int[w];
    }

    @Override
    public int actors() {
        return w + 1;
    }

    @Override
    public Behavior<Void> guardian(CountDownLatch exited) {
        this.exited = exited;
        return Behaviors.setup(ctx -> {
            ActorRef<SinkMsg> sink = ctx.spawnAnonymous(Behaviors.setup(SinkActor::new));
            @SuppressWarnings({"unchecked", "rawtypes"})
            ActorRef<WorkerMsg>[] workers = new ActorRef[w];
            for (int i = 0; i < w; i++) {
                int id = i;
                workers[i] = ctx.spawnAnonymous(Behaviors.setup(c -> new Worker(c, id, sink)));
            }
            Neighbors all = new Neighbors(List.of(workers));
            sink.tell(all);
            for (ActorRef<WorkerMsg> worker : workers) {
                worker.tell(all);
            }
            for (ActorRef<WorkerMsg> worker : workers) {
                worker.tell(new Pong(-1));
            }
            return Behaviors.empty();
        });
    }

    private final class Worker extends AbstractBehavior<WorkerMsg> {
        private final int id;
        private final ActorRef<SinkMsg> sink;
        private final PseudoRandom random;
        private ActorRef<WorkerMsg>[] neighbors;
        private int expectedPinger = -1;
        private int pings;
        private int pongs;
        private int errors;

        Worker(ActorContext<WorkerMsg> ctx, int id, ActorRef<SinkMsg> sink) {
            super(ctx);
            this.id = id;
            this.sink = sink;
            this.random = new PseudoRandom(id);
        }

        @Override
        public Receive<WorkerMsg> createReceive() {
            return newReceiveBuilder()
                    .onMessage(Ping.class, this::onPing)
                    .onMessage(Pong.class, this::onPong)
                    .onMessage(Neighbors.class, this::onNeighbors)
                    .onMessage(Exit.class, m -> {
                        pingsSent[id] = pings;
                        pongsReceived[id] = pongs;
                        mismatches[id] = errors;
                        return Behaviors.stopped(exited::countDown);
                    })
                    .build();
        }

        @SuppressWarnings({"unchecked", "rawtypes"})
        private Behavior<WorkerMsg> onNeighbors(Neighbors m) {
            // An array: the hot path indexes it once per ping.
            neighbors = m.workers().toArray(new ActorRef[0]);
            return this;
        }

        private Behavior<WorkerMsg> onPing(Ping m) {
            neighbors[m.senderId()].tell(new Pong(id));
            return this;
        }

        private Behavior<WorkerMsg> onPong(Pong m) {
            if (m.senderId() != expectedPinger) {
                errors++;
                System.err.println("big: worker " + id + " expected a pong from " + expectedPinger
                        + " but got one from " + m.senderId());
            }
            if (m.senderId() >= 0) {
                pongs++;
            }
            if (pings == n) {
                sink.tell(Exit.INSTANCE);
            } else {
                int target = random.nextInt(w);
                expectedPinger = target;
                neighbors[target].tell(new Ping(id));
                pings++;
            }
            return this;
        }
    }

    private final class SinkActor extends AbstractBehavior<SinkMsg> {
        private List<ActorRef<WorkerMsg>> workers = List.of();
        private int exits;

        SinkActor(ActorContext<SinkMsg> ctx) {
            super(ctx);
        }

        @Override
        public Receive<SinkMsg> createReceive() {
            return newReceiveBuilder()
                    .onMessage(Neighbors.class, m -> {
                        workers = m.workers();
                        return this;
                    })
                    .onMessage(Exit.class, m -> {
                        exits++;
                        if (exits < w) {
                            return this;
                        }
                        for (ActorRef<WorkerMsg> worker : workers) {
                            worker.tell(Exit.INSTANCE);
                        }
                        sinkExits = exits;
                        return Behaviors.stopped(exited::countDown);
                    })
                    .build();
        }
    }

    @Override
    public Check validate() {
        long pings = 0;
        long pongs = 0;
        long errors = 0;
        for (int i = 0; i < w; i++) {
            pings += pingsSent[i];
            pongs += pongsReceived[i];
            errors += mismatches[i];
        }
        long expected = (long) w * n;
        return Check.eq("pings sent", pings, expected)
                .and(Check.eq("pongs received (" + w + " x " + n + " ping/pong pairs)", pongs, expected))
                .and(Check.eq("expected-pinger errors", errors, 0))
                .and(Check.eq("exits at the sink", sinkExits, w));
    }
}
