package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_send_wr;
import dev.verbs4j.bindings.ibv_sge;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A reusable batch of send work requests: a native array of {@code struct ibv_send_wr}, each with
 * its own {@code struct ibv_sge} array, linked once. Fields are written in place through one
 * {@link SendRequest} flyweight, and {@link QueuePair#postSend} posts the first {@code count}
 * as a chain: nothing is allocated per post. Owns its native memory; close it when done.
 */
public final class SendRequests implements AutoCloseable {

    static final long WR_SIZE = ibv_send_wr.sizeof();
    static final long NEXT = ibv_send_wr.next$offset();
    static final long SG_LIST = ibv_send_wr.sg_list$offset();
    static final long SGE_SIZE = ibv_sge.sizeof();

    private final Arena arena;
    private final MemorySegment wrs;
    private final MemorySegment sges;
    private final MemorySegment badWr;
    private final int capacity;
    private final int maxSge;
    private final SendRequest flyweight;

    /** A batch of {@code capacity} work requests with up to {@code maxSge} scatter/gather entries each. */
    public SendRequests(int capacity, int maxSge) {
        if (capacity < 1 || maxSge < 1) {
            throw new IllegalArgumentException("capacity and maxSge must be at least 1, got " + capacity + ", " + maxSge);
        }
        this.capacity = capacity;
        this.maxSge = maxSge;
        this.arena = Arena.ofShared();
        this.wrs = arena.allocate(ibv_send_wr.layout(), capacity);
        this.sges = arena.allocate(ibv_sge.layout(), (long) capacity * maxSge);
        this.badWr = arena.allocate(ValueLayout.ADDRESS);
        for (int i = 0; i < capacity; i++) {
            long base = i * WR_SIZE;
            wrs.set(ValueLayout.ADDRESS, base + SG_LIST, sges.asSlice((long) i * maxSge * SGE_SIZE));
            wrs.set(ValueLayout.ADDRESS, base + NEXT, i + 1 < capacity ? wrs.asSlice(base + WR_SIZE) : MemorySegment.NULL);
        }
        this.flyweight = new SendRequest(this, wrs, sges, maxSge);
    }

    /** How many work requests the batch holds. */
    public int capacity() {
        return capacity;
    }

    /** How many scatter/gather entries each work request can have. */
    public int maxSge() {
        return maxSge;
    }

    /**
     * The work request at {@code index}, cleared of its previous content. The returned flyweight
     * is the same object for every index: fill one request before asking for the next.
     */
    public SendRequest get(int index) {
        return at(index).clear();
    }

    /** The work request at {@code index} as it is, to change a few fields of a reused request. */
    public SendRequest at(int index) {
        if (index < 0 || index >= capacity) {
            throw new IndexOutOfBoundsException("send request " + index + " of " + capacity);
        }
        return flyweight.moveTo(index);
    }

    MemorySegment first() {
        return wrs;
    }

    MemorySegment badWr() {
        return badWr;
    }

    /** Ends the chain after {@code count} requests for one post. */
    void cut(int count) {
        if (count < capacity) {
            wrs.set(ValueLayout.ADDRESS, (count - 1) * WR_SIZE + NEXT, MemorySegment.NULL);
        }
    }

    /** Restores the link cut by {@link #cut}. */
    void relink(int count) {
        if (count < capacity) {
            wrs.set(ValueLayout.JAVA_LONG, (count - 1) * WR_SIZE + NEXT, wrs.address() + count * WR_SIZE);
        }
    }

    /** The index of the request {@code badWr} points to, or -1. */
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
