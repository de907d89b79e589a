package dev.verbs4j.verbs.internal;

import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.Context;
import dev.verbs4j.verbs.Device;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.NativeResource;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairInit;

import java.lang.foreign.MemorySegment;

/**
 * What the connection manager needs from the verbs layer beyond its public API: the native
 * handle of a verbs object, a context that librdmacm opened, and a queue pair that librdmacm
 * creates and destroys; and what the benchmarks of {@code dev.verbs4j.perf} need: verbs objects
 * over native ones that were made elsewhere (their null provider, a fake {@code ibv_context}
 * whose operations return at once, so that a benchmark measures the binding's own cost on the
 * real data path code). Set once by the verbs package; exported to those two modules only.
 */
public final class VerbsAccess {

    /** Creates and destroys the native queue pair of {@link Bridge#createQueuePair}. */
    public interface QueuePairFactory {
        /**
         * Creates the queue pair from {@code initAttr}, a filled {@code ibv_qp_init_attr} (or
         * {@code ibv_qp_init_attr_ex} when {@code extended}), and returns it; the capabilities it
         * got are written back into {@code initAttr}.
         */
        MemorySegment create(MemorySegment initAttr, boolean extended);

        /** Destroys what {@link #create} returned. */
        void destroy(MemorySegment qp);
    }

    /** The operations, implemented in the verbs package. */
    public interface Bridge {
        /** The native object behind {@code resource}. */
        MemorySegment handle(NativeResource resource);

        /**
         * A context on {@code ibvContext}, which somebody else opened and will close: closing the
         * returned object closes what was created from it, but not the device.
         */
        Context borrowContext(MemorySegment ibvContext);

        /** A queue pair created and destroyed by {@code factory} instead of libibverbs. */
        QueuePair createQueuePair(ProtectionDomain pd, QueuePairInit init, QueuePairFactory factory);

        // Borrowed objects. Each wraps a native object that its maker keeps alive until the
        // wrapper is closed and frees afterwards: closing a borrowed object closes the objects
        // created from it as usual, but never calls libibverbs to destroy the native object itself.
        // The data path (post, poll, notify) goes through the context's ops table as for any other
        // object, which is the point: it is the code applications run. Every other verb (modify,
        // query, create) calls libibverbs as usual, so on objects libibverbs did not make (a
        // null provider's) only the data path may be used.

        /**
         * A borrowed context on {@code ibvContext} that reports itself as {@code device} (its
         * {@code device} field is not read). Its {@code async_fd} must be an open descriptor.
         */
        Context borrowContext(MemorySegment ibvContext, Device device);

        /** A borrowed protection domain on {@code ibvPd}, a {@code struct ibv_pd} of {@code context}. */
        ProtectionDomain borrowProtectionDomain(Context context, MemorySegment ibvPd);

        /** A borrowed completion queue on {@code ibvCq}, a {@code struct ibv_cq} of {@code context}, without a channel. */
        CompletionQueue borrowCompletionQueue(Context context, MemorySegment ibvCq);

        /**
         * A borrowed queue pair on {@code ibvQp}, a {@code struct ibv_qp} in {@code pd}; {@code init}
         * names its type, its completion queues (borrowed from the same context) and the
         * capabilities its maker gave it. Its state is read from the {@code ibv_qp}.
         */
        QueuePair borrowQueuePair(ProtectionDomain pd, MemorySegment ibvQp, QueuePairInit init);

        /**
         * A borrowed memory region on {@code ibvMr}, a {@code struct ibv_mr} in {@code pd}: its
         * memory is the {@code length} bytes at {@code addr}, which the maker keeps alive; its
         * {@link MemoryRegion#access()} is 0 (an {@code ibv_mr} does not record it).
         */
        MemoryRegion borrowMemoryRegion(ProtectionDomain pd, MemorySegment ibvMr);
    }

    private static volatile Bridge bridge;

    private VerbsAccess() {
    }

    /** Installs the implementation (once, by the verbs package). */
    public static void install(Bridge implementation) {
        if (bridge != null) {
            throw new IllegalStateException("already installed");
        }
        bridge = implementation;
    }

    /** The implementation. */
    public static Bridge bridge() {
        Bridge b = bridge;
        if (b == null) {
            try {
                Class.forName(NativeResource.class.getName(), true, VerbsAccess.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException(e);
            }
            b = bridge;
        }
        return b;
    }
}
