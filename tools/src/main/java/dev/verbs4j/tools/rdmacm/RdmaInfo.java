package dev.verbs4j.tools.rdmacm;

import dev.verbs4j.verbs.MemoryRegion;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The advert an rping client sends for one of its buffers ({@code struct rping_rdma_info}): the
 * buffer's address, rkey and length, as be64, be32, be32.
 */
record RdmaInfo(long address, int rkey, int length) {

    /** The size of the message on the wire. */
    static final int SIZE = 16;

    private static final ValueLayout.OfLong BE64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfInt BE32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    /** The advert of the first {@code length} bytes of {@code mr}. */
    static RdmaInfo of(MemoryRegion mr, int length) {
        return new RdmaInfo(mr.remoteAddress(), mr.rkey(), length);
    }

    /** Reads an advert from the start of {@code message}. */
    static RdmaInfo readFrom(MemorySegment message) {
        return new RdmaInfo(message.get(BE64, 0), message.get(BE32, 8), message.get(BE32, 12));
    }

    /** Writes this advert to the start of {@code message}. */
    void writeTo(MemorySegment message) {
        message.set(BE64, 0, address);
        message.set(BE32, 8, rkey);
        message.set(BE32, 12, length);
    }
}
