package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_recv_wr;
import dev.verbs4j.bindings.ibv_send_wr;
import dev.verbs4j.bindings.ibv_sge;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * What the send and receive request views share: the position of one request in its batch's
 * native arrays, and the writing of its id and scatter/gather entries, which the batch remembers
 * for the post's checks. Owns no memory.
 */
abstract sealed class WorkRequest permits SendRequest, ReceiveRequest {

    /** {@code wr_id} and {@code num_sge} lie at the same offsets in both request structs. */
    static final long WR_ID = ibv_send_wr.wr_id$offset();
    static final long NUM_SGE = ibv_send_wr.num_sge$offset();
    private static final long SGE_ADDR = ibv_sge.addr$offset();
    private static final long SGE_LENGTH = ibv_sge.length$offset();
    private static final long SGE_LKEY = ibv_sge.lkey$offset();

    static {
        if (ibv_recv_wr.wr_id$offset() != WR_ID || ibv_recv_wr.num_sge$offset() != NUM_SGE) {
            throw new ExceptionInInitializerError("ibv_send_wr and ibv_recv_wr differ in the offsets of wr_id or num_sge");
        }
    }

    private final WorkRequestBatch owner;
    final MemorySegment wrs;
    final MemorySegment sges;
    final int maxSge;
    private final long wrSize;
    int index;
    long base;
    long sgeBase;

    WorkRequest(WorkRequestBatch owner) {
        this.owner = owner;
        this.wrs = owner.wrs;
        this.sges = owner.sges;
        this.maxSge = owner.maxSge;
        this.wrSize = owner.wrs.byteSize() / owner.capacity;
    }

    /** Points this view at request {@code index}. */
    final void position(int index) {
        this.index = index;
        base = index * wrSize;
        sgeBase = (long) index * maxSge * WorkRequestBatch.SGE_SIZE;
    }

    /** Zeroes {@code wr_id} and every field from {@code num_sge} on, and forgets what the request named. */
    final void clearFields(MemorySegment zeros) {
        owner.checkNotPosting();
        // copied from a zero block rather than filling a slice: a slice is an object per call
        MemorySegment.copy(zeros, 0, wrs, base + NUM_SGE, wrSize - NUM_SGE);
        wrs.set(ValueLayout.JAVA_LONG, base + WR_ID, 0L);
        owner.forget(index);
    }

    final void writeWrId(long id) {
        wrs.set(ValueLayout.JAVA_LONG, base + WR_ID, id);
    }

    /**
     * Sets entry {@code entry} to {@code length} bytes at {@code offset} in {@code mr} and the
     * entry count to {@code entry + 1}, after checking the entry index, that the region is open and
     * that it covers the range.
     */
    final void writeSge(int entry, MemoryRegion mr, long offset, int length) {
        if (entry < 0 || entry >= maxSge) {
            throw new IndexOutOfBoundsException("scatter/gather entry " + entry + ": this batch has " + maxSge
                    + " per request");
        }
        if (mr.isClosed()) {
            throw new IllegalStateException(mr + " is closed");
        }
        if (!mr.covers(offset, Integer.toUnsignedLong(length))) {
            throw outside(mr, offset, length);
        }
        owner.checkNotPosting();
        owner.region(index, entry, mr);
        writeEntry(entry, mr.address() + offset, length, mr.lkey());
    }

    /** Writes entry {@code entry} as given and the entry count to {@code entry + 1}. */
    final void writeSge(int entry, long address, int length, int lkey) {
        owner.checkNotPosting();
        writeEntry(entry, address, length, lkey);
    }

    private void writeEntry(int entry, long address, int length, int lkey) {
        long at = sgeBase + entry * WorkRequestBatch.SGE_SIZE;
        sges.set(ValueLayout.JAVA_LONG, at + SGE_ADDR, address);
        sges.set(ValueLayout.JAVA_INT, at + SGE_LENGTH, length);
        sges.set(ValueLayout.JAVA_INT, at + SGE_LKEY, lkey);
        writeSgeCount(entry + 1);
    }

    /** Sets the entry count alone. */
    final void writeSgeCount(int count) {
        wrs.set(ValueLayout.JAVA_INT, base + NUM_SGE, count);
        owner.sgeCount(index, count);
    }

    /** The length of scatter/gather entry {@code sgeIndex} of the whole array. */
    static long sgeLength(MemorySegment sges, long sgeIndex) {
        return Integer.toUnsignedLong(sges.get(ValueLayout.JAVA_INT, sgeIndex * WorkRequestBatch.SGE_SIZE + SGE_LENGTH));
    }

    static IndexOutOfBoundsException outside(MemoryRegion mr, long offset, int length) {
        return new IndexOutOfBoundsException("[" + offset + ", " + offset + " + " + Integer.toUnsignedString(length)
                + ") is outside the memory region of " + mr.length() + " bytes"
                + (mr.segment().scope().isAlive() ? "" : " (its memory is freed)"));
    }
}
