package dev.odeon.bench.remote.pekko;

import org.apache.pekko.actor.typed.ActorRef;

/**
 * The messages that cross the wire. The one-way messages of the throughput benchmark and the
 * replies of the rtt benchmark are plain {@code java.lang.Long}s, serialized by Pekko's built-in
 * primitive {@code LongSerializer}; the messages that carry an {@code ActorRef} are records bound
 * to Pekko's Jackson CBOR serializer through {@link CborSerializable} (see {@code Main.CONFIG}).
 */
public final class Protocol {
    private Protocol() {}

    /** Marker interface bound to {@code jackson-cbor} in the configuration. */
    public interface CborSerializable {}

    /** rtt request: the server replies {@code value} (a {@code Long}) to {@code replyTo}. */
    public record Request(long value, ActorRef<Long> replyTo) implements CborSerializable {}

    /** throughput "done?": the server replies once it has counted {@code expected} numbers. */
    public record Done(long expected, ActorRef<Counted> replyTo) implements CborSerializable {}

    /** The reply to {@link Done}: how many numbers the server counted in the pass, and their sum. */
    public record Counted(long count, long sum) implements CborSerializable {}
}
