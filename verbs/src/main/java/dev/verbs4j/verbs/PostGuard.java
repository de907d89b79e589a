package dev.verbs4j.verbs;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Makes the posts of one work request batch exclusive: a shared batch is taken with one
 * compare-and-set for the duration of a post, so that two threads never cut and restore its
 * chain at once, filling it meanwhile is refused, and so is closing it: the guard, not the
 * arena, keeps a shared batch's memory alive while the provider reads it (see {@link
 * WorkRequestChain}). A confined batch needs none of this: its memory refuses every other thread
 * already. Owns nothing.
 */
final class PostGuard {

    private static final VarHandle POSTING;

    static {
        try {
            POSTING = MethodHandles.lookup().findVarHandle(PostGuard.class, "posting", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static final int FREE = 0;
    private static final int TAKEN = 1;
    private static final int CLOSED = 2;

    private final boolean confined;
    /** FREE, TAKEN by a post, or CLOSED for good. */
    @SuppressWarnings("unused") // through POSTING
    private volatile int posting;

    PostGuard(boolean confined) {
        this.confined = confined;
    }

    /** Takes the batch for a post. */
    void begin(Object batch) {
        if (!confined) {
            int was = (int) POSTING.compareAndExchange(this, FREE, TAKEN);
            if (was != FREE) {
                throw was == CLOSED ? new IllegalStateException(batch.getClass().getSimpleName() + " is closed")
                        : new IllegalStateException(batch.getClass().getSimpleName()
                        + " is being posted by another thread: a batch is filled and posted by one thread at a time");
            }
        }
    }

    /** Gives the batch back after a post. */
    void end() {
        if (!confined) {
            POSTING.setRelease(this, FREE);
        }
    }

    /**
     * Takes the batch for good before its memory is freed: refused while another thread posts it
     * (the provider may be reading the memory); a post after it is refused.
     */
    void close(Object batch) {
        if (!confined && (int) POSTING.compareAndExchange(this, FREE, CLOSED) == TAKEN) {
            throw new IllegalStateException(batch.getClass().getSimpleName()
                    + " is being posted by another thread: close it once the post has returned");
        }
    }

    /** Refuses to fill a batch while another thread posts it. */
    void checkNotPosting(Object batch) {
        if (!confined && (int) POSTING.getAcquire(this) == TAKEN) {
            throw new IllegalStateException(batch.getClass().getSimpleName()
                    + " is being posted by another thread: a batch is filled and posted by one thread at a time");
        }
    }
}
