package dev.odeon.bench.pekko;

import java.util.concurrent.CountDownLatch;

import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

/**
 * Chameneos (savina.md §3.7): C chameneos meet in pairs through one Mall (many-to-one contention
 * on the Mall's mailbox) until the Mall has arranged M meetings.
 */
final class Chameneos implements Bench {

    enum Colour {
        RED, YELLOW, BLUE, FADED;

        /** The complement rule of §3.7. */
        Colour complement(Colour other) {
            if (this == FADED || other == FADED) {
                return FADED;
            }
            if (this == other) {
                return this;
            }
            // Two different non-faded colours give the third one (their ordinals sum to 3 - third).
            return values()[3 - ordinal() - other.ordinal()];
        }
    }

    /** What the Mall receives. */
    sealed interface MallMsg permits Meet, MeetingCount {}

    /** What a chameneo receives. */
    sealed interface ChameneoMsg permits Meet, Change, Exit {}

    /** Sent by a chameneo to the Mall, and forwarded unchanged by the Mall to its partner. */
    record Meet(Colour colour, ActorRef<ChameneoMsg> sender) implements MallMsg, ChameneoMsg {}

    record Change(Colour colour, ActorRef<ChameneoMsg> sender) implements ChameneoMsg {}

    record MeetingCount(int count, ActorRef<ChameneoMsg> sender) implements MallMsg {}

    record Exit(ActorRef<MallMsg> sender) implements ChameneoMsg {}

    private final int c;
    private final int m;
    private CountDownLatch exited;
    /** Written by the Mall before it stops. */
    private long meetingsSum = -1;
    private int faded;

    Chameneos(int c, int m) {
        this.c = c;
        this.m = m;
    }

    @Override
    public int actors() {
        return c + 1;
    }

    @Override
    public Behavior<Void> guardian(CountDownLatch exited) {
        this.exited = exited;
        return Behaviors.setup(ctx -> {
            ctx.spawnAnonymous(Behaviors.setup(Mall::new));
            return Behaviors.empty();
        });
    }

    private final class Mall extends AbstractBehavior<MallMsg> {
        private int meetingsLeft = m;
        private ActorRef<ChameneoMsg> waiting;
        private long sum;
        private int fadedCount;

        /** The Mall creates and starts the chameneos when it starts (§3.7 step 1). */
        Mall(ActorContext<MallMsg> ctx) {
            super(ctx);
            ActorRef<MallMsg> self = ctx.getSelf();
            Colour[] colours = Colour.values();
            for (int i = 0; i < c; i++) {
                Colour colour = colours[i % 3];
                ctx.spawnAnonymous(
                        Behaviors.<ChameneoMsg>setup(cc -> new Chameneo(cc, self, colour)));
            }
        }

        @Override
        public Receive<MallMsg> createReceive() {
            return newReceiveBuilder()
                    .onMessage(Meet.class, this::onMeet)
                    .onMessage(MeetingCount.class, this::onCount)
                    .build();
        }

        private Behavior<MallMsg> onMeet(Meet meet) {
            if (meetingsLeft > 0) {
                if (waiting == null) {
                    waiting = meet.sender();
                } else {
                    meetingsLeft--;
                    waiting.tell(meet);
                    waiting = null;
                }
            } else {
                meet.sender().tell(new Exit(getContext().getSelf()));
            }
            return this;
        }

        private Behavior<MallMsg> onCount(MeetingCount count) {
            sum += count.count();
            fadedCount++;
            if (fadedCount == c) {
                meetingsSum = sum;
                faded = fadedCount;
                return Behaviors.stopped(exited::countDown);
            }
            return this;
        }
    }

    private final class Chameneo extends AbstractBehavior<ChameneoMsg> {
        private final ActorRef<MallMsg> mall;
        private Colour colour;
        private int meetings;

        /** A chameneo announces itself to the Mall when it starts. */
        Chameneo(ActorContext<ChameneoMsg> ctx, ActorRef<MallMsg> mall, Colour colour) {
            super(ctx);
            this.mall = mall;
            this.colour = colour;
            mall.tell(new Meet(colour, ctx.getSelf()));
        }

        @Override
        public Receive<ChameneoMsg> createReceive() {
            return newReceiveBuilder()
                    .onMessage(Meet.class, this::onMeet)
                    .onMessage(Change.class, this::onChange)
                    .onMessage(Exit.class, this::onExit)
                    .build();
        }

        private Behavior<ChameneoMsg> onMeet(Meet meet) {
            ActorRef<ChameneoMsg> self = getContext().getSelf();
            colour = colour.complement(meet.colour());
            meetings++;
            meet.sender().tell(new Change(colour, self));
            mall.tell(new Meet(colour, self));
            return this;
        }

        private Behavior<ChameneoMsg> onChange(Change change) {
            colour = change.colour();
            meetings++;
            mall.tell(new Meet(colour, getContext().getSelf()));
            return this;
        }

        private Behavior<ChameneoMsg> onExit(Exit exit) {
            colour = Colour.FADED;
            exit.sender().tell(new MeetingCount(meetings, getContext().getSelf()));
            return Behaviors.stopped(exited::countDown);
        }
    }

    @Override
    public Check validate() {
        return Check.eq("sum of meetings", meetingsSum, 2L * m).and(Check.eq("faded", faded, c));
    }
}
