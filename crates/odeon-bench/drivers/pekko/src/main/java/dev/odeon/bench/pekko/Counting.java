package dev.odeon.bench.pekko;

import java.util.concurrent.CountDownLatch;

import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

/**
 * Counting Actor (savina.md §3.3): inside one handler the Producer sends N {@code Increment}s
 * back to back, then {@code Retrieve}; the Counter's mailbox grows behind it.
 */
final class Counting implements Bench {

    /** What the Producer receives. */
    sealed interface ProducerMsg permits Go, Result {}

    /** What the Counter receives. */
    sealed interface CounterMsg permits Increment, Retrieve {}

    /** The driver's {@code Increment} to the Producer: start sending. */
    enum Go implements ProducerMsg { INSTANCE }

    record Result(int count) implements ProducerMsg {}

    enum Increment implements CounterMsg { INSTANCE }

    record Retrieve(ActorRef<ProducerMsg> sender) implements CounterMsg {}

    private final int n;
    private CountDownLatch exited;
    /** The count the Counter replied with, written by the Producer before it stops. */
    private long counted = -1;

    Counting(int n) {
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
            ActorRef<CounterMsg> counter = ctx.spawnAnonymous(Behaviors.setup(CounterActor::new));
            ActorRef<ProducerMsg> producer =
                    ctx.spawnAnonymous(Behaviors.setup(c -> new ProducerActor(c, counter)));
            producer.tell(Go.INSTANCE);
            return Behaviors.empty();
        });
    }

    private final class ProducerActor extends AbstractBehavior<ProducerMsg> {
        private final ActorRef<CounterMsg> counter;

        ProducerActor(ActorContext<ProducerMsg> ctx, ActorRef<CounterMsg> counter) {
            super(ctx);
            this.counter = counter;
        }

        @Override
        public Receive<ProducerMsg> createReceive() {
            return newReceiveBuilder()
                    .onMessage(Go.class, m -> {
                        for (int i = 0; i < n; i++) {
                            counter.tell(Increment.INSTANCE);
                        }
                        counter.tell(new Retrieve(getContext().getSelf()));
                        return this;
                    })
                    .onMessage(Result.class, m -> {
                        counted = m.count();
                        return Behaviors.stopped(exited::countDown);
                    })
                    .build();
        }
    }

    private final class CounterActor extends AbstractBehavior<CounterMsg> {
        private int count;

        CounterActor(ActorContext<CounterMsg> ctx) {
            super(ctx);
        }

        @Override
        public Receive<CounterMsg> createReceive() {
            return newReceiveBuilder()
                    .onMessage(Increment.class, m -> {
                        count++;
                        return this;
                    })
                    .onMessage(Retrieve.class, m -> {
                        m.sender().tell(new Result(count));
                        return Behaviors.stopped(exited::countDown);
                    })
                    .build();
        }
    }

    @Override
    public Check validate() {
        return Check.eq("count", counted, n);
    }
}
