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
    private static final long WR_ID = ibv_qp_ex.wr_id$offset();
    private static final long WR_FLAGS = ibv_qp_ex.wr_flags$offset();
    private static final VarHandle OWNER;
    private static final VarHandle CLASSIC_POSTS;

    static {
        try {
            OWNER = MethodHandles.lookup().findVarHandle(ExtendedQueuePair.class, "owner", Thread.class);
            CLASSIC_POSTS = MethodHandles.lookup().findVarHandle(ExtendedQueuePair.class, "classicPosts", int.class);
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
    /**
     * Classic posts ({@link QueuePair#postSend}) in progress. The provider holds its send queue's
     * lock from {@code wr_start} to {@code wr_complete}, across Java code; a classic post waiting
     * for that lock inside a downcall that does not leave the Java thread state would hold up
     * every safepoint, and with it the batch's owner. So a post counts itself and then looks for
     * a batch, a batch takes the owner and then waits for the counted posts to leave: one of the
     * two always sees the other.
     */
    @SuppressWarnings("unused") // through CLASSIC_POSTS
    private volatile int classicPosts;
    /** The id and flags of the next work request, written into the {@code ibv_qp_ex} by each operation. */
    private long wrId;
    private int flags;

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
        // posts that counted themselves before the owner was set finish without the provider's lock
        while ((int) CLASSIC_POSTS.getVolatile(this) != 0) {
            Thread.onSpinWait();
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
        boolean c = operation(sendOp, "SEND");
        try {
            WR_SEND.invokeExact(sendOp, qpx);
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            qp.exitDataPath(c);
        }
        return this;
    }

    /** Adds a SEND_WITH_IMM; {@code immediate} in host order ({@code ibv_wr_send_imm()}). */
    public ExtendedQueuePair sendWithImmediate(int immediate) {
        boolean c = operation(sendWithImmediateOp, "SEND_WITH_IMM");
        try {
            WR_SEND_IMM.invokeExact(sendWithImmediateOp, qpx, Integer.reverseBytes(immediate));
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            qp.exitDataPath(c);
        }
        return this;
    }

    /** Adds a SEND_WITH_INV ({@code ibv_wr_send_inv()}). */
    public ExtendedQueuePair sendWithInvalidate(int invalidateRkey) {
        boolean c = operation(sendWithInvalidateOp, "SEND_WITH_INV");
        try {
            WR_SEND_INV.invokeExact(sendWithInvalidateOp, qpx, invalidateRkey);
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            qp.exitDataPath(c);
        }
        return this;
    }

    /** Adds an RDMA_WRITE ({@code ibv_wr_rdma_write()}). */
    public ExtendedQueuePair rdmaWrite(int rkey, long remoteAddress) {
        boolean c = operation(rdmaWriteOp, "RDMA_WRITE");
        try {
            WR_RDMA_WRITE.invokeExact(rdmaWriteOp, qpx, rkey, remoteAddress);
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            qp.exitDataPath(c);
        }
        return this;
    }

    /** Adds an RDMA_WRITE_WITH_IMM ({@code ibv_wr_rdma_write_imm()}). */
    public ExtendedQueuePair rdmaWriteWithImmediate(int rkey, long remoteAddress, int immediate) {
        boolean c = operation(rdmaWriteWithImmediateOp, "RDMA_WRITE_WITH_IMM");
        try {
            WR_RDMA_WRITE_IMM.invokeExact(rdmaWriteWithImmediateOp, qpx, rkey, remoteAddress, Integer.reverseBytes(immediate));
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            qp.exitDataPath(c);
        }
        return this;
    }

    /** Adds an RDMA_READ ({@code ibv_wr_rdma_read()}). */
    public ExtendedQueuePair rdmaRead(int rkey, long remoteAddress) {
        boolean c = operation(rdmaReadOp, "RDMA_READ");
        try {
            WR_RDMA_READ.invokeExact(rdmaReadOp, qpx, rkey, remoteAddress);
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            qp.exitDataPath(c);
        }
        return this;
    }

    /** Adds an ATOMIC_CMP_AND_SWP ({@code ibv_wr_atomic_cmp_swp()}). */
    public ExtendedQueuePair atomicCompareAndSwap(int rkey, long remoteAddress, long compare, long swap) {
        boolean c = operation(atomicCompareAndSwapOp, "ATOMIC_CMP_AND_SWP");
        try {
            WR_ATOMIC_CMP_SWP.invokeExact(atomicCompareAndSwapOp, qpx, rkey, remoteAddress, compare, swap);
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            qp.exitDataPath(c);
        }
        return this;
    }

    /** Adds an ATOMIC_FETCH_AND_ADD ({@code ibv_wr_atomic_fetch_add()}). */
    public ExtendedQueuePair atomicFetchAndAdd(int rkey, long remoteAddress, long add) {
        boolean c = operation(atomicFetchAndAddOp, "ATOMIC_FETCH_AND_ADD");
        try {
            WR_ATOMIC_FETCH_ADD.invokeExact(atomicFetchAndAddOp, qpx, rkey, remoteAddress, add);
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            qp.exitDataPath(c);
        }
        return this;
    }

    /** Adds a LOCAL_INV ({@code ibv_wr_local_inv()}). */
    public ExtendedQueuePair localInvalidate(int invalidateRkey) {
        boolean c = operation(localInvalidateOp, "LOCAL_INV");
        try {
            WR_LOCAL_INV.invokeExact(localInvalidateOp, qpx, invalidateRkey);
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            qp.exitDataPath(c);
        }
        return this;
    }

    /**
     * Sets the SGE of the last work request to {@code length} bytes at {@code offset} of {@code mr}
     * ({@code ibv_wr_set_sge()}); the region must be open and cover the range (the provider
     * copies its key, address and length: the device knows it by its key from here on, as after
     * a classic post); for an INLINE request it is held while the provider copies the data.
     */
    public ExtendedQueuePair setSge(MemoryRegion mr, long offset, int length) {
        boolean c = setter(setSgeOp, "wr_set_sge");
        // an INLINE request's data is read now: its region is held for the call; otherwise the
        // provider copies the key, address and length, and the region is only checked, as a
        // classic post checks it (the device knows it by its key from here on)
        boolean hold = (flags & SendFlags.INLINE) != 0;
        try {
            if (hold) {
                mr.enterCall();
            } else if (mr.isClosed()) {
                throw new IllegalStateException("wr_set_sge names " + mr + ", which is closed");
            }
            try {
                if (!mr.covers(offset, Integer.toUnsignedLong(length))) {
                    throw WorkRequest.outside(mr, offset, length);
                }
                WR_SET_SGE.invokeExact(setSgeOp, qpx, mr.lkey(), mr.address() + offset, length);
            } finally {
                if (hold) {
                    mr.exitCall();
                }
            }
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            qp.exitDataPath(c);
        }
        return this;
    }

    /** Copies {@code data} into the last work request now ({@code ibv_wr_set_inline_data()}). */
    public ExtendedQueuePair setInlineData(MemorySegment data) {
        if (!data.isNative()) {
            throw new IllegalArgumentException("inline data must be native memory");
        }
        boolean c = setter(setInlineDataOp, "wr_set_inline_data");
        // the segment is held by the downcall itself for the copy
        try {
            WR_SET_INLINE_DATA.invokeExact(setInlineDataOp, qpx, data, data.byteSize());
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            qp.exitDataPath(c);
        }
        return this;
    }

    /**
     * Sets the destination of the last UD work request ({@code ibv_wr_set_ud_addr()}); the provider
     * copies what it needs of {@code ah} now, while it is held.
     */
    public ExtendedQueuePair setUdAddress(AddressHandle ah, int remoteQpn, int remoteQkey) {
        boolean c = setter(setUdAddrOp, "wr_set_ud_addr");
        try {
            ah.enterCall();
            try {
                WR_SET_UD_ADDR.invokeExact(setUdAddrOp, qpx, ah.handle(), remoteQpn, remoteQkey);
            } finally {
                ah.exitCall();
            }
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            qp.exitDataPath(c);
        }
        return this;
    }

    /** Drops the work requests of the batch ({@code ibv_wr_abort()}) and closes it. */
    public void abort() {
        boolean c = setter(abortOp, "wr_abort");
        try {
            WR_ABORT.invokeExact(abortOp, qpx);
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            owner = null;
            qp.exitDataPath(c);
        }
    }

    /**
     * Posts the batch ({@code ibv_wr_complete()}) and closes it.
     *
     * @throws VerbsException when the provider refuses it (nothing of the batch is posted)
     */
    public void complete() {
        boolean c = setter(completeOp, "wr_complete");
        int rc;
        try {
            rc = (int) WR_COMPLETE.invokeExact(completeOp, qpx);
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            owner = null;
            qp.exitDataPath(c);
        }
        if (rc != 0) {
            throw new VerbsException("ibv_wr_complete", Math.abs(rc), qp.toString());
        }
    }

    /**
     * Begins a classic post: refused while a batch is open (the provider would wait for its lock
     * until the batch completes); otherwise no batch starts until {@link #endClassicPost()}.
     */
    void beginClassicPost() {
        CLASSIC_POSTS.getAndAdd(this, 1);
        Thread other = owner;
        if (other != null) {
            CLASSIC_POSTS.getAndAdd(this, -1);
            throw new IllegalStateException("a batch of the extended API (" + other + ") is open on " + qp
                    + ": complete() or abort() it before postSend");
        }
    }

    /** Ends what {@link #beginClassicPost()} began. */
    void endClassicPost() {
        CLASSIC_POSTS.getAndAdd(this, -1);
    }

    /**
     * Enters a work-request builder: the caller's open batch, the queue pair held, the next id and
     * flags written. Returns whether the call was counted; the caller exits the queue pair.
     */
    private boolean operation(MemorySegment op, String name) {
        boolean c = setter(op, name);
        qpx.set(ValueLayout.JAVA_LONG, WR_ID, wrId);
        qpx.set(ValueLayout.JAVA_INT, WR_FLAGS, flags);
        return c;
    }

    /**
     * Enters a call on the caller's open batch with the queue pair held; returns whether the call
     * was counted, and the caller exits the queue pair.
     */
    private boolean setter(MemorySegment op, String name) {
        checkOwner();
        if (op.address() == 0) {
            throw new IllegalStateException(qp + " was created without " + name
                    + " among its send operations (QueuePairInit.sendOps)");
        }
        return qp.enterDataPath();
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
