package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_recv_wr;

import java.lang.foreign.MemorySegment;

/**
 * A view of one {@code struct ibv_recv_wr} in a {@link ReceiveRequests} batch, written in place;
 * the batch remembers the regions it names and checks them when it is posted. Owns no memory.
 */
public final class ReceiveRequest extends WorkRequest {

    /** The zeros {@link #clear()} copies over a request. */
    private static final MemorySegment ZEROS = MemorySegment.ofArray(new byte[(int) ibv_recv_wr.sizeof()]);

    private final ReceiveRequests batch;

    ReceiveRequest(ReceiveRequests batch) {
        super(batch);
        this.batch = batch;
    }

    ReceiveRequest moveTo(int index) {
        position(index);
        return this;
    }

    ReceiveRequest clear() {
        clearFields(ZEROS);
        return this;
    }

    /** Sets the id reported back in the work completion. */
    public ReceiveRequest wrId(long id) {
        batch.checkNotPosting();
        writeWrId(id);
        return this;
    }

    /**
     * Sets scatter entry {@code index} to {@code length} bytes at {@code offset} in {@code mr} and
     * the entry count to {@code index + 1}.
     *
     * @throws IndexOutOfBoundsException when the range is outside the region or index is not below maxSge
     * @throws IllegalStateException when the region's memory is no longer alive
     */
    public ReceiveRequest sge(int index, MemoryRegion mr, long offset, int length) {
        writeSge(index, mr, offset, length);
        return this;
    }

    /** Sets the single scatter entry to {@code length} bytes at {@code offset} in {@code mr}. */
    public ReceiveRequest sge(MemoryRegion mr, long offset, int length) {
        return sge(0, mr, offset, length);
    }

    /** Sets no scatter entry at all (for receives that only take immediate data). */
    public ReceiveRequest noSge() {
        batch.checkNotPosting();
        writeSgeCount(0);
        return this;
    }
}
