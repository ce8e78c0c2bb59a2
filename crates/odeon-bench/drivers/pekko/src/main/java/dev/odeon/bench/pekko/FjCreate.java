package dev.odeon.bench.pekko;

import java.util.concurrent.CountDownLatch;

import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * Fork-Join Actor Creation (savina.md §3.5): the driver creates N actors one after another and
 * sends each one message; each does the sin² work unit and stops.
 */
final class FjCreate implements Bench {

    /** The one message each actor gets. */
    enum Msg { INSTANCE }

    private final int n;
    /** Messages each actor handled (must be exactly 1), written by that actor. */
    private final byte[] handled;

    FjCreate(int n) {
        this.n = n;
        this.handled = new byte[n];
    }

    @Override
    public int actors() {
        return n;
    }

    @Override
    public Behavior<Void> guardian(CountDownLatch exited) {
        return Behaviors.setup(ctx -> {
            for (int i = 0; i < n; i++) {
                int id = i;
                // A one-message actor: the functional style needs no class and no state.
                ActorRef<Msg> actor = ctx.spawnAnonymous(Behaviors.receive((c, m) -> {
                    Work.sinSquared();
                    handled[id]++;
                    return Behaviors.stopped(exited::countDown);
                }));
                actor.tell(Msg.INSTANCE);
            }
            return Behaviors.empty();
        });
    }

    @Override
    public Check validate() {
        for (int i = 0; i < n; i++) {
            if (handled[i] != 1) {
                return Check.err("actor " + i + " handled " + handled[i] + " messages, expected 1");
            }
        }
        return Check.ok(n + " actors, one message each");
    }
}
