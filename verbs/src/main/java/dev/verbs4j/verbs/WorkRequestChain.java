package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_context_ops;
import dev.verbs4j.verbs.internal.Ibv;
import dev.verbs4j.verbs.internal.Native;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The native array behind a send or receive batch: work requests linked once through their
 * {@code next} fields, each pointing at its own slice of a scatter/gather array, plus the
 * {@code bad_wr} out-parameter. Posting cuts the chain after {@code count} requests, calls the
 * provider and restores the link, allocating nothing. Memory belongs to the batch's arena.
 *
 * <p>A shared batch hands the provider its requests and {@code bad_wr} by address: the batch's
 * {@link PostGuard}, taken for the whole post, refuses a close meanwhile, which is what a shared
 * arena's acquire and release around the downcall would do, at two atomic operations per post
 * fewer. A confined batch passes its segments, whose arena checks the thread.
 */
final class WorkRequestChain {

    /**
     * {@code int (*)(target, wr, bad_wr)}: post_send, post_recv and post_srq_recv have this one
     * shape. A constant at the call, so that the JIT compiles the downcall in place.
     */
    private static final MethodHandle POST = Native.downcallPointer(ibv_context_ops.post_send.descriptor(), true);

    private final MemorySegment wrs;
    private final MemorySegment badWr;
    /** What the downcall gets: the segments (confined) or their addresses (shared, see above). */
    private final MemorySegment wrsArgument;
    private final MemorySegment badWrArgument;
    private final long wrSize;
    private final long nextOffset;
    private final int capacity;

    WorkRequestChain(Arena arena, boolean confined, MemorySegment wrs, MemorySegment sges, long wrSize, long nextOffset, long sgListOffset,
                     int capacity, long sgeStride) {
        this.wrs = wrs;
        this.wrSize = wrSize;
        this.nextOffset = nextOffset;
        this.capacity = capacity;
        this.badWr = arena.allocate(ValueLayout.ADDRESS);
        this.wrsArgument = confined ? wrs : MemorySegment.ofAddress(wrs.address());
        this.badWrArgument = confined ? badWr : MemorySegment.ofAddress(badWr.address());
        for (int i = 0; i < capacity; i++) {
            long base = i * wrSize;
            wrs.set(ValueLayout.ADDRESS, base + sgListOffset, sges.asSlice(i * sgeStride));
            wrs.set(ValueLayout.ADDRESS, base + nextOffset, i + 1 < capacity ? wrs.asSlice(base + wrSize) : MemorySegment.NULL);
        }
    }

    int capacity() {
        return capacity;
    }

    /**
     * Posts the first {@code count} requests to {@code target} through the provider operation
     * {@code op} ({@code int (*)(target, wr, bad_wr)}); returns the provider's result. The caller
     * holds the batch's {@link PostGuard}.
     */
    int post(MemorySegment op, MemorySegment target, int count) {
        long lastNext = (count - 1) * wrSize + nextOffset;
        if (count < capacity) {
            wrs.set(ValueLayout.JAVA_LONG, lastNext, 0L);
        }
        try {
            return (int) POST.invokeExact(op, target, wrsArgument, badWrArgument);
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            if (count < capacity) {
                wrs.set(ValueLayout.JAVA_LONG, lastNext, wrs.address() + count * wrSize);
            }
        }
    }

    /** Refuses a {@code count} outside the chain. */
    void checkCount(int count) {
        if (count < 1 || count > capacity) {
            throw new IllegalArgumentException("count " + count + " outside [1, " + capacity + "]");
        }
    }

    /** The index of the request the provider refused in the last post, or -1. */
    int badIndex() {
        long bad = badWr.get(ValueLayout.ADDRESS, 0).address();
        long offset = bad - wrs.address();
        return bad == 0 || offset < 0 || offset % wrSize != 0 ? -1 : (int) (offset / wrSize);
    }
}
