package dev.odeon.bench.remote.pekko;

import dev.odeon.bench.remote.pekko.Protocol.Request;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorRefResolver;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

/**
 * The rtt client actor (the guardian of the client's ActorSystem): on {@link Run} it sends
 * {@code rounds} requests to the server one at a time, timing each from just before the send
 * to the receipt of the reply, and completes the run's future with the times in nanoseconds.
 */
final class Client extends AbstractBehavior<Object> {
    /** A local message from the main thread (never serialized). */
    record Run(int rounds, CompletableFuture<long[]> result) {}

    private final ActorRef<Object> server;
    private final ActorRef<Long> self;
    private long[] times;
    private int done;
    private long started;
    private CompletableFuture<long[]> result;

    static Behavior<Object> create(String serverPath) {
        return Behaviors.setup(ctx -> new Client(ctx, serverPath));
    }

    private Client(ActorContext<Object> context, String serverPath) {
        super(context);
        this.server = ActorRefResolver.get(context.getSystem()).resolveActorRef(serverPath);
        this.self = context.getSelf().narrow();
    }

    @Override
    public Receive<Object> createReceive() {
        return newReceiveBuilder()
                .onMessage(Long.class, this::onReply)
                .onMessage(Run.class, this::onRun)
                .build();
    }

    private Behavior<Object> onRun(Run run) {
        times = new long[run.rounds()];
        done = 0;
        result = run.result();
        if (times.length == 0) {
            result.complete(times);
        } else {
            send();
        }
        return this;
    }

    private void send() {
        started = System.nanoTime();
        server.tell(new Request(done + 1, self));
    }

    private Behavior<Object> onReply(Long value) {
        long now = System.nanoTime();
        if (result == null || result.isDone()) {
            return this; // nothing outstanding: ignore (cannot happen in a correct run)
        }
        if (value != done + 1) {
            result.completeExceptionally(new IllegalStateException(
                    "rtt: expected reply " + (done + 1) + ", got " + value));
            return this;
        }
        times[done++] = now - started;
        if (done == times.length) {
            result.complete(times);
        } else {
            send();
        }
        return this;
    }
}
