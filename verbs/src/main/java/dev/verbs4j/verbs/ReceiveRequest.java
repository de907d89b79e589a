package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_sge;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A view of one {@code struct ibv_recv_wr} in a {@link ReceiveRequests} batch, written in place;
 * the batch remembers the regions it names and checks them when it is posted. Owns no memory.
 */
public final class ReceiveRequest {

    private static final long SGE_ADDR = ibv_sge.addr$offset();
    private static final long SGE_LENGTH = ibv_sge.length$offset();
    private static final long SGE_LKEY = ibv_sge.lkey$offset();

    private final ReceiveRequests batch;
    private final MemorySegment wrs;
    private final MemorySegment sges;
    private final int maxSge;
    private int index;
    private long base;
    private long sgeBase;

    ReceiveRequest(ReceiveRequests batch, MemorySegment wrs, MemorySegment sges, int maxSge) {
        this.batch = batch;
        this.wrs = wrs;
        this.sges = sges;
        this.maxSge = maxSge;
    }

    ReceiveRequest moveTo(int index) {
        this.index = index;
        base = index * ReceiveRequests.WR_SIZE;
        sgeBase = (long) index * maxSge * ReceiveRequests.SGE_SIZE;
        return this;
    }

    /** Sets the id reported back in the work completion. */
    public ReceiveRequest wrId(long id) {
        batch.checkNotPosting();
        wrs.set(ValueLayout.JAVA_LONG, base + ReceiveRequests.WR_ID, id);
        return this;
    }

    /**
     * Sets scatter entry {@code index} to {@code length} bytes at {@code offset} in {@code mr} and
     * the entry count to {@code index + 1}.
     */
    public ReceiveRequest sge(int index, MemoryRegion mr, long offset, int length) {
        if (index < 0 || index >= maxSge) {
            throw new IndexOutOfBoundsException("scatter entry " + index + ": this batch has " + maxSge + " per request");
        }
        if (mr.isClosed()) {
            throw new IllegalStateException(mr + " is closed");
        }
        if (!mr.covers(offset, Integer.toUnsignedLong(length))) {
            throw SendRequest.outside(mr, offset, length);
        }
        batch.checkNotPosting();
        batch.region(this.index, index, mr);
        long at = sgeBase + index * ReceiveRequests.SGE_SIZE;
        sges.set(ValueLayout.JAVA_LONG, at + SGE_ADDR, mr.address() + offset);
        sges.set(ValueLayout.JAVA_INT, at + SGE_LENGTH, length);
        sges.set(ValueLayout.JAVA_INT, at + SGE_LKEY, mr.lkey());
        wrs.set(ValueLayout.JAVA_INT, base + ReceiveRequests.NUM_SGE, index + 1);
        batch.sgeCount(this.index, index + 1);
        return this;
    }

    /** Sets the single scatter entry to {@code length} bytes at {@code offset} in {@code mr}. */
    public ReceiveRequest sge(MemoryRegion mr, long offset, int length) {
        return sge(0, mr, offset, length);
    }

    /** Sets no scatter entry at all (for receives that only take immediate data). */
    public ReceiveRequest noSge() {
        batch.checkNotPosting();
        wrs.set(ValueLayout.JAVA_INT, base + ReceiveRequests.NUM_SGE, 0);
        batch.sgeCount(index, 0);
        return this;
    }
}
