package dev.verbs4j.verbs;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Makes the posts of one work request batch exclusive: a shared batch is taken with one
 * compare-and-set for the duration of a post, so that two threads never cut and restore its
 * chain at once, and filling it meanwhile is refused. A confined batch needs none of this: its
 * memory refuses every other thread already. Owns nothing.
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

    private final boolean confined;
    @SuppressWarnings("unused") // through POSTING
    private volatile int posting;

    PostGuard(boolean confined) {
        this.confined = confined;
    }

    /** Takes the batch for a post. */
    void begin(Object batch) {
        if (!confined && !POSTING.compareAndSet(this, 0, 1)) {
            throw new IllegalStateException(batch.getClass().getSimpleName()
                    + " is being posted by another thread: a batch is filled and posted by one thread at a time");
        }
    }

    /** Gives the batch back after a post. */
    void end() {
        if (!confined) {
            POSTING.setRelease(this, 0);
        }
    }

    /** Refuses to fill a batch while another thread posts it. */
    void checkNotPosting(Object batch) {
        if (!confined && (int) POSTING.getAcquire(this) != 0) {
            throw new IllegalStateException(batch.getClass().getSimpleName()
                    + " is being posted by another thread: a batch is filled and posted by one thread at a time");
        }
    }
}
