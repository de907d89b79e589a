package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_send_wr;
import dev.verbs4j.bindings.ibv_sge;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.Arrays;

/**
 * A reusable batch of send work requests: a native array of {@code struct ibv_send_wr}, each with
 * its own {@code struct ibv_sge} array, linked once. Fields are written in place through one
 * {@link SendRequest} flyweight, and {@link QueuePair#postSend} posts the first {@code count}
 * as a chain: nothing is allocated per post. Owns its native memory, and the copies of inline
 * data; close it when done.
 *
 * <p>The batch remembers the objects each request names and checks them when it is posted: a
 * closed memory region, address handle or memory window is an {@link IllegalStateException}
 * before the provider sees the request, and the address handles, windows and (for INLINE
 * requests) regions the provider reads while posting are held until the post returns. A batch is
 * filled and posted by one thread at a time: a second post of the same batch while one is in
 * progress, or filling it meanwhile, is an {@link IllegalStateException}.
 */
public final class SendRequests implements AutoCloseable {

    static final long WR_SIZE = ibv_send_wr.sizeof();
    static final long NEXT = ibv_send_wr.next$offset();
    static final long SG_LIST = ibv_send_wr.sg_list$offset();
    static final long SGE_SIZE = ibv_sge.sizeof();

    /** The most bytes {@link SendRequest#inline} copies; providers allow far fewer (max_inline_data). */
    public static final int MAX_INLINE = 64 * 1024;

    private final Arena arena;
    private final MemorySegment wrs;
    private final MemorySegment sges;
    private final WorkRequestChain chain;
    private final int capacity;
    private final int maxSge;
    private final SendRequest flyweight;
    private final PostGuard guard;
    /** The region behind each scatter/gather entry (null: inline data or unset). */
    private final MemoryRegion[] regions;
    /** The entries each request has, as its num_sge says. */
    private final int[] sgeCounts;
    /** The UD destination, the window and region of a BIND_MW, per request; null when none. */
    private final AddressHandle[] handles;
    private final MemoryWindow[] windows;
    private final MemoryRegion[] bindRegions;
    /** Whether any request ever named an address handle or window (else the post skips them). */
    private boolean namesHandles;
    /** What the post in progress holds, to let go of exactly that. */
    private final NativeResource[] held;
    private int holding;
    private MemorySegment inlineArea;
    private long inlineSlot;

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
        this.guard = new PostGuard(confined);
        this.regions = new MemoryRegion[capacity * maxSge];
        this.sgeCounts = new int[capacity];
        this.handles = new AddressHandle[capacity];
        this.windows = new MemoryWindow[capacity];
        this.bindRegions = new MemoryRegion[capacity];
        this.held = new NativeResource[capacity * (3 + maxSge)];
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

    /** The native array of requests (for tests of the layout). */
    MemorySegment requests() {
        return wrs;
    }

    WorkRequestChain chain() {
        return chain;
    }

    void checkNotPosting() {
        guard.checkNotPosting(this);
    }

    void forget(int index) {
        Arrays.fill(regions, index * maxSge, (index + 1) * maxSge, null);
        sgeCounts[index] = 0;
        handles[index] = null;
        windows[index] = null;
        bindRegions[index] = null;
    }

    void region(int index, int entry, MemoryRegion mr) {
        regions[index * maxSge + entry] = mr;
    }

    void sgeCount(int index, int count) {
        sgeCounts[index] = count;
    }

    void addressHandle(int index, AddressHandle ah) {
        checkNotPosting();
        handles[index] = ah;
        namesHandles |= ah != null;
    }

    void window(int index, MemoryWindow mw, MemoryRegion mr) {
        checkNotPosting();
        windows[index] = mw;
        bindRegions[index] = mr;
        namesHandles = true;
    }

