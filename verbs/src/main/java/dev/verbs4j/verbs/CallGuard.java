package dev.verbs4j.verbs;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * The calls in flight on one verbs object's native object, and whether it is closed: a close
 * waits until the calls that started before it have ended, and a call that starts after it is an
 * {@link IllegalStateException} naming the object. The whole state is one int, the closed bit
 * beside the count of calls in flight, so that a call costs one atomic add. Owns no native memory.
 */
final class CallGuard {

    /** The bit that marks the object closed; the other bits count the calls in flight. */
    private static final int CLOSED = Integer.MIN_VALUE;
    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(CallGuard.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final NativeResource resource;
    private volatile int state;

    /** The guard of {@code resource}, named in its messages. */
    CallGuard(NativeResource resource) {
        this.resource = resource;
    }

    /**
     * Starts a call: from now until {@link #exit()} a close waits.
     *
     * @throws IllegalStateException when the object is closed
     */
    void enter() {
        if ((int) STATE.getAndAdd(this, 1) < 0) {
            STATE.getAndAdd(this, -1);
            throw closedFailure();
        }
    }

    /** Ends what {@link #enter()} started. */
    void exit() {
        STATE.getAndAdd(this, -1);
    }

    /** Whether the object is closed (its close has begun). */
    boolean isClosed() {
        return state < 0;
    }

    /** Throws {@link IllegalStateException} when the object is closed. */
    void ensureOpen() {
        if (isClosed()) {
            throw closedFailure();
        }
    }

    /** Marks the object closed: calls that start from now on fail. Returns whether this call marked it. */
    boolean close() {
        return ((int) STATE.getAndBitwiseOr(this, CLOSED) & CLOSED) == 0;
    }

    /** Waits until every call in flight has ended; once closed, no new one can start. */
    void awaitCalls() {
        int spins = 0;
        while ((state & ~CLOSED) != 0) {
            if (++spins < 100) {
                Thread.onSpinWait();
            } else if (spins < 1000) {
                Thread.yield();
            } else {
                LockSupport.parkNanos(50_000); // a long control-path call, such as registering a large region
            }
        }
    }

    /** The failure of a call on the closed object. */
    IllegalStateException closedFailure() {
        return new IllegalStateException(resource.describe() + " is closed");
    }
}
