package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_xrcd;
import dev.verbs4j.bindings.ibv_xrcd_init_attr;
import dev.verbs4j.bindings.verbs_context;
import dev.verbs4j.verbs.internal.ExtendedOps;
import dev.verbs4j.verbs.internal.Ibv;
import dev.verbs4j.verbs.internal.Native;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * An XRC domain ({@code struct ibv_xrcd}, from {@code ibv_open_xrcd()} through the provider's
 * extended operations). Devices without XRC (Soft-RoCE among them) refuse it with {@code
 * EOPNOTSUPP}. Owned by its {@link Context}; closing it calls {@code ibv_close_xrcd()}.
 */
public final class XrcDomain extends NativeResource {

    private static final MethodHandle OPEN_XRCD = Native.downcallPointerWithErrno(verbs_context.open_xrcd.descriptor());
    private static final MethodHandle CLOSE_XRCD = Native.downcallPointer(verbs_context.close_xrcd.descriptor(), false);
    private static final int INIT_ATTR_FD = 1;
    private static final int INIT_ATTR_OFLAGS = 2;
    private static final int O_CREAT = 0100;

    private final Context context;
    private final MemorySegment xrcd;
    private final MemorySegment closeOp;

    XrcDomain(Context context) {
        super(context);
        this.context = context;
        MemorySegment open = ExtendedOps.op(context.handle(), verbs_context.open_xrcd$offset());
        this.closeOp = ExtendedOps.op(context.handle(), verbs_context.close_xrcd$offset());
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ibv_xrcd_init_attr.layout());
            ibv_xrcd_init_attr.comp_mask(attr, INIT_ATTR_FD | INIT_ATTR_OFLAGS);
            ibv_xrcd_init_attr.fd(attr, -1);
            ibv_xrcd_init_attr.oflags(attr, O_CREAT);
            this.xrcd = Ibv.createThrough(OPEN_XRCD, closeOp.equals(MemorySegment.NULL) ? MemorySegment.NULL : open,
                    "ibv_open_xrcd", context.name() + " (XRC)", ibv_xrcd.sizeof(), context.handle(), attr);
        }
        attach();
    }

    @Override
    protected void destroy() {
        int rc;
        try {
            rc = (int) CLOSE_XRCD.invokeExact(closeOp, xrcd);
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        }
        Ibv.check(rc, "ibv_close_xrcd", context.name());
    }

    @Override
    protected String describe() {
        return "XrcDomain on " + context.name();
    }
}