    /** Copies {@code data} into request {@code index}'s inline slot and returns the copy. */
    MemorySegment inlineCopy(int index, MemorySegment data) {
        checkNotPosting();
        long size = data.byteSize();
        if (size > MAX_INLINE) {
            throw new IllegalArgumentException("inline data of " + size + " bytes: at most " + MAX_INLINE
                    + " (and the queue pair's max_inline_data)");
        }
        if (inlineArea == null || size > inlineSlot) {
            // grown rather than reused: requests filled before keep pointing at the old copies
            long slot = Math.max(256, Long.highestOneBit(Math.max(1, size - 1)) << 1);
            inlineArea = arena.allocate(slot * capacity, 8);
            inlineSlot = slot;
        }
        MemorySegment copy = inlineArea.asSlice(index * inlineSlot, size);
        MemorySegment.copy(data, 0, copy, 0, size);
        return copy;
    }

    /**
     * Posts the first {@code count} requests to {@code qp} through {@code handle}/{@code op}: takes
     * the batch, checks and holds what the requests name, writes their native pointers, calls the
     * provider and lets go. Returns the provider's result.
     */
    int post(QueuePair qp, MethodHandle handle, MemorySegment op, MemorySegment target, int count) {
        chain.checkCount(count);
        guard.begin(this);
        try {
            for (int i = 0; i < count; i++) {
                int n = sgeCounts[i];
                int base = i * maxSge;
                boolean inline = (SendRequest.flagsOf(wrs, i) & SendFlags.INLINE) != 0;
                for (int j = 0; j < n; j++) {
                    MemoryRegion mr = regions[base + j];
                    if (mr != null) {
                        if (inline) {
                            // the provider copies from the region's memory while posting: hold it
                            hold(mr, i, count);
                        } else if (mr.isClosed()) {
                            throw closed(i, count, mr);
                        }
                    }
                }
                if (inline) {
                    checkInlineLength(i, n);
                }
                if (namesHandles || qp.isUd()) {
                    holdHandles(qp, i, count);
                }
            }
            return chain.post(handle, op, target, count);
        } finally {
            for (int h = 0; h < holding; h++) {
                held[h].exitCall();
                held[h] = null;
            }
            holding = 0;
            guard.end();
        }
    }

    private void hold(NativeResource r, int i, int count) {
        try {
            r.enterCall();
        } catch (IllegalStateException e) {
            throw closed(i, count, r);
        }
        held[holding++] = r;
    }

    private void holdHandles(QueuePair qp, int i, int count) {
        AddressHandle ah = handles[i];
        if (qp.isUd()) {
            if (ah == null) {
                throw new IllegalStateException("work request " + i + " of " + count + " on " + qp
                        + " has no destination: a UD send needs SendRequest.ud(addressHandle, qpn, qkey)");
            }
            hold(ah, i, count);
        } else {
            ah = null;
        }
        MemoryWindow mw = windows[i];
        MemoryRegion bindMr = null;
        if (mw != null) {
            bindMr = bindRegions[i];
            hold(mw, i, count);
            hold(bindMr, i, count);
        }
        SendRequest.writeHandles(wrs, i, ah, mw, bindMr);
    }

    private void checkInlineLength(int i, int n) {
        long total = 0;
        for (int j = 0; j < n; j++) {
            total += SendRequest.sgeLength(sges, (long) i * maxSge + j);
        }
        if (total > MAX_INLINE) {
            throw new IllegalArgumentException("work request " + i + ": " + total + " bytes of INLINE data, at most "
                    + MAX_INLINE);
        }
    }

    private static IllegalStateException closed(int i, int count, NativeResource what) {
        return new IllegalStateException("work request " + i + " of " + count + " names " + what
                + ": fill it again before posting");
    }

    /** The windows bound by the last successful post's BIND_MW requests, for their region dependencies. */
    void boundWindows(int count) {
        if (!namesHandles) {
            return;
        }
        for (int i = 0; i < count; i++) {
            if (windows[i] != null) {
                windows[i].boundTo(bindRegions[i]);
            }
        }
    }

    @Override
    public void close() {
        arena.close();
    }
}
