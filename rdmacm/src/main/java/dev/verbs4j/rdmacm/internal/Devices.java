package dev.verbs4j.rdmacm.internal;

import dev.verbs4j.verbs.Context;
import dev.verbs4j.verbs.internal.VerbsAccess;

import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The verbs contexts of the devices librdmacm opened: one {@link Context} per {@code ibv_context},
 * borrowed (librdmacm keeps the device open for the life of the process).
 */
public final class Devices {

    private static final Map<Long, Context> CONTEXTS = new ConcurrentHashMap<>();

    private Devices() {
    }

    /** The context for {@code ibvContext}, made anew if the application closed the previous one. */
    public static Context context(MemorySegment ibvContext) {
        return CONTEXTS.compute(ibvContext.address(), (k, old) ->
                old != null && !old.isClosed() ? old : VerbsAccess.bridge().borrowContext(ibvContext));
    }
}
