package dev.odeon.bench.remote.pekko;

import dev.odeon.bench.remote.pekko.Protocol.Counted;
import dev.odeon.bench.remote.pekko.Protocol.Done;
import dev.odeon.bench.remote.pekko.Protocol.Request;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

/**
 * The server actor (the guardian of the server's ActorSystem, path {@code /user}). Its message
 * type is {@code Object} because the one-way numbers are bare {@code java.lang.Long}s (so that
 * they use Pekko's primitive serializer rather than a wrapper record).
 */
final class Server extends AbstractBehavior<Object> {
    private long count;
    private long sum;
    private Done pending;

    static Behavior<Object> create() {
        return Behaviors.setup(Server::new);
    }

    private Server(ActorContext<Object> context) {
        super(context);
    }

    @Override
    public Receive<Object> createReceive() {
        return newReceiveBuilder()
                .onMessage(Long.class, this::onNumber)
                .onMessage(Request.class, this::onRequest)
                .onMessage(Done.class, this::onDone)
                .build();
    }

    private Behavior<Object> onNumber(Long n) {
        count++;
        sum += n;
        if (pending != null && count >= pending.expected()) {
            reply();
        }
        return this;
    }

    private Behavior<Object> onRequest(Request r) {
        r.replyTo().tell(r.value());
        return this;
    }

    // The reply waits until all the expected numbers have arrived (the done? request may
    // overtake numbers sent from another thread); the client checks count and sum.
    private Behavior<Object> onDone(Done d) {
        pending = d;
        if (count >= d.expected()) {
            reply();
        }
        return this;
    }

    private void reply() {
        pending.replyTo().tell(new Counted(count, sum));
        pending = null;
        count = 0;
        sum = 0;
    }
}
