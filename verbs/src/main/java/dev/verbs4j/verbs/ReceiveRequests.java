package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_recv_wr;

import java.lang.foreign.MemorySegment;

/**
 * A reusable batch of receive work requests: a native array of {@code struct ibv_recv_wr} with
 * their {@code struct ibv_sge} arrays, linked once and written in place through one
 * {@link ReceiveRequest} flyweight; {@link QueuePair#postReceive} posts the first
 * {@code count}. Owns its native memory. As {@link SendRequests}: a request that names a closed
 * memory region is an {@link IllegalStateException} when posted, and a batch is filled and posted
 * by one thread at a time.
 */
public final class ReceiveRequests extends WorkRequestBatch {

    private final ReceiveRequest flyweight;

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
        super(capacity, maxSge, confined, ibv_recv_wr.layout(), ibv_recv_wr.next$offset(), ibv_recv_wr.sg_list$offset());
        this.flyweight = new ReceiveRequest(this);
    }

    /**
     * The request at {@code index} as it is: what was set before stays. The flyweight is the same
     * object for every index: fill one request before asking for the next.
     */
    public ReceiveRequest get(int index) {
        checkIndex(index, "receive request");
        return flyweight.moveTo(index);
    }

    /**
     * Clears the request at {@code index} (id zero, no entries, no region named) and returns it,
     * to fill it anew; otherwise as {@link #get}.
     */
    public ReceiveRequest reset(int index) {
        return get(index).clear();
    }

    /**
     * Posts the first {@code count} requests to {@code target} through the provider operation {@code op}
     * after checking that the regions they name are open; returns the provider's result. The
     * provider copies only the entries' values (keys, addresses), which the device checks.
     */
    int post(MemorySegment op, MemorySegment target, int count) {
        chain.checkCount(count);
        guard.begin(this);
        try {
            for (int i = firstUnchecked(MemoryRegion.closes()); i < count; i++) {
                int base = i * maxSge;
                for (int j = 0, n = sgeCounts[i]; j < n; j++) {
                    MemoryRegion mr = regions[base + j];
                    if (mr != null && mr.isClosed()) {
                        throw closed("receive request", i, count, mr);
                    }
                }
            }
            checked(count);
            return chain.post(op, target, count);
        } finally {
            guard.end();
        }
    }
}
