package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_qp_ex;
import dev.verbs4j.bindings.rdma_core_h;
import dev.verbs4j.verbs.internal.Ibv;
import dev.verbs4j.verbs.internal.Native;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The extended send API of a queue pair created with send operations ({@code struct ibv_qp_ex}
 * and the {@code ibv_wr_*} functions): {@link #start()}, then for each work request {@link
 * #wrId}, {@link #flags}, one operation and its data ({@link #setSge}, {@link #setInlineData},
 * {@link #setUdAddress}), then {@link #complete()}. Each call goes straight to the provider and
 * allocates nothing. A view owned by its {@link QueuePair}; it owns no memory.
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
        qpx.set(ValueLayout.JAVA_LONG, WR_ID, id);
        return this;
    }

    /** Sets the {@link SendFlags} of the next work request. */
    public ExtendedQueuePair flags(int sendFlags) {
        qpx.set(ValueLayout.JAVA_INT, WR_FLAGS, sendFlags);
        return this;
    }

    /** Starts a batch of work requests ({@code ibv_wr_start()}). */
    public ExtendedQueuePair start() {
        qp.enterCall();
        try {
            WR_START.invokeExact(startOp, qpx);
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            qp.exitCall();
        }
        return this;
    }

    /** Adds a SEND ({@code ibv_wr_send()}). */
    public ExtendedQueuePair send() {
        qp.enterCall();
        try {
            WR_SEND.invokeExact(sendOp, qpx);
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            qp.exitCall();
        }
        return this;
    }

    /** Adds a SEND_WITH_IMM; {@code immediate} in host order ({@code ibv_wr_send_imm()}). */
    public ExtendedQueuePair sendWithImmediate(int immediate) {
        qp.enterCall();
        try {
            WR_SEND_IMM.invokeExact(sendWithImmediateOp, qpx, Integer.reverseBytes(immediate));
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            qp.exitCall();
        }
        return this;
    }

    /** Adds a SEND_WITH_INV ({@code ibv_wr_send_inv()}). */
    public ExtendedQueuePair sendWithInvalidate(int invalidateRkey) {
        qp.enterCall();
        try {
            WR_SEND_INV.invokeExact(sendWithInvalidateOp, qpx, invalidateRkey);
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            qp.exitCall();
        }
        return this;
    }

    /** Adds an RDMA_WRITE ({@code ibv_wr_rdma_write()}). */
    public ExtendedQueuePair rdmaWrite(int rkey, long remoteAddress) {
        qp.enterCall();
        try {
            WR_RDMA_WRITE.invokeExact(rdmaWriteOp, qpx, rkey, remoteAddress);
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            qp.exitCall();
        }
        return this;
    }

    /** Adds an RDMA_WRITE_WITH_IMM ({@code ibv_wr_rdma_write_imm()}). */
    public ExtendedQueuePair rdmaWriteWithImmediate(int rkey, long remoteAddress, int immediate) {
        qp.enterCall();
        try {
            WR_RDMA_WRITE_IMM.invokeExact(rdmaWriteWithImmediateOp, qpx, rkey, remoteAddress, Integer.reverseBytes(immediate));
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            qp.exitCall();
        }
        return this;
    }

    /** Adds an RDMA_READ ({@code ibv_wr_rdma_read()}). */
    public ExtendedQueuePair rdmaRead(int rkey, long remoteAddress) {
        qp.enterCall();
        try {
            WR_RDMA_READ.invokeExact(rdmaReadOp, qpx, rkey, remoteAddress);
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            qp.exitCall();
        }
        return this;
    }

    /** Adds an ATOMIC_CMP_AND_SWP ({@code ibv_wr_atomic_cmp_swp()}). */
    public ExtendedQueuePair atomicCompareAndSwap(int rkey, long remoteAddress, long compare, long swap) {
        qp.enterCall();
        try {
            WR_ATOMIC_CMP_SWP.invokeExact(atomicCompareAndSwapOp, qpx, rkey, remoteAddress, compare, swap);
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            qp.exitCall();
        }
        return this;
    }

    /** Adds an ATOMIC_FETCH_AND_ADD ({@code ibv_wr_atomic_fetch_add()}). */
    public ExtendedQueuePair atomicFetchAndAdd(int rkey, long remoteAddress, long add) {
        qp.enterCall();
        try {
            WR_ATOMIC_FETCH_ADD.invokeExact(atomicFetchAndAddOp, qpx, rkey, remoteAddress, add);
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            qp.exitCall();
        }
        return this;
    }

    /** Adds a LOCAL_INV ({@code ibv_wr_local_inv()}). */
    public ExtendedQueuePair localInvalidate(int invalidateRkey) {
        qp.enterCall();
        try {
            WR_LOCAL_INV.invokeExact(localInvalidateOp, qpx, invalidateRkey);
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            qp.exitCall();
        }
        return this;
    }

    /** Sets the single SGE of the last work request ({@code ibv_wr_set_sge()}). */
    public ExtendedQueuePair setSge(int lkey, long address, int length) {
        qp.enterCall();
        try {
            WR_SET_SGE.invokeExact(setSgeOp, qpx, lkey, address, length);
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            qp.exitCall();
        }
        return this;
    }

    /** Drops the work requests of the batch ({@code ibv_wr_abort()}). */
    public ExtendedQueuePair abort() {
        qp.enterCall();
        try {
            WR_ABORT.invokeExact(abortOp, qpx);
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            qp.exitCall();
        }
        return this;
    }

    /** Sets the SGE of the last work request to {@code length} bytes at {@code offset} of {@code mr}. */
    public ExtendedQueuePair setSge(MemoryRegion mr, long offset, int length) {
        if (!mr.covers(offset, Integer.toUnsignedLong(length))) {
            throw SendRequest.outside(mr, offset, length);
        }
        return setSge(mr.lkey(), mr.address() + offset, length);
    }

    /** Copies {@code data} into the last work request ({@code ibv_wr_set_inline_data()}). */
    public ExtendedQueuePair setInlineData(MemorySegment data) {
        qp.enterCall();
        try {
            WR_SET_INLINE_DATA.invokeExact(setInlineDataOp, qpx, data, data.byteSize());
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            qp.exitCall();
        }
        return this;
    }

    /** Sets the destination of the last UD work request ({@code ibv_wr_set_ud_addr()}). */
    public ExtendedQueuePair setUdAddress(AddressHandle ah, int remoteQpn, int remoteQkey) {
        qp.enterCall();
        try {
            WR_SET_UD_ADDR.invokeExact(setUdAddrOp, qpx, ah.handle(), remoteQpn, remoteQkey);
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            qp.exitCall();
        }
        return this;
    }

    /**
     * Posts the batch ({@code ibv_wr_complete()}).
     *
     * @throws VerbsException when the provider refuses it (nothing of the batch is posted)
     */
    public void complete() {
        qp.enterCall();
        int rc;
        try {
            rc = (int) WR_COMPLETE.invokeExact(completeOp, qpx);
        } catch (Throwable t) {
            throw Ibv.unchecked(t);
        } finally {
            qp.exitCall();
        }
        if (rc != 0) {
            throw new VerbsException("ibv_wr_complete", Math.abs(rc), qp.toString());
        }
    }
}
