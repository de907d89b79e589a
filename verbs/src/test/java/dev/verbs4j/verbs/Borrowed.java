package dev.verbs4j.verbs;

import java.lang.foreign.MemorySegment;

/**
 * Verbs objects over native ones that were made elsewhere, for the benchmark fixture only (the
 * null provider of the perf module's JMH benchmarks, a fake {@code ibv_context} whose operations
 * return at once): test code, never shipped, so that no caller of the library can build a verbs
 * object from an address it chooses. Each wraps a native object that its maker keeps alive until
 * the wrapper is closed and frees afterwards; closing a borrowed object closes the objects created
 * from it, but never calls libibverbs to destroy the native object itself. Only the data path
 * (post, poll, notify) may be used on objects libibverbs did not make.
 */
public final class Borrowed {

    private Borrowed() {
    }

    /** A context on {@code ibvContext} reported as {@code device}; its {@code async_fd} must be open. */
    public static Context context(MemorySegment ibvContext, Device device) {
        return Context.borrow(ibvContext, device);
    }

    /** A protection domain on {@code ibvPd}, a {@code struct ibv_pd} of {@code context}. */
    public static ProtectionDomain protectionDomain(Context context, MemorySegment ibvPd) {
        return new ProtectionDomain(context, ibvPd);
    }

    /** A completion queue on {@code ibvCq}, a {@code struct ibv_cq} of {@code context}, without a channel. */
    public static CompletionQueue completionQueue(Context context, MemorySegment ibvCq) {
        return new CompletionQueue(context, ibvCq);
    }

    /** A queue pair on {@code ibvQp} in {@code pd}, of the type, queues and capabilities {@code init} names. */
    public static QueuePair queuePair(ProtectionDomain pd, MemorySegment ibvQp, QueuePairInit init) {
        return new QueuePair(pd, ibvQp, init);
    }

    /** A memory region on {@code ibvMr}, a {@code struct ibv_mr} in {@code pd} over memory its maker keeps alive. */
    public static MemoryRegion memoryRegion(ProtectionDomain pd, MemorySegment ibvMr) {
        return new MemoryRegion(pd, ibvMr);
    }
}
