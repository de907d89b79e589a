package dev.verbs4j.vipl;

import java.lang.foreign.MemorySegment;

/**
 * One descriptor on a work queue, from post to dequeue: the library's record of it, no memory of
 * its own. Each work queue reuses its records once dequeued ({@link #reset}), so that posting
 * allocates nothing.
 */
final class Posted {

    /** A view of the descriptor's memory, pointed again at each reuse. */
    final VipDescriptor descriptor = VipDescriptor.empty();
    long seq;
    int handle;
    /** The descriptor's operation: a {@code VipControl.OP_*} value. */
    int op;
    /** Σ data segment lengths (what a completed send-queue descriptor reports as Length). */
    long dataLength;
    /** Whether it was handed to the verbs queue pair (not yet completed through it). */
    boolean inVerbs;
    boolean done;
    /**
     * A receive handed to the queue pair without its data segments because a region they use was
     * deregistered (or moved to another tag) after it was posted: whatever error it completes
     * with is a protection error (§3.2.1).
     */
    boolean regionGone;
    /** Its memory (the descriptor's arena) was closed while it was queued: nothing can be written back. */
    boolean memoryGone;

    /** Makes this record the one of the descriptor at {@code memory}, posted as number {@code seq}. */
    void reset(MemorySegment memory, long seq, int handle) {
        descriptor.point(memory);
        this.seq = seq;
        this.handle = handle;
        op = 0;
        dataLength = 0;
        inVerbs = false;
        done = false;
        regionGone = false;
        memoryGone = false;
    }
}
