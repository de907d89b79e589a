package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_pd;
import dev.verbs4j.bindings.rdma_core_h;
import dev.verbs4j.verbs.internal.Ibv;
import dev.verbs4j.verbs.internal.Native;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * A protection domain ({@code struct ibv_pd}, from {@code ibv_alloc_pd()}): the memory regions,
 * queue pairs and address handles created in it may be used together. Owned by its
 * {@link Context}; closing it closes them first, then calls {@code ibv_dealloc_pd()}.
 */
public final class ProtectionDomain extends NativeResource {

    private static final MethodHandle ALLOC_PD = Ibv.withErrno("ibv_alloc_pd");

    private final Context context;
    private final MemorySegment pd;
    private final boolean borrowed;

    ProtectionDomain(Context context) {
        super(context);
        this.context = context;
        try (Use held = context.use()) {
            this.pd = Ibv.create(ALLOC_PD, "ibv_alloc_pd", context.name(), ibv_pd.sizeof(), context.handle());
            this.borrowed = false;
            attach();
        }
    }

    /** A domain on {@code ibvPd}, made and freed by somebody else. */
    ProtectionDomain(Context context, MemorySegment ibvPd) {
        super(context);
        this.context = context;
        this.pd = Native.sized(ibvPd, ibv_pd.sizeof());
        this.borrowed = true;
        attach();
    }

    /** The context this domain belongs to. */
    public Context context() {
        return context;
    }

    /**
     * Registers {@code segment} in place (no copy) with {@code access} flags ({@link Access}); the
     * device then reads and writes the application's own memory. The segment must come from an
     * open {@link RdmaArena}, whose close deregisters the region before it frees the memory, or
     * from {@link Arena#global()}, which is never freed: so the memory cannot be freed while the
     * device or a peer can still reach it.
     *
     * @throws IllegalArgumentException for memory of another arena (see {@link #registerUnchecked})
     *                                  or heap memory
     */
    public MemoryRegion register(MemorySegment segment, int access) {
        return register(segment, access, false, 0);
    }

    /**
     * Registers {@code segment}, of an {@link RdmaArena} or the global arena, so that remote peers
     * address it from {@code iova} ({@code ibv_reg_mr_iova2()}); {@code iova = 0} gives a zero-based
     * region.
     */
    public MemoryRegion register(MemorySegment segment, int access, long iova) {
        return register(segment, access, true, iova);
    }

    /**
     * Registers {@code segment} of any arena, without tying the region to the memory's lifetime:
     * the caller guarantees that the memory stays allocated until the region is closed. Closing
     * the segment's arena first leaves the device and remote peers able to write into freed (and
     * reused) memory. For memory whose lifetime the library cannot see, e.g. that of another
     * native library; prefer {@link #register} with an {@link RdmaArena}.
     */
    public MemoryRegion registerUnchecked(MemorySegment segment, int access) {
        return new MemoryRegion(this, checkedSegment(segment), access, null, null, false, 0);
    }

    /** {@link #registerUnchecked(MemorySegment, int)} addressed by peers from {@code iova}. */
    public MemoryRegion registerUnchecked(MemorySegment segment, int access, long iova) {
        return new MemoryRegion(this, checkedSegment(segment), access, null, null, true, iova);
    }

    private MemoryRegion register(MemorySegment segment, int access, boolean withIova, long iova) {
        checkedSegment(segment);
        if (segment.scope().equals(Arena.global().scope())) {
            return new MemoryRegion(this, segment, access, null, null, withIova, iova);
        }
        RdmaArena arena = RdmaArena.of(segment);
        if (arena == null) {
            throw new IllegalArgumentException("the segment's memory can be freed while registered: allocate it from an"
                    + " RdmaArena (which deregisters before freeing), or use registerUnchecked and keep it allocated"
                    + " until the region is closed");
        }
        return arena.register(() -> new MemoryRegion(this, segment, access, null, arena, withIova, iova));
    }

    /**
     * Allocates {@code size} bytes of page-aligned native memory, zeroed, and registers it; the
     * memory belongs to the region and is freed when it closes.
     */
    public MemoryRegion allocateRegion(long size, int access) {
        if (size <= 0) {
            throw new IllegalArgumentException("region size must be positive, got " + size);
        }
        Arena arena = Arena.ofShared();
        try {
            MemorySegment memory;
            try {
                memory = arena.allocate(size, 4096);
            } catch (OutOfMemoryError e) {
                throw new VerbsException("ibv_reg_mr", Errno.ENOMEM, "cannot allocate a region of " + size + " bytes");
            }
            return new MemoryRegion(this, memory, access, arena, null, false, 0);
        } catch (RuntimeException e) {
            if (arena.scope().isAlive()) {
                arena.close();
            }
            throw e;
        }
    }

    /** Creates a queue pair in this domain. */
    public QueuePair createQueuePair(QueuePairInit init) {
        return new QueuePair(this, init);
    }

    /** Creates a shared receive queue of {@code maxWr} requests with {@code maxSge} entries each. */
    public SharedReceiveQueue createSharedReceiveQueue(int maxWr, int maxSge) {
        return new SharedReceiveQueue(this, maxWr, maxSge);
    }

    /**
     * Allocates a memory window of {@code type}.
     *
     * @throws VerbsException {@code EOPNOTSUPP} when the device has no memory windows of that type
     */
    public MemoryWindow allocateMemoryWindow(MemoryWindow.Type type) {
        return new MemoryWindow(this, type);
    }

    /** Creates an address handle for UD sends to {@code destination}. */
    public AddressHandle createAddressHandle(AddressVector destination) {
        return new AddressHandle(this, destination);
    }

    /**
     * Creates an address handle that replies to the sender of the UD receive {@code wc}, whose
     * buffer starts with the 40-byte GRH in {@code grh} ({@code ibv_create_ah_from_wc()}).
     */
    public AddressHandle createAddressHandle(WorkCompletion wc, MemorySegment grh, int port) {
        if (grh.byteSize() < 40 || !grh.isNative()) {
            throw new IllegalArgumentException("the GRH is the first 40 bytes of a native receive buffer");
        }
        return new AddressHandle(this, wc, grh, port);
    }

    private static MemorySegment checkedSegment(MemorySegment segment) {
        if (!segment.isNative()) {
            throw new IllegalArgumentException("only native memory can be registered, not a heap segment");
        }
        if (!segment.scope().isAlive()) {
            throw new IllegalStateException("the segment's arena is already closed");
        }
        if (segment.byteSize() == 0) {
            throw new IllegalArgumentException("cannot register an empty segment");
        }
        return segment;
    }

    @Override
    MemorySegment handle() {
        ensureOpen();
        return pd;
    }


    @Override
    protected void destroy() {
        if (borrowed) {
            return;
        }
        Ibv.check(rdma_core_h.ibv_dealloc_pd(pd), "ibv_dealloc_pd", context.name());
    }

    @Override
    protected String describe() {
        return "ProtectionDomain on " + context.name();
    }
}
