package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_sge;

import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * What a send and a receive batch share: the native array of work requests and their
 * scatter/gather entries in the batch's own arena, linked once into a {@link WorkRequestChain};
 * the {@link PostGuard} that makes a post exclusive; and the regions each request names, which a
 * post checks. Owns its native memory; {@link #close()} frees it.
 */
abstract sealed class WorkRequestBatch implements AutoCloseable permits SendRequests, ReceiveRequests {

    static final long SGE_SIZE = ibv_sge.sizeof();

    final Arena arena;
    final MemorySegment wrs;
    final MemorySegment sges;
    final WorkRequestChain chain;
    final int capacity;
    final int maxSge;
    final PostGuard guard;
    /** The region behind each scatter/gather entry (null: inline data or unset). */
    final MemoryRegion[] regions;
    /** The entries each request has, as its num_sge says. */
    final int[] sgeCounts;
    /**
     * Requests {@code [0, checkedUpTo)} named only open regions when a post checked them, no region
     * has begun to close since ({@link MemoryRegion#closes()} still {@code checkedCloses}), and
     * their entries are unchanged: the next post checks only from there on.
     */
    private int checkedUpTo;
    private long checkedCloses = -1;

    WorkRequestBatch(int capacity, int maxSge, boolean confined, MemoryLayout wrLayout, long nextOffset,
                     long sgListOffset) {
        if (capacity < 1 || maxSge < 1) {
            throw new IllegalArgumentException("capacity and maxSge must be at least 1, got " + capacity + ", " + maxSge);
        }
        this.capacity = capacity;
        this.maxSge = maxSge;
        this.arena = confined ? Arena.ofConfined() : Arena.ofShared();
        this.wrs = arena.allocate(wrLayout, capacity);
        this.sges = arena.allocate(ibv_sge.layout(), (long) capacity * maxSge);
        this.chain = new WorkRequestChain(arena, confined, wrs, sges, wrLayout.byteSize(), nextOffset, sgListOffset,
                capacity, (long) maxSge * SGE_SIZE);
        this.guard = new PostGuard(confined);
        this.regions = new MemoryRegion[capacity * maxSge];
        this.sgeCounts = new int[capacity];
    }

    /** How many work requests the batch holds. */
    public int capacity() {
        return capacity;
    }

    /** How many scatter/gather entries each work request can have. */
    public int maxSge() {
        return maxSge;
    }

    /** Refuses an index outside the batch; {@code kind} names the requests in the message. */
    final void checkIndex(int index, String kind) {
        if (index < 0 || index >= capacity) {
            throw new IndexOutOfBoundsException(kind + " " + index + " of " + capacity);
        }
    }

    /** The native array of requests (for tests of the layout). */
    final MemorySegment requests() {
        return wrs;
    }

    final WorkRequestChain chain() {
        return chain;
    }

    final void checkNotPosting() {
        guard.checkNotPosting(this);
    }

    /** Forgets the regions request {@code index} named, as its clearing does. */
    void forget(int index) {
        Arrays.fill(regions, index * maxSge, (index + 1) * maxSge, null);
        sgeCounts[index] = 0;
        changed(index);
    }

    final void region(int index, int entry, MemoryRegion mr) {
        regions[index * maxSge + entry] = mr;
        changed(index);
    }

    final void sgeCount(int index, int count) {
        sgeCounts[index] = count;
        changed(index);
    }

    /** Request {@code index} changed what it names: the next post checks it again. */
    final void changed(int index) {
        if (index < checkedUpTo) {
            checkedUpTo = index;
        }
    }

    /**
     * The first request a post of {@code count} must check, given {@code closes} read from {@link
     * MemoryRegion#closes()} before any check: 0 when a region began to close since the last
     * post, else the end of what was checked then.
     */
    final int firstUnchecked(long closes) {
        if (closes != checkedCloses) {
            checkedUpTo = 0;
            checkedCloses = closes;
        }
        return checkedUpTo;
    }

    /** Requests {@code [0, count)} were checked at the epoch {@link #firstUnchecked} was given. */
    final void checked(int count) {
        if (count > checkedUpTo) {
            checkedUpTo = count;
        }
    }

    /** The exception for a request {@code i} of a post of {@code count} that names the closed {@code what}. */
    static IllegalStateException closed(String kind, int i, int count, NativeResource what) {
        return new IllegalStateException(kind + " " + i + " of " + count + " names " + what
                + ": fill it again before posting");
    }

    /** Frees the native memory (and the copies of inline data). */
    @Override
    public void close() {
        guard.close(this);
        arena.close();
    }
}
