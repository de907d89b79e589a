package dev.verbs4j.verbs;

import java.time.Duration;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * A virtual thread that takes the asynchronous events of a {@link Context} and hands each to a
 * handler, until closed or until the context closes; it waits parked, holding no OS thread. Owns
 * its thread, no native memory.
 */
public final class AsyncEventListener implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(AsyncEventListener.class.getName());

    private final Context context;
    private final Consumer<AsyncEvent> handler;
    private final Thread thread;
    private volatile boolean stopped;

    private AsyncEventListener(Context context, Consumer<AsyncEvent> handler) {
        this.context = context;
        this.handler = handler;
        this.thread = Thread.ofVirtual().name("verbs4j-async-" + context.name()).unstarted(this::run);
    }

    /** Starts listening to {@code context}'s events; {@code handler} runs on the listener's (virtual) thread. */
    public static AsyncEventListener start(Context context, Consumer<AsyncEvent> handler) {
        AsyncEventListener l = new AsyncEventListener(Objects.requireNonNull(context), Objects.requireNonNull(handler));
        l.thread.start();
        return l;
    }

    private void run() {
        while (!stopped && !context.isClosed()) {
            AsyncEvent event;
            try {
                event = context.awaitAsyncEvent(Duration.ofMillis(200));
            } catch (IllegalStateException closed) {
                return;
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "reading asynchronous events of " + context.name() + " failed", e);
                return;
            }
            if (event != null) {
                try {
                    handler.accept(event);
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "asynchronous event handler failed on " + event, e);
                }
            }
        }
    }

    /** Whether the listener thread is still running. */
    public boolean isRunning() {
        return thread.isAlive();
    }

    /** Stops the listener and waits (up to 5 s) for its thread to end. */
    @Override
    public void close() {
        stopped = true;
        try {
            thread.join(Duration.ofSeconds(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
