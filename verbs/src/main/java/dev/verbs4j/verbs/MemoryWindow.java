package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_context;
import dev.verbs4j.bindings.ibv_context_ops;
import dev.verbs4j.bindings.ibv_mw;
import dev.verbs4j.bindings.ibv_mw_bind;
import dev.verbs4j.bindings.ibv_mw_bind_info;
import dev.verbs4j.verbs.internal.Ibv;
import dev.verbs4j.verbs.internal.Native;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * A memory window ({@code struct ibv_mw}, from the provider's {@code alloc_mw}): a remote key for
 * a range of a memory region, bound and invalidated at run time. Type 1 windows are bound with
 * {@link #bind}; type 2 windows with a {@link Opcode#BIND_MW} work request
 * ({@link SendRequest#bindMemoryWindow}). Owned by its {@link ProtectionDomain}; closing it
 * calls the provider's {@code dealloc_mw}.
 */
public final class MemoryWindow extends NativeResource {

    private static final MethodHandle ALLOC_MW = Native.downcallPointerWithErrno(ibv_context_ops.alloc_mw.descriptor());
    private static final MethodHandle DEALLOC_MW = Native.downcallPointer(ibv_context_ops.dealloc_mw.descriptor(), false);
    private static final MethodHandle BIND_MW = Native.downcallPointer(ibv_context_ops.bind_mw.descriptor(), false);

    /** The type of a memory window. */
    public enum Type {
        /** Type 1: bound by {@code ibv_bind_mw()}, usable from any QP of the domain. */
        TYPE_1,
        /** Type 2: bound by a work request to one QP. */
        TYPE_2;

        int code() {
            return ordinal() + 1;
        }
    }

    private final ProtectionDomain pd;
    private final Type type;
    private final MemorySegment mw;
    private final MemorySegment ops;
    private volatile MemoryRegion boundRegion;

    MemoryWindow(ProtectionDomain pd, Type type) {
        super(pd);
        this.pd = pd;
        this.type = type;
        try (Use held = pd.use()) {
            this.ops = ibv_context.ops(pd.context().handle());
            this.mw = Ibv.createThrough(ALLOC_MW, ibv_context_ops.alloc_mw(ops), "ibv_alloc_mw",
                    type + " on " + pd.context().name(), ibv_mw.sizeof(), pd.handle(), type.code());
            attach();
        }
    }

    /** The window's type. */
    public Type type() {
        return type;
    }

    /**
     * The remote key the provider last set: at allocation and by each type 1 {@link #bind}. A type
     * 2 bind work request installs the key given in it, which the application keeps.
     */
    public int rkey() {
        try (Use held = use()) {
            return ibv_mw.rkey(mw);
        }
    }

    /**
     * Binds a type 1 window to {@code length} bytes at {@code offset} of {@code mr} with remote
     * {@code access}, through a bind work request on {@code qp} ({@code ibv_bind_mw()}); its
     * completion ({@link WcOpcode#BIND_MW}) arrives on the send CQ when {@code sendFlags} has
     * SIGNALED. Returns the new remote key. A zero {@code length} unbinds; the region is named then too
     * (providers read it).
     */
    public int bind(QueuePair qp, MemoryRegion mr, long offset, long length, int access, long wrId, int sendFlags) {
        if (mr == null) {
            throw new IllegalArgumentException("bind names a memory region, also to unbind (length 0): providers read it");
        }
        try (Use held = use(); Use heldQp = qp.use(); Use heldMr = mr.use()) {
            if (type != Type.TYPE_1) {
                throw new IllegalStateException("type 2 windows are bound with a BIND_MW work request");
            }
            if (mr != null && mr.protectionDomain() != pd) {
                throw new IllegalArgumentException("the memory region belongs to another protection domain");
            }
            if (mr != null && !mr.covers(offset, length)) {
                throw new IndexOutOfBoundsException("[" + offset + ", " + offset + " + " + length + ") is outside the memory region");
            }
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment bind = arena.allocate(ibv_mw_bind.layout());
                ibv_mw_bind.wr_id(bind, wrId);
                ibv_mw_bind.send_flags(bind, sendFlags);
                MemorySegment info = ibv_mw_bind.bind_info(bind);
                ibv_mw_bind_info.mr(info, mr == null ? MemorySegment.NULL : mr.handle());
                ibv_mw_bind_info.addr(info, mr == null ? 0 : mr.remoteAddress() + offset);
                ibv_mw_bind_info.length(info, length);
                ibv_mw_bind_info.mw_access_flags(info, access);
                int rc;
                try {
                    rc = (int) BIND_MW.invokeExact(ibv_context_ops.bind_mw(ops), qp.handle(), mw, bind);
                } catch (Throwable t) {
                    throw Ibv.unchecked(t);
                }
                Ibv.check(rc, "ibv_bind_mw", describe());
                boundTo(mr);
                return ibv_mw.rkey(mw);
            }
        }
    }

    /**
     * Records that this window is (or is being) bound to {@code mr}: the region then closes this
     * window before itself, as a region with a bound window cannot be deregistered.
     */
    void boundTo(MemoryRegion mr) {
        MemoryRegion previous = boundRegion;
        if (previous == mr) {
            return;
        }
        if (mr != null) {
            dependOn(mr);
        }
        boundRegion = mr;
        if (previous != null) {
            stopDependingOn(previous);
        }
    }

    @Override
    MemorySegment handle() {
        ensureOpen();
        return mw;
    }

    @Override
    protected void destroy() {
        int rc;
        try {
            rc = (int) DEALLOC_MW.invokeExact(ibv_context_ops.dealloc_mw(ops), mw);
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        }
        Ibv.check(rc, "ibv_dealloc_mw", describe());
    }

    @Override
    protected String describe() {
        return "MemoryWindow " + type + " on " + pd.context().name();
    }

    /** The key {@code ibv_inc_rkey()} gives: the low 8 bits (the "key" part) incremented. */
    public static int nextRkey(int rkey) {
        return (rkey & 0xffffff00) | ((rkey + 1) & 0xff);
    }
}
