package dev.verbs4j.verbs.internal;

import dev.verbs4j.bindings.ibv_context;
import dev.verbs4j.bindings.verbs_context;

import java.lang.foreign.MemorySegment;

/**
 * Finds the provider's extended operations ({@code struct verbs_context}) of an open
 * {@code ibv_context}, as the header's {@code verbs_get_ctx_op()} does.
 */
public final class ExtendedOps {

    /** {@code __VERBS_ABI_IS_EXTENDED}: {@code ((void *) UINTPTR_MAX)}. */
    private static final long ABI_IS_EXTENDED = -1L;

    private ExtendedOps() {
    }

    /** The {@code verbs_context} that contains {@code context}, or {@code NULL} for a legacy provider. */
    public static MemorySegment verbsContext(MemorySegment context) {
        if (ibv_context.abi_compat(context).address() != ABI_IS_EXTENDED) {
            return MemorySegment.NULL;
        }
        long address = context.address() - verbs_context.context$offset();
        return Native.sized(MemorySegment.ofAddress(address), verbs_context.sizeof());
    }

    /**
     * The function pointer at {@code opOffset} in the {@code verbs_context} of {@code context}, or
     * {@code NULL} when the provider is legacy, its structure is too short to hold the op, or the
     * op is not set.
     */
    public static MemorySegment op(MemorySegment context, long opOffset) {
        MemorySegment vctx = verbsContext(context);
        if (vctx.equals(MemorySegment.NULL)) {
            return MemorySegment.NULL;
        }
        long size = verbs_context.sz(vctx);
        if (size < verbs_context.sizeof() - opOffset) {
            return MemorySegment.NULL;
        }
        return vctx.get(java.lang.foreign.ValueLayout.ADDRESS, opOffset);
    }
}
