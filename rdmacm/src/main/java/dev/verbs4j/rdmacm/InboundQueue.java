package dev.verbs4j.rdmacm;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;

/**
 * One stream of what arrives on an {@link RdmaConnection}, in order (messages in the ring,
 * writes with immediate, messages in posted buffers), with the futures that wait for it: taken by
 * a blocking call or a future, null once the peer disconnected and everything was taken. What
 * taking an item does (copy it out, post its receive again) is the {@link Taker}'s. Not
 * thread-safe: the connection's lock guards it. Owns no memory.
 *
 * @param <T> what arrived
 * @param <R> what a taker gets
 */
final class InboundQueue<T, R> {

    /** Turns an item that was taken out of the queue into the caller's result. */
    interface Taker<T, R> {
        R take(T item);
    }

    private final ArrayDeque<T> items = new ArrayDeque<>();
    private final ArrayDeque<AsyncOp<R>> waiting = new ArrayDeque<>();
    /**
     * What the messages say: the blocking call's name ("receive"), what its timeout says is
     * missing ("message"), and the refusal when too many futures wait ("futures already wait (at
     * most receiveDepth)").
     */
    record Texts(String call, String missing, String tooMany) {
    }

    private final Lifecycle life;
    private final Waiters waiters;
    private final Taker<T, R> taker;
    private final Texts texts;
    private final int maxWaiting;

    InboundQueue(Lifecycle life, Waiters waiters, Taker<T, R> taker, Texts texts, int maxWaiting) {
        this.life = life;
        this.waiters = waiters;
        this.taker = taker;
        this.texts = texts;
        this.maxWaiting = maxWaiting;
    }

    void add(T item) {
        items.addLast(item);
    }

    T peek() {
        return items.peekFirst();
    }

    T poll() {
        return items.pollFirst();
    }

    int size() {
        return items.size();
    }

    /** Empties the queue, handing each item to {@code release} (on release of the connection). */
    void clear(java.util.function.Consumer<T> release) {
        for (T item : items) {
            release.accept(item);
        }
        items.clear();
    }

    /** The next item, taken, or null at end of stream; throws when closed or broken. Waits up to {@code timeout}. */
    R receive(Duration timeout) throws RdmaConnectionException {
        long deadline = waiters.enter(timeout);
        try {
            while (true) {
                waiters.progress();
                life.checkNotClosed(texts.call());
                T head = items.pollFirst();
                if (head != null) {
                    return taker.take(head);
                }
                if (life.endOfStream(texts.call())) {
                    return null;
                }
                if (!waiters.await(deadline)) {
                    throw new RdmaTimeoutException(texts.call() + ": no " + texts.missing() + " within " + timeout);
                }
            }
        } finally {
            waiters.leave();
        }
    }

    /** {@link #receive} as a future, completed in the order of the calls; refused beyond {@code maxWaiting}. */
    CompletableFuture<R> receiveAsync() {
        String what = texts.call() + "Async";
        AsyncOp<R> op = new AsyncOp<>(waiters);
        waiters.lock.lock();
        try {
            if (life.closing()) {
                return op.failNow(RdmaConnectionException.closed(what));
            }
            if (waiting.size() >= maxWaiting) {
                return op.failNow(new IllegalStateException(what + ": " + waiting.size() + " " + texts.tooMany()
                        + "; wait for one first"));
            }
            op.queueIn(waiting);
            waiters.progress();
            waiters.serveAsync();
        } finally {
            waiters.unlockAndDeliver();
        }
        return op;
    }

    /** Completes the waiting futures as far as items, the end of the stream, a failure or close allow. */
    void serve() {
        String what = texts.call() + "Async";
        while (!waiting.isEmpty()) {
            if (life.closing()) {
                waiting.pollFirst().failLater(RdmaConnectionException.closed(what));
            } else if (!items.isEmpty()) {
                waiting.pollFirst().finishLater(taker.take(items.pollFirst()));
            } else if (life.state() == Lifecycle.State.PEER_CLOSED) {
                waiting.pollFirst().finishLater(null);
            } else if (life.state() == Lifecycle.State.FAILED) {
                waiting.pollFirst().failLater(life.failure(what));
            } else {
                break;
            }
        }
    }

    boolean futuresWait() {
        return !waiting.isEmpty();
    }
}
