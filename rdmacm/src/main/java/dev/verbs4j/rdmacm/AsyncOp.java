package dev.verbs4j.rdmacm;

import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;

/**
 * A future of an {@link RdmaConnection} operation (a send, a receive, a buffer operation). While
 * it waits in its queue (under the connection's lock), a cancel, a timeout or an outside
 * completion takes it out; once the connection took it, they return false and the connection
 * completes it, outside its lock ({@link Waiters#deliverLater}). Holds a waiting send's copy of
 * its message and a buffer operation's request.
 */
final class AsyncOp<T> extends CompletableFuture<T> {

    private final Waiters waiters;
    /** A waiting send's copy of its message. */
    byte[] message;
    /** A buffer operation's request. */
    BufferOperation operation;
    /** The queue the future waits in, or null once the connection took it (guarded by the lock). */
    private ArrayDeque<AsyncOp<T>> queue;

    AsyncOp(Waiters waiters) {
        this.waiters = waiters;
    }

    /** Appends the future to {@code q}, where it waits (under the lock). */
    void queueIn(ArrayDeque<AsyncOp<T>> q) {
        queue = q;
        q.addLast(this);
    }

    /** The connection took the future out of its queue (under the lock): no cancel reaches it any more. */
    void taken() {
        queue = null;
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        return withdraw() && super.cancel(mayInterruptIfRunning);
    }

    @Override
    public boolean completeExceptionally(Throwable ex) {
        return withdraw() && super.completeExceptionally(ex);
    }

    @Override
    public boolean complete(T value) {
        return withdraw() && super.complete(value);
    }

    @Override
    public <U> CompletableFuture<U> newIncompleteFuture() {
        return new CompletableFuture<>();
    }

    /** Takes this operation out of its queue; false when the connection took it already. */
    private boolean withdraw() {
        waiters.lock.lock();
        try {
            if (queue == null) {
                return false;
            }
            queue.remove(this);
            queue = null;
            message = null;
            return true;
        } finally {
            waiters.lock.unlock();
        }
    }

    /** Completes a future nobody has seen yet (no callbacks to run); returns it. */
    AsyncOp<T> finishNow(T value) {
        super.complete(value);
        return this;
    }

    AsyncOp<T> failNow(Throwable failure) {
        super.completeExceptionally(failure);
        return this;
    }

    /** Taken by the connection (under the lock): completed with {@code value} once the lock is released. */
    void finishLater(T value) {
        queue = null;
        message = null;
        waiters.deliverLater(() -> super.complete(value));
    }

    void failLater(Throwable failure) {
        queue = null;
        message = null;
        waiters.deliverLater(() -> super.completeExceptionally(failure));
    }
}
