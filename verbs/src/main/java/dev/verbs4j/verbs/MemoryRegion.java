package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_mr;
import dev.verbs4j.bindings.rdma_core_h;
import dev.verbs4j.verbs.internal.Ibv;
import dev.verbs4j.verbs.internal.Native;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicLong;
import java.lang.invoke.MethodHandle;

/**
 * A registered memory region ({@code struct ibv_mr}, from {@code ibv_reg_mr()} or {@code
 * ibv_reg_mr_iova2()}). It owns the memory it allocated ({@link ProtectionDomain#allocateRegion}),
 * or refers to memory of an {@link RdmaArena} (which deregisters it before freeing the memory) or
 * of the global arena; memory registered with {@link ProtectionDomain#registerUnchecked} the
 * application keeps alive itself. Closing it calls {@code ibv_dereg_mr()}; the memory it owns is
 * freed only once that succeeded. Memory windows bound to it are closed first.
 */
public final class MemoryRegion extends NativeResource {

    private static final MethodHandle REG_MR = Ibv.withErrno("ibv_reg_mr");

    /** The verbs of registrations at an I/O address and of access changes, bound when first needed. */
    private static final class Rarer {
        static final MethodHandle REG_MR_IOVA2 = Ibv.withErrno("ibv_reg_mr_iova2");
        static final MethodHandle REREG_MR = Ibv.withErrno("ibv_rereg_mr");
    }

    /**
     * How many regions have begun to close in this process: a batch whose requests were checked
     * at an earlier post skips checking them again while this has not changed (see {@link
     * WorkRequestBatch}). Counted as soon as the region is marked closed (every later call on it
     * is refused), before it is deregistered.
     */
    private static final AtomicLong CLOSES = new AtomicLong();

    private static final int REREG_CHANGE_ACCESS = 4;

    private final ProtectionDomain pd;
    private final MemorySegment segment;
    private final Arena ownedMemory;
    private final RdmaArena arena;
    private final MemorySegment mr;
    private int access;
    private final long iova;
    private int lkey;
    private int rkey;
    private final boolean borrowed;

    /**
     * Registers {@code segment}; {@code ownedMemory} is the arena it came from when the region owns
     * it, {@code arena} the RdmaArena that deregisters it before freeing the memory (else null).
     */
    MemoryRegion(ProtectionDomain pd, MemorySegment segment, int access, Arena ownedMemory, RdmaArena arena,
                 boolean withIova, long iova) {
        super(pd);
        this.pd = pd;
        this.segment = segment;
        this.ownedMemory = ownedMemory;
        this.arena = arena;
        this.access = access;
        String what = segment.byteSize() + " bytes at 0x" + Long.toHexString(segment.address())
                + ", access 0x" + Integer.toHexString(access);
        boolean optional = (access & Access.OPTIONAL_RANGE) != 0;
        try (Use held = pd.use()) {
            if (withIova || optional) {
                long va = withIova ? iova : segment.address();
                this.mr = Ibv.create(Rarer.REG_MR_IOVA2, "ibv_reg_mr_iova2", what, ibv_mr.sizeof(),
                        pd.handle(), segment, segment.byteSize(), va, access);
                this.iova = va;
            } else {
                this.mr = Ibv.create(REG_MR, "ibv_reg_mr", what, ibv_mr.sizeof(),
                        pd.handle(), segment, segment.byteSize(), access);
                this.iova = segment.address();
            }
            this.lkey = ibv_mr.lkey(mr);
            this.rkey = ibv_mr.rkey(mr);
            this.borrowed = false;
            attach();
        }
    }

    /** A region on {@code ibvMr}, made and freed by somebody else, over the memory it names. */
    MemoryRegion(ProtectionDomain pd, MemorySegment ibvMr) {
        super(pd);
        this.pd = pd;
        this.mr = Native.sized(ibvMr, ibv_mr.sizeof());
        this.segment = Native.sized(ibv_mr.addr(mr), ibv_mr.length(mr));
        this.ownedMemory = null;
        this.arena = null;
        this.access = 0;
        this.iova = segment.address();
        this.lkey = ibv_mr.lkey(mr);
        this.rkey = ibv_mr.rkey(mr);
        this.borrowed = true;
        attach();
    }

    /** The registered memory. */
    public MemorySegment segment() {
        return segment;
    }

    /** The local key, for scatter/gather entries. */
    public int lkey() {
        return lkey;
    }

    /** The remote key, for peers' RDMA and atomic operations. */
    public int rkey() {
        return rkey;
    }

    /** The address of the first byte in this process. */
    public long address() {
        return segment.address();
    }

    /** The address peers use for the first byte: the virtual address, or the iova it was registered with. */
    public long remoteAddress() {
        return iova;
    }

    /** The length in bytes. */
    public long length() {
        return segment.byteSize();
    }

    /** The access flags it was registered with. */
    public int access() {
        return access;
    }

    /** The protection domain it belongs to. */
    public ProtectionDomain protectionDomain() {
        return pd;
    }

    /**
     * Changes the access flags of the registered region in place ({@code ibv_rereg_mr()} with
     * {@code IBV_REREG_MR_CHANGE_ACCESS}); the keys may change.
     */
    public void reregister(int newAccess) {
        try (Use held = use(); Arena arena = Arena.ofConfined()) {
            MemorySegment capture = Native.captureSegment(arena);
            int rc;
            try {
                rc = (int) Rarer.REREG_MR.invokeExact(capture, mr, REREG_CHANGE_ACCESS, MemorySegment.NULL,
                        MemorySegment.NULL, 0L, newAccess);
            } catch (Throwable t) {
                throw Ibv.unchecked(t);
            }
            if (rc != 0) {
                // ibv_rereg_mr returns a negative IBV_REREG_MR_ERR_* code and sets errno.
                int errno = Native.errno(capture);
                throw new VerbsException("ibv_rereg_mr", errno != 0 ? errno : Errno.EINVAL,
                        describe() + ", access 0x" + Integer.toHexString(newAccess) + " (result " + rc + ")");
            }
        }
        this.access = newAccess;
        this.lkey = ibv_mr.lkey(mr);
        this.rkey = ibv_mr.rkey(mr);
    }

    @Override
    MemorySegment handle() {
        ensureOpen();
        return mr;
    }

    /** The number of regions whose close has begun (an acquiring read). */
    static long closes() {
        return CLOSES.get();
    }

    /** Whether {@code [offset, offset + length)} lies inside the region and its memory is alive. */
    boolean covers(long offset, long length) {
        return offset >= 0 && length >= 0 && offset <= segment.byteSize() - length && segment.scope().isAlive();
    }

    @Override
    void markedClosed() {
        CLOSES.incrementAndGet();
    }

    @Override
    protected void destroy() {
        if (borrowed) {
            return;
        }
        int rc = rdma_core_h.ibv_dereg_mr(mr);
        if (rc != 0) {
            // still registered: the device may still reach the memory, so it is not freed
            throw new VerbsException("ibv_dereg_mr", Math.abs(rc), describe() + "; its memory stays allocated");
        }
        if (ownedMemory != null) {
            ownedMemory.close();
        }
        if (arena != null) {
            arena.deregistered(this);
        }
    }

    @Override
    protected String describe() {
        return "MemoryRegion of " + segment.byteSize() + " bytes on " + pd.context().name();
    }
}
