package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_recv_wr;
import dev.verbs4j.bindings.ibv_sge;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * A reusable batch of receive work requests: a native array of {@code struct ibv_recv_wr} with
 * their {@code struct ibv_sge} arrays, linked once and written in place through one
 * {@link ReceiveRequest} flyweight; {@link QueuePair#postReceive} posts the first
 * {@code count}. Owns its native memory. As {@link SendRequests}: a request that names a closed
 * memory region is an {@link IllegalStateException} when posted, and a batch is filled and posted
 * by one thread at a time.
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
    private final WorkRequestChain chain;
    private final int capacity;
    private final int maxSge;
    private final ReceiveRequest flyweight;
    private final PostGuard guard;
    /** The region behind each scatter entry (null: unset). */
    private final MemoryRegion[] regions;
    private final int[] sgeCounts;

    /** A batch of {@code capacity} receive requests with up to {@code maxSge} entries each. */
    public ReceiveRequests(int capacity, int maxSge) {
        this(capacity, maxSge, false);
    }

    /**
     * The same for one thread only: the memory lies in a confined arena, which makes each
     * post cheaper (no atomic bookkeeping of the memory's lifetime in the downcall); any other
     * thread that uses it gets a {@link WrongThreadException}.
     */
    public static ReceiveRequests confined(int capacity, int maxSge) {
        return new ReceiveRequests(capacity, maxSge, true);
    }

    private ReceiveRequests(int capacity, int maxSge, boolean confined) {
        if (capacity < 1 || maxSge < 1) {
            throw new IllegalArgumentException("capacity and maxSge must be at least 1, got " + capacity + ", " + maxSge);
        }
        this.capacity = capacity;
        this.maxSge = maxSge;
        this.arena = confined ? Arena.ofConfined() : Arena.ofShared();
        this.wrs = arena.allocate(ibv_recv_wr.layout(), capacity);
        this.sges = arena.allocate(ibv_sge.layout(), (long) capacity * maxSge);
        this.chain = new WorkRequestChain(arena, wrs, sges, WR_SIZE, NEXT, SG_LIST, capacity, (long) maxSge * SGE_SIZE);
        this.flyweight = new ReceiveRequest(this, wrs, sges, maxSge);
        this.guard = new PostGuard(confined);
        this.regions = new MemoryRegion[capacity * maxSge];
        this.sgeCounts = new int[capacity];
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

    WorkRequestChain chain() {
        return chain;
    }

    void checkNotPosting() {
        guard.checkNotPosting(this);
    }

    void region(int index, int entry, MemoryRegion mr) {
        regions[index * maxSge + entry] = mr;
    }

    void sgeCount(int index, int count) {
        sgeCounts[index] = count;
    }

    /**
     * Posts the first {@code count} requests to {@code target} through {@code handle}/{@code op}
     * after checking that the regions they name are open; returns the provider's result. The
     * provider copies only the entries' values (keys, addresses), which the device checks.
     */
    int post(MethodHandle handle, MemorySegment op, MemorySegment target, int count) {
        chain.checkCount(count);
        guard.begin(this);
        try {
            for (int i = 0; i < count; i++) {
                int base = i * maxSge;
                for (int j = 0, n = sgeCounts[i]; j < n; j++) {
                    MemoryRegion mr = regions[base + j];
                    if (mr != null && mr.isClosed()) {
                        throw new IllegalStateException("receive request " + i + " of " + count + " names " + mr
                                + ": fill it again before posting");
                    }
                }
            }
            return chain.post(handle, op, target, count);
        } finally {
            guard.end();
        }
    }

    @Override
    public void close() {
        arena.close();
    }
}
