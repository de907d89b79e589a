package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_ah;
import dev.verbs4j.bindings.ibv_ah_attr;
import dev.verbs4j.bindings.rdma_core_h;
import dev.verbs4j.verbs.internal.Ibv;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * An address handle ({@code struct ibv_ah}, from {@code ibv_create_ah()}): the destination of UD
 * sends. Owned by its {@link ProtectionDomain}; closing it calls {@code ibv_destroy_ah()}.
 */
public final class AddressHandle extends NativeResource {

    private static final MethodHandle CREATE_AH = Ibv.withErrno("ibv_create_ah");
    private static final MethodHandle CREATE_AH_FROM_WC = Ibv.withErrno("ibv_create_ah_from_wc");

    private final ProtectionDomain pd;
    private final AddressVector destination;
    private final MemorySegment ah;

    AddressHandle(ProtectionDomain pd, AddressVector destination) {
        super(pd);
        this.pd = pd;
        this.destination = destination;
        try (Use held = pd.use(); Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ibv_ah_attr.layout());
            destination.writeTo(attr);
            this.ah = Ibv.create(CREATE_AH, "ibv_create_ah", destination.toString(), ibv_ah.sizeof(),
                    pd.handle(), attr);
            attach();
        }
    }

    /** An address handle back to the sender of a UD receive ({@code ibv_create_ah_from_wc()}). */
    AddressHandle(ProtectionDomain pd, WorkCompletion wc, MemorySegment grh, int port) {
        super(pd);
        this.pd = pd;
        this.destination = null;
        try (Use held = pd.use()) {
            this.ah = Ibv.create(CREATE_AH_FROM_WC, "ibv_create_ah_from_wc", "reply to QP 0x"
                    + Integer.toHexString(wc.srcQp()) + " on " + pd.context().name(), ibv_ah.sizeof(), pd.handle(),
                    wc.nativeEntry(), grh, (byte) port);
            attach();
        }
    }

    /** The destination it was created for (null when created from a work completion). */
    public AddressVector destination() {
        return destination;
    }

    @Override
    MemorySegment handle() {
        ensureOpen();
        return ah;
    }

    @Override
    protected void destroy() {
        Ibv.check(rdma_core_h.ibv_destroy_ah(ah), "ibv_destroy_ah", describe());
    }

    @Override
    protected String describe() {
        return "AddressHandle on " + pd.context().name();
    }
}
