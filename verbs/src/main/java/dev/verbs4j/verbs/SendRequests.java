package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_send_wr;

import java.lang.foreign.MemorySegment;

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
public final class SendRequests extends WorkRequestBatch {

    static final long WR_SIZE = ibv_send_wr.sizeof();
    static final long NEXT = ibv_send_wr.next$offset();
    static final long SG_LIST = ibv_send_wr.sg_list$offset();

    /** The most bytes {@link SendRequest#inline} copies; providers allow far fewer (max_inline_data). */
    public static final int MAX_INLINE = 64 * 1024;

    private final SendRequest flyweight;
    /** The UD destination, the window and region of a BIND_MW, per request; null when none. */
    private final AddressHandle[] handles;
    private final MemoryWindow[] windows;
    private final MemoryRegion[] bindRegions;
    /** Whether any request ever named an address handle or window (else the post skips them). */
    private boolean namesHandles;
    /** Whether any request was ever INLINE (else a post checks only what changed since the last). */
    private boolean usesInline;
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
        super(capacity, maxSge, confined, ibv_send_wr.layout(), NEXT, SG_LIST);
        this.flyweight = new SendRequest(this);
        this.handles = new AddressHandle[capacity];
        this.windows = new MemoryWindow[capacity];
        this.bindRegions = new MemoryRegion[capacity];
        this.held = new NativeResource[capacity * (3 + maxSge)];
    }

    /**
     * The work request at {@code index} as it is: what was set before stays, to change a few
     * fields of a reused request. The returned flyweight is the same object for every index: fill
     * one request before asking for the next.
     */
    public SendRequest get(int index) {
        checkIndex(index, "send request");
        return flyweight.moveTo(index);
    }

    /**
     * Clears the work request at {@code index} (every field zero, no entries, nothing named) and
     * returns it, to fill it anew; otherwise as {@link #get}.
     */
    public SendRequest reset(int index) {
        return get(index).clear();
    }

    @Override
    void forget(int index) {
        super.forget(index);
        handles[index] = null;
        windows[index] = null;
        bindRegions[index] = null;
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

    /** A request became INLINE: every post checks and holds its regions from now on. */
    void inlineUsed() {
        usesInline = true;
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
     * Posts the first {@code count} requests to {@code qp} through the provider operation {@code op}: takes
     * the batch, checks and holds what the requests name, writes their native pointers, calls the
     * provider and lets go. Returns the provider's result.
     */
    int post(QueuePair qp, MemorySegment op, MemorySegment target, int count) {
        chain.checkCount(count);
        guard.begin(this);
        try {
            // requests that only name regions by key need checking only where something changed
            boolean plain = !usesInline && !namesHandles && !qp.isUd();
            for (int i = plain ? firstUnchecked(MemoryRegion.closes()) : 0; i < count; i++) {
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
            if (plain) {
                checked(count);
            }
            return chain.post(op, target, count);
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
            total += WorkRequest.sgeLength(sges, (long) i * maxSge + j);
        }
        if (total > MAX_INLINE) {
            throw new IllegalArgumentException("work request " + i + ": " + total + " bytes of INLINE data, at most "
                    + MAX_INLINE);
        }
    }

    private static IllegalStateException closed(int i, int count, NativeResource what) {
        return closed("work request", i, count, what);
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
}
