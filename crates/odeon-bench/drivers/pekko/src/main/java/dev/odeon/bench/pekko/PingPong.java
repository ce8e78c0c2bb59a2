package dev.odeon.bench.pekko;

import java.util.concurrent.CountDownLatch;

import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

/**
 * Ping Pong (savina.md §3.1): N strictly sequential request/reply round trips between two actors;
 * Ping sends its next request through its own mailbox.
 */
final class PingPong implements Bench {

    /** What Ping receives. */
    sealed interface PingMsg permits Start, Ping, SendPong {}

    /** What Pong receives. */
    sealed interface PongMsg permits SendPing, Stop {}

    enum Start implements PingMsg { INSTANCE }

    /** Ping's note to itself: send the next request. */
    enum Ping implements PingMsg { INSTANCE }

    record SendPong(ActorRef<PongMsg> sender) implements PingMsg {}

    record SendPing(ActorRef<PingMsg> sender) implements PongMsg {}

    enum Stop implements PongMsg { INSTANCE }

    private final int n;
    private CountDownLatch exited;
    /** Replies Ping received, written by Ping before it stops. */
    private int pongsReceived;
    /** Requests Pong answered, written by Pong before it stops. */
    private int pingsAnswered;

    PingPong(int n) {
        this.n = n;
    }

    @Override
    public int actors() {
        return 2;
    }

    @Override
    public Behavior<Void> guardian(CountDownLatch exited) {
        this.exited = exited;
        return Behaviors.setup(ctx -> {
            ActorRef<PongMsg> pong = ctx.spawnAnonymous(Behaviors.setup(PongActor::new));
            ActorRef<PingMsg> ping = ctx.spawnAnonymous(Behaviors.setup(c -> new PingActor(c, pong)));
            ping.tell(Start.INSTANCE);
            return Behaviors.empty();
        });
    }

    private final class PingActor extends AbstractBehavior<PingMsg> {
        private final ActorRef<PongMsg> pong;
        private int pingsLeft = n;
        private int received;

        PingActor(ActorContext<PingMsg> ctx, ActorRef<PongMsg> pong) {
            super(ctx);
            this.pong = pong;
        }

        @Override
        public Receive<PingMsg> createReceive() {
            return newReceiveBuilder()
                    .onMessage(SendPong.class, m -> onPong())
                    .onMessage(Ping.class, m -> sendPing())
                    .onMessage(Start.class, m -> sendPing())
                    .build();
        }

        private Behavior<PingMsg> sendPing() {
            pong.tell(new SendPing(getContext().getSelf()));
            pingsLeft--;
            return this;
        }

        private Behavior<PingMsg> onPong() {
            received++;
            if (pingsLeft > 0) {
                getContext().getSelf().tell(Ping.INSTANCE);
                return this;
            }
            pong.tell(Stop.INSTANCE);
            pongsReceived = received;
            return Behaviors.stopped(exited::countDown);
        }
    }

    private final class PongActor extends AbstractBehavior<PongMsg> {
        private int count;

        PongActor(ActorContext<PongMsg> ctx) {
            super(ctx);
        }

        @Override
        public Receive<PongMsg> createReceive() {
            return newReceiveBuilder()
                    .onMessage(SendPing.class, this::onPing)
                    .onMessage(Stop.class, m -> {
                        pingsAnswered = count;
                        return Behaviors.stopped(exited::countDown);
                    })
                    .build();
        }

        private Behavior<PongMsg> onPing(SendPing m) {
            m.sender().tell(new SendPong(getContext().getSelf()));
            count++;
            return this;
        }
    }

    @Override
    public Check validate() {
        return Check.eq("round trips", pongsReceived, n)
                .and(Check.eq("pings answered by Pong", pingsAnswered, n));
    }
}
