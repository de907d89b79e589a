package dev.verbs4j.verbs;

import java.util.List;
import java.util.function.Function;

/**
 * A kind of object the misuse suite calls methods on: how to make one from a fresh fixture, and
 * the ways it can end up closed (closed itself, or its parent, a queue it depends on, its batch).
 *
 * @param name    for case names, e.g. {@code QueuePair[UD]}
 * @param type    the public class whose methods are called
 * @param make    makes the object from a fixture
 * @param closers the ways to close it
 */
record MisuseSubject(String name, Class<?> type, Function<MisuseFixture, Object> make, List<Closer> closers) {

    /**
     * One way to close a subject.
     *
     * @param name  for case names, e.g. {@code its protection domain}
     * @param close closes, given the fixture and the subject
     */
    record Closer(String name, Close close) {
    }

    /** Closes a subject or something it needs. */
    @FunctionalInterface
    interface Close {
        void close(MisuseFixture f, Object subject) throws Exception;
    }

    /** Closing the subject itself. */
    static Closer itself() {
        return new Closer("itself", (f, s) -> ((AutoCloseable) s).close());
    }

    /** Closing what {@code which} returns from the fixture. */
    static Closer via(String name, Function<MisuseFixture, AutoCloseable> which) {
        return new Closer(name, (f, s) -> which.apply(f).close());
    }
}
