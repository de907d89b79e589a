package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_send_wr;
import dev.verbs4j.bindings.ibv_sge;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

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
    private final WorkRequestChain chain;
    private final int capacity;
    private final int maxSge;
    private final SendRequest flyweight;

    /** A batch of {@code capacity} work requests with up to {@code maxSge} scatter/gather entries each. */
    public SendRequests(int capacity, int maxSge) {
        this(capacity, maxSge, false);
    }

    /**
     * The same for one thread only: the memory lies in a confined arena, which makes each
     * post cheaper (no atomic bookkeeping of the memory's lifetime in the downcall); any other
     * thread that uses it gets a {@link WrongThreadException}.
     */
    public static SendRequests confined(int capacity, int maxSge) {
        return new SendRequests(capacity, maxSge, true);
    }

    private SendRequests(int capacity, int maxSge, boolean confined) {
        if (capacity < 1 || maxSge < 1) {
            throw new IllegalArgumentException("capacity and maxSge must be at least 1, got " + capacity + ", " + maxSge);
        }
        this.capacity = capacity;
        this.maxSge = maxSge;
        this.arena = confined ? Arena.ofConfined() : Arena.ofShared();
        this.wrs = arena.allocate(ibv_send_wr.layout(), capacity);
        this.sges = arena.allocate(ibv_sge.layout(), (long) capacity * maxSge);
        this.chain = new WorkRequestChain(arena, wrs, sges, WR_SIZE, NEXT, SG_LIST, capacity, (long) maxSge * SGE_SIZE);
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

    WorkRequestChain chain() {
        return chain;
    }

    @Override
    public void close() {
        arena.close();
    }
}
