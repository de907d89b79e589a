package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_recv_wr;
import dev.verbs4j.bindings.ibv_sge;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A reusable batch of receive work requests: a native array of {@code struct ibv_recv_wr} with
 * their {@code struct ibv_sge} arrays, linked once and written in place through one
 * {@link ReceiveRequest} flyweight; {@link QueuePair#postReceive} posts the first
 * {@code count}. Owns its native memory.
 */
public final class ReceiveRequests implements AutoCloseable {

    static final long WR_SIZE = ibv_recv_wr.sizeof();
    static final long NEXT = ibv_recv_wr.next$offset();
    static final long SG_LIST = ibv_recv_wr.sg_list$offset();
    static final long NUM_SGE = ibv_recv_wr.num_sge$offset();
    static final long WR_ID = ibv_recv_wr.wr_id$offset();
    static final long SGE_SIZE = ibv_sge.sizeof();

    private final Arena arena;
    private final MemorySegment wrs;
    private final MemorySegment sges;
    private final MemorySegment badWr;
    private final int capacity;
    private final int maxSge;
    private final ReceiveRequest flyweight;

    /** A batch of {@code capacity} receive requests with up to {@code maxSge} entries each. */
    public ReceiveRequests(int capacity, int maxSge) {
        if (capacity < 1 || maxSge < 1) {
            throw new IllegalArgumentException("capacity and maxSge must be at least 1, got " + capacity + ", " + maxSge);
        }
        this.capacity = capacity;
        this.maxSge = maxSge;
        this.arena = Arena.ofShared();
        this.wrs = arena.allocate(ibv_recv_wr.layout(), capacity);
        this.sges = arena.allocate(ibv_sge.layout(), (long) capacity * maxSge);
        this.badWr = arena.allocate(ValueLayout.ADDRESS);
        for (int i = 0; i < capacity; i++) {
            long base = i * WR_SIZE;
            wrs.set(ValueLayout.ADDRESS, base + SG_LIST, sges.asSlice((long) i * maxSge * SGE_SIZE));
            wrs.set(ValueLayout.ADDRESS, base + NEXT, i + 1 < capacity ? wrs.asSlice(base + WR_SIZE) : MemorySegment.NULL);
        }
        this.flyweight = new ReceiveRequest(wrs, sges, maxSge);
    }

    /** How many requests the batch holds. */
    public int capacity() {
        return capacity;
    }

    /** The request at {@code index}; the flyweight is the same object for every index. */
    public ReceiveRequest get(int index) {
        if (index < 0 || index >= capacity) {
            throw new IndexOutOfBoundsException("receive request " + index + " of " + capacity);
        }
        return flyweight.moveTo(index);
    }

    MemorySegment first() {
        return wrs;
    }

    MemorySegment badWr() {
        return badWr;
    }

    void cut(int count) {
        if (count < capacity) {
            wrs.set(ValueLayout.ADDRESS, (count - 1) * WR_SIZE + NEXT, MemorySegment.NULL);
        }
    }

    void relink(int count) {
        if (count < capacity) {
            wrs.set(ValueLayout.JAVA_LONG, (count - 1) * WR_SIZE + NEXT, wrs.address() + count * WR_SIZE);
        }
    }

    int badIndex() {
        long bad = badWr.get(ValueLayout.ADDRESS, 0).address();
        long offset = bad - wrs.address();
        return bad == 0 || offset < 0 || offset % WR_SIZE != 0 ? -1 : (int) (offset / WR_SIZE);
    }

    @Override
    public void close() {
        arena.close();
    }
}
