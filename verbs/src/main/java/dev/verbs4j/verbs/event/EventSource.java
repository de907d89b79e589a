package dev.verbs4j.verbs.event;

/**
 * Something whose file descriptor is readable while an event is pending: a {@link
 * dev.verbs4j.verbs.CompletionChannel}, a connection manager's event channel. Lets a caller wait
 * on the channels themselves ({@link Readiness#awaitAny}) rather than on raw descriptors. The
 * descriptor belongs to the source.
 */
public interface EventSource {

    /** The descriptor, readable while an event is pending (valid until the source is closed). */
    int fd();
}
