package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_qp_ex;
import dev.verbs4j.bindings.rdma_core_h;
import dev.verbs4j.verbs.internal.Ibv;
import dev.verbs4j.verbs.internal.Native;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The extended send API of a queue pair created with send operations ({@code struct ibv_qp_ex}
 * and the {@code ibv_wr_*} functions): {@link #start()}, then for each work request {@link
 * #wrId}, {@link #flags}, one operation and its data ({@link #setSge}, {@link #setInlineData},
 * {@link #setUdAddress}), then {@link #complete()} (or {@link #abort()}). Each call goes straight
 * to the provider and allocates nothing.
 *
 * <p>A batch belongs to the thread that started it: the provider holds its send queue's lock
 * from {@code start} to {@code complete}, so a second {@code start}, an operation without {@code
 * start}, or an operation from another thread is an {@link IllegalStateException} rather than a
 * deadlock or a write into a posted request; {@link QueuePair#postSend} waits for no batch and is
 * refused while one is open. Every call holds the queue pair open (a close waits for it and
 * calls after it throw; on the thread a confined queue pair belongs to, {@link
 * QueuePair#confine}, without an atomic operation), and the address handles (and regions of
 * INLINE requests) it names while the provider reads them; any other region is checked open and
 * covering the range, as a classic post does. Operations the queue pair was not created for ({@link QueuePairInit#sendOps}) are
 * refused. A view owned by its {@link QueuePair}; it owns no memory.
 */
public final class ExtendedQueuePair {

    private static final MethodHandle WR_START = Native.downcallPointer(ibv_qp_ex.wr_start.descriptor(), true);
    private static final MethodHandle WR_SEND = Native.downcallPointer(ibv_qp_ex.wr_send.descriptor(), true);
    private static final MethodHandle WR_SEND_IMM = Native.downcallPointer(ibv_qp_ex.wr_send_imm.descriptor(), true);
    private static final MethodHandle WR_SEND_INV = Native.downcallPointer(ibv_qp_ex.wr_send_inv.descriptor(), true);
    private static final MethodHandle WR_RDMA_WRITE = Native.downcallPointer(ibv_qp_ex.wr_rdma_write.descriptor(), true);
    private static final MethodHandle WR_RDMA_WRITE_IMM = Native.downcallPointer(ibv_qp_ex.wr_rdma_write_imm.descriptor(), true);
    private static final MethodHandle WR_RDMA_READ = Native.downcallPointer(ibv_qp_ex.wr_rdma_read.descriptor(), true);
    private static final MethodHandle WR_ATOMIC_CMP_SWP = Native.downcallPointer(ibv_qp_ex.wr_atomic_cmp_swp.descriptor(), true);
    private static final MethodHandle WR_ATOMIC_FETCH_ADD = Native.downcallPointer(ibv_qp_ex.wr_atomic_fetch_add.descriptor(), true);
    private static final MethodHandle WR_LOCAL_INV = Native.downcallPointer(ibv_qp_ex.wr_local_inv.descriptor(), true);
    private static final MethodHandle WR_SET_SGE = Native.downcallPointer(ibv_qp_ex.wr_set_sge.descriptor(), true);
    private static final MethodHandle WR_ABORT = Native.downcallPointer(ibv_qp_ex.wr_abort.descriptor(), true);
    private static final MethodHandle WR_SET_INLINE_DATA =
            Native.downcallPointer(ibv_qp_ex.wr_set_inline_data.descriptor(), true);
    private static final MethodHandle WR_SET_UD_ADDR = Native.downcallPointer(ibv_qp_ex.wr_set_ud_addr.descriptor(), true);
    private static final MethodHandle WR_COMPLETE = Native.downcallPointer(ibv_qp_ex.wr_complete.descriptor(), true);
    private static final MemorySegment NO_SEGMENT = MemorySegment.NULL;
    /**
     * The operations {@link #call} makes: lambdas that capture nothing, one object each, with
     * block bodies so that each {@code invokeExact} is a call returning void.
     */
    private static final Downcall SEND = (op, qpx, s, i, a, b, c) -> {
        WR_SEND.invokeExact(op, qpx);
    };
    private static final Downcall SEND_IMM = (op, qpx, s, i, a, b, c) -> {
        WR_SEND_IMM.invokeExact(op, qpx, i);
    };
    private static final Downcall SEND_INV = (op, qpx, s, i, a, b, c) -> {
        WR_SEND_INV.invokeExact(op, qpx, i);
    };
    private static final Downcall RDMA_WRITE = (op, qpx, s, i, a, b, c) -> {
        WR_RDMA_WRITE.invokeExact(op, qpx, i, a);
    };
    private static final Downcall RDMA_WRITE_IMM = (op, qpx, s, i, a, b, c) -> {
        WR_RDMA_WRITE_IMM.invokeExact(op, qpx, i, a, (int) b);
    };
    private static final Downcall RDMA_READ = (op, qpx, s, i, a, b, c) -> {
        WR_RDMA_READ.invokeExact(op, qpx, i, a);
    };
    private static final Downcall ATOMIC_CMP_SWP = (op, qpx, s, i, a, b, c) -> {
        WR_ATOMIC_CMP_SWP.invokeExact(op, qpx, i, a, b, c);
    };
    private static final Downcall ATOMIC_FETCH_ADD = (op, qpx, s, i, a, b, c) -> {
        WR_ATOMIC_FETCH_ADD.invokeExact(op, qpx, i, a, b);
    };
    private static final Downcall LOCAL_INV = (op, qpx, s, i, a, b, c) -> {
        WR_LOCAL_INV.invokeExact(op, qpx, i);
    };
    private static final Downcall SET_SGE = (op, qpx, s, i, a, b, c) -> {
        WR_SET_SGE.invokeExact(op, qpx, i, a, (int) b);
    };
    private static final Downcall SET_INLINE_DATA = (op, qpx, s, i, a, b, c) -> {
        WR_SET_INLINE_DATA.invokeExact(op, qpx, s, a);
    };
    private static final Downcall SET_UD_ADDR = (op, qpx, s, i, a, b, c) -> {
        WR_SET_UD_ADDR.invokeExact(op, qpx, s, i, (int) a);
    };
    private static final Downcall ABORT = (op, qpx, s, i, a, b, c) -> {
        WR_ABORT.invokeExact(op, qpx);
    };
    private static final long WR_ID = ibv_qp_ex.wr_id$offset();
    private static final long WR_FLAGS = ibv_qp_ex.wr_flags$offset();
    private static final VarHandle OWNER;

    static {
        try {
            OWNER = MethodHandles.lookup().findVarHandle(ExtendedQueuePair.class, "owner", Thread.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final QueuePair qp;
    private final MemorySegment qpx;
    private final MemorySegment startOp;
    private final MemorySegment sendOp;
    private final MemorySegment sendWithImmediateOp;
    private final MemorySegment sendWithInvalidateOp;
    private final MemorySegment rdmaWriteOp;
    private final MemorySegment rdmaWriteWithImmediateOp;
    private final MemorySegment rdmaReadOp;
    private final MemorySegment atomicCompareAndSwapOp;
    private final MemorySegment atomicFetchAndAddOp;
    private final MemorySegment localInvalidateOp;
    private final MemorySegment setSgeOp;
    private final MemorySegment abortOp;
    private final MemorySegment setInlineDataOp;
    private final MemorySegment setUdAddrOp;
    private final MemorySegment completeOp;
    /** The thread whose batch is open, or null. */
    @SuppressWarnings("unused") // through OWNER
    private volatile Thread owner;
    /** The id and flags of the next work request, written into the {@code ibv_qp_ex} by each operation. */
    private long wrId;
    private int flags;
    /** Whether the call in progress counted itself on the queue pair (not confined to this thread). */
    private boolean counted;

    ExtendedQueuePair(QueuePair qp, MemorySegment qpHandle) {
        this.qp = qp;
        this.qpx = Native.sized(rdma_core_h.ibv_qp_to_qp_ex(qpHandle), ibv_qp_ex.sizeof());
        this.startOp = ibv_qp_ex.wr_start(qpx);
        this.sendOp = ibv_qp_ex.wr_send(qpx);
        this.sendWithImmediateOp = ibv_qp_ex.wr_send_imm(qpx);
        this.sendWithInvalidateOp = ibv_qp_ex.wr_send_inv(qpx);
        this.rdmaWriteOp = ibv_qp_ex.wr_rdma_write(qpx);
        this.rdmaWriteWithImmediateOp = ibv_qp_ex.wr_rdma_write_imm(qpx);
        this.rdmaReadOp = ibv_qp_ex.wr_rdma_read(qpx);
        this.atomicCompareAndSwapOp = ibv_qp_ex.wr_atomic_cmp_swp(qpx);
        this.atomicFetchAndAddOp = ibv_qp_ex.wr_atomic_fetch_add(qpx);
        this.localInvalidateOp = ibv_qp_ex.wr_local_inv(qpx);
        this.setSgeOp = ibv_qp_ex.wr_set_sge(qpx);
        this.abortOp = ibv_qp_ex.wr_abort(qpx);
        this.setInlineDataOp = ibv_qp_ex.wr_set_inline_data(qpx);
        this.setUdAddrOp = ibv_qp_ex.wr_set_ud_addr(qpx);
        this.completeOp = ibv_qp_ex.wr_complete(qpx);
    }

    /** Sets the id of the next work request. */
    public ExtendedQueuePair wrId(long id) {
        qp.ensureOpen();
        checkOwner();
        this.wrId = id;
        return this;
    }

    /** Sets the {@link SendFlags} of the next work request. */
    public ExtendedQueuePair flags(int sendFlags) {
        qp.ensureOpen();
        checkOwner();
        this.flags = sendFlags;
        return this;
    }

    /**
     * Starts a batch of work requests ({@code ibv_wr_start()}) on this thread.
     *
     * @throws IllegalStateException when a batch is already open (on this thread or another)
     */
    public ExtendedQueuePair start() {
        Thread me = Thread.currentThread();
        Thread other = (Thread) OWNER.compareAndExchange(this, null, me);
        if (other != null) {
            throw new IllegalStateException(other == me ? "start() again before complete() or abort()"
                    : "a batch of " + other + " is open on " + qp + ": one batch at a time");
        }
        boolean started = false;
        try {
            boolean startCounted = qp.enterDataPath();
            try {
                WR_START.invokeExact(need(startOp, "wr_start"), qpx);
                started = true;
            } finally {
                qp.exitDataPath(startCounted);
            }
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            if (!started) {
                owner = null;
            }
        }
        return this;
    }

    /** Adds a SEND ({@code ibv_wr_send()}). */
    public ExtendedQueuePair send() {
        call(operation(sendOp, "SEND"), null, SEND, NO_SEGMENT, 0, 0, 0, 0);
        return this;
    }

    /** Adds a SEND_WITH_IMM; {@code immediate} in host order ({@code ibv_wr_send_imm()}). */
    public ExtendedQueuePair sendWithImmediate(int immediate) {
        call(operation(sendWithImmediateOp, "SEND_WITH_IMM"), null, SEND_IMM, NO_SEGMENT, Integer.reverseBytes(immediate),
                0, 0, 0);
        return this;
    }

    /** Adds a SEND_WITH_INV ({@code ibv_wr_send_inv()}). */
    public ExtendedQueuePair sendWithInvalidate(int invalidateRkey) {
        call(operation(sendWithInvalidateOp, "SEND_WITH_INV"), null, SEND_INV, NO_SEGMENT, invalidateRkey, 0, 0, 0);
        return this;
    }

    /** Adds an RDMA_WRITE ({@code ibv_wr_rdma_write()}). */
    public ExtendedQueuePair rdmaWrite(int rkey, long remoteAddress) {
        call(operation(rdmaWriteOp, "RDMA_WRITE"), null, RDMA_WRITE, NO_SEGMENT, rkey, remoteAddress, 0, 0);
        return this;
    }

    /** Adds an RDMA_WRITE_WITH_IMM ({@code ibv_wr_rdma_write_imm()}). */
    public ExtendedQueuePair rdmaWriteWithImmediate(int rkey, long remoteAddress, int immediate) {
        call(operation(rdmaWriteWithImmediateOp, "RDMA_WRITE_WITH_IMM"), null, RDMA_WRITE_IMM, NO_SEGMENT, rkey,
                remoteAddress, Integer.reverseBytes(immediate), 0);
        return this;
    }

    /** Adds an RDMA_READ ({@code ibv_wr_rdma_read()}). */
    public ExtendedQueuePair rdmaRead(int rkey, long remoteAddress) {
        call(operation(rdmaReadOp, "RDMA_READ"), null, RDMA_READ, NO_SEGMENT, rkey, remoteAddress, 0, 0);
        return this;
    }

    /** Adds an ATOMIC_CMP_AND_SWP ({@code ibv_wr_atomic_cmp_swp()}). */
    public ExtendedQueuePair atomicCompareAndSwap(int rkey, long remoteAddress, long compare, long swap) {
        call(operation(atomicCompareAndSwapOp, "ATOMIC_CMP_AND_SWP"), null, ATOMIC_CMP_SWP, NO_SEGMENT, rkey,
                remoteAddress, compare, swap);
        return this;
    }

    /** Adds an ATOMIC_FETCH_AND_ADD ({@code ibv_wr_atomic_fetch_add()}). */
    public ExtendedQueuePair atomicFetchAndAdd(int rkey, long remoteAddress, long add) {
        call(operation(atomicFetchAndAddOp, "ATOMIC_FETCH_AND_ADD"), null, ATOMIC_FETCH_ADD, NO_SEGMENT, rkey,
                remoteAddress, add, 0);
        return this;
    }

    /** Adds a LOCAL_INV ({@code ibv_wr_local_inv()}). */
    public ExtendedQueuePair localInvalidate(int invalidateRkey) {
        call(operation(localInvalidateOp, "LOCAL_INV"), null, LOCAL_INV, NO_SEGMENT, invalidateRkey, 0, 0, 0);
        return this;
    }

    /**
     * Sets the SGE of the last work request to {@code length} bytes at {@code offset} of {@code mr}
     * ({@code ibv_wr_set_sge()}); the region must be open and cover the range (the provider
     * copies its key, address and length: the device knows it by its key from here on, as after
     * a classic post); for an INLINE request it is held while the provider copies the data.
     */
    public ExtendedQueuePair setSge(MemoryRegion mr, long offset, int length) {
        // the range is checked by call() once the region is held
        call(setter(setSgeOp, "wr_set_sge"), mr, SET_SGE, NO_SEGMENT, mr.lkey(), mr.address() + offset, length, offset);
        return this;
    }

    /** Copies {@code data} into the last work request now ({@code ibv_wr_set_inline_data()}). */
    public ExtendedQueuePair setInlineData(MemorySegment data) {
        if (!data.isNative()) {
            throw new IllegalArgumentException("inline data must be native memory");
        }
        // the segment is held by the downcall itself for the copy
        call(setter(setInlineDataOp, "wr_set_inline_data"), null, SET_INLINE_DATA, data, 0, data.byteSize(), 0, 0);
        return this;
    }

    /**
     * Sets the destination of the last UD work request ({@code ibv_wr_set_ud_addr()}); the provider
     * copies what it needs of {@code ah} now, while it is held.
     */
    public ExtendedQueuePair setUdAddress(AddressHandle ah, int remoteQpn, int remoteQkey) {
        call(setter(setUdAddrOp, "wr_set_ud_addr"), ah, SET_UD_ADDR, null, remoteQpn, remoteQkey, 0, 0);
        return this;
    }

    /** Drops the work requests of the batch ({@code ibv_wr_abort()}) and closes it. */
    public void abort() {
        MemorySegment op = setter(abortOp, "wr_abort");
        try {
            call(op, null, ABORT, NO_SEGMENT, 0, 0, 0, 0);
        } finally {
            owner = null;
        }
    }

    /**
     * Posts the batch ({@code ibv_wr_complete()}) and closes it.
     *
     * @throws VerbsException when the provider refuses it (nothing of the batch is posted)
     */
    public void complete() {
        MemorySegment op = setter(completeOp, "wr_complete");
        int rc;
        try {
            rc = (int) WR_COMPLETE.invokeExact(op, qpx);
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            owner = null;
            qp.exitDataPath(counted);
        }
        if (rc != 0) {
            throw new VerbsException("ibv_wr_complete", Math.abs(rc), qp.toString());
        }
    }

    /**
     * One {@code ibv_wr_*} downcall, taking what it needs of the arguments passed: a segment, an
     * int and three longs. Each operation is a lambda that captures nothing, so calling one
     * allocates nothing.
     */
    @FunctionalInterface
    private interface Downcall {
        void invoke(MemorySegment op, MemorySegment qpx, MemorySegment s, int i, long a, long b, long c) throws Throwable;
    }

    /**
     * Makes {@code downcall} through {@code op}, which {@link #operation} or {@link #setter} entered
     * with the queue pair held, and lets go of the queue pair. When {@code held} is given, it is
     * held around the downcall, which gets its native handle for a null {@code s}; a held memory
     * region must cover {@code b} bytes (unsigned int) at offset {@code c}.
     */
    private void call(MemorySegment op, NativeResource held, Downcall downcall, MemorySegment s, int i, long a, long b,
                      long c) {
        try {
            if (held == null) {
                downcall.invoke(op, qpx, s, i, a, b, c);
                return;
            }
            if (held instanceof MemoryRegion mr && (flags & SendFlags.INLINE) == 0) {
                // the provider copies the key, address and length: the region is only checked,
                // as a classic post checks it (the device knows it by its key from here on); an
                // INLINE request's data is read now, so its region is held below
                if (mr.isClosed()) {
                    throw new IllegalStateException("wr_set_sge names " + mr + ", which is closed");
                }
                if (!mr.covers(c, Integer.toUnsignedLong((int) b))) {
                    throw WorkRequest.outside(mr, c, (int) b);
                }
                downcall.invoke(op, qpx, s, i, a, b, c);
                return;
            }
            held.enterCall();
            try {
                if (held instanceof MemoryRegion mr && !mr.covers(c, Integer.toUnsignedLong((int) b))) {
                    throw WorkRequest.outside(mr, c, (int) b);
                }
                downcall.invoke(op, qpx, s == null ? held.handle() : s, i, a, b, c);
            } finally {
                held.exitCall();
            }
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            qp.exitDataPath(counted);
        }
    }

    /** Refuses a classic post while a batch is open: the provider would wait for its lock for ever. */
    void checkNoBatch() {
        Thread other = owner;
        if (other != null) {
            throw new IllegalStateException("a batch of the extended API (" + other + ") is open on " + qp
                    + ": complete() or abort() it before postSend");
        }
    }

    /**
     * Enters a work-request builder: the caller's open batch, the queue pair held, the next id and
     * flags written. The caller exits the queue pair.
     */
    private MemorySegment operation(MemorySegment op, String name) {
        MemorySegment checked = setter(op, name);
        qpx.set(ValueLayout.JAVA_LONG, WR_ID, wrId);
        qpx.set(ValueLayout.JAVA_INT, WR_FLAGS, flags);
        return checked;
    }

    /** Enters a call on the caller's open batch with the queue pair held; the caller exits it. */
    private MemorySegment setter(MemorySegment op, String name) {
        checkOwner();
        counted = qp.enterDataPath();
        if (op.equals(MemorySegment.NULL)) {
            qp.exitDataPath(counted);
            throw new IllegalStateException(qp + " was created without " + name
                    + " among its send operations (QueuePairInit.sendOps)");
        }
        return op;
    }

    private static MemorySegment need(MemorySegment op, String name) {
        if (op.equals(MemorySegment.NULL)) {
            throw new IllegalStateException("the provider has no " + name);
        }
        return op;
    }

    private void checkOwner() {
        if (owner != Thread.currentThread()) {
            throw new IllegalStateException(owner == null ? "no batch is open: call start() first"
                    : "the batch is open on another thread (" + owner + ")");
        }
    }
}
