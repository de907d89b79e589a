package dev.verbs4j.verbs.internal;

import dev.verbs4j.verbs.Context;
import dev.verbs4j.verbs.NativeResource;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairInit;

import java.lang.foreign.MemorySegment;

/**
 * What the connection manager needs from the verbs layer beyond its public API: the native
 * handle of a verbs object (held open around its use), a context that librdmacm opened, and a
 * queue pair that librdmacm creates and destroys. Set once by the verbs package; exported to the
 * rdmacm module only. Nothing here builds a verbs object over memory the caller chooses, but the
 * contexts librdmacm itself opened.
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
        /** The native object behind {@code resource}; hold it with {@link #enter} while it is used. */
        MemorySegment handle(NativeResource resource);

        /**
         * Holds {@code resource} open for a call that uses its native object: until {@link #exit},
         * its close waits.
         *
         * @throws IllegalStateException when it is closed
         */
        void enter(NativeResource resource);

        /** Ends what {@link #enter} started. */
        void exit(NativeResource resource);

        /**
         * A context on {@code ibvContext}, which librdmacm opened and will close: closing the
         * returned object closes what was created from it, but not the device.
         */
        Context borrowContext(MemorySegment ibvContext);

        /**
         * A queue pair created and destroyed by {@code factory} instead of libibverbs, which
         * {@code closer} (its connection id) closes when it closes.
         */
        QueuePair createQueuePair(ProtectionDomain pd, QueuePairInit init, QueuePairFactory factory, NativeResource closer);
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
