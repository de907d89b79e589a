package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_context;
import dev.verbs4j.bindings.ibv_context_ops;
import dev.verbs4j.bindings.ibv_srq;
import dev.verbs4j.bindings.ibv_srq_attr;
import dev.verbs4j.bindings.ibv_srq_init_attr;
import dev.verbs4j.bindings.rdma_core_h;
import dev.verbs4j.verbs.internal.Ibv;
import dev.verbs4j.verbs.internal.Native;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * A shared receive queue ({@code struct ibv_srq}, from {@code ibv_create_srq()}): receive buffers
 * that several queue pairs consume. Owned by its {@link ProtectionDomain}, closed after the
 * queue pairs that use it; closing it calls {@code ibv_destroy_srq()}.
 */
public final class SharedReceiveQueue extends NativeResource {

    private static final MethodHandle POST_SRQ_RECV =
            Native.downcallPointer(ibv_context_ops.post_srq_recv.descriptor(), true);
    private static final int SRQ_LIMIT = 2;

    private final ProtectionDomain pd;
    private final MemorySegment srq;
    private final MemorySegment postOp;
    private final int maxWr;
    private final int maxSge;

    SharedReceiveQueue(ProtectionDomain pd, int maxWr, int maxSge) {
        super(pd);
        this.pd = pd;
        if (maxWr < 1 || maxSge < 1) {
            throw new IllegalArgumentException("maxWr and maxSge must be at least 1, got " + maxWr + ", " + maxSge);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment init = arena.allocate(ibv_srq_init_attr.layout());
            MemorySegment attr = ibv_srq_init_attr.attr(init);
            ibv_srq_attr.max_wr(attr, maxWr);
            ibv_srq_attr.max_sge(attr, maxSge);
            this.srq = Ibv.create(Ibv.CREATE_SRQ, "ibv_create_srq", pd.context().name() + ", " + maxWr + " WRs, "
                    + maxSge + " SGEs", ibv_srq.sizeof(), pd.handle(), init);
            this.maxWr = ibv_srq_attr.max_wr(attr);
            this.maxSge = ibv_srq_attr.max_sge(attr);
        }
        this.postOp = ibv_context_ops.post_srq_recv(ibv_context.ops(pd.context().handle()));
        attach();
        pd.context().track(srq.address(), this);
    }

    /** Receive requests the queue really holds. */
    public int maxWr() {
        return maxWr;
    }

    /** Scatter entries per request the queue really allows. */
    public int maxSge() {
        return maxSge;
    }

    /**
     * Arms the limit: when fewer than {@code limit} receive requests remain, the context reports
     * one {@link AsyncEventType#SRQ_LIMIT_REACHED} event ({@code ibv_modify_srq(IBV_SRQ_LIMIT)}).
     */
    public void armLimit(int limit) {
        ensureOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ibv_srq_attr.layout());
            ibv_srq_attr.srq_limit(attr, limit);
            Ibv.check(rdma_core_h.ibv_modify_srq(srq, attr, SRQ_LIMIT), "ibv_modify_srq", describe() + ", limit " + limit);
        }
    }

    /** Posts the first {@code count} requests of {@code batch} ({@code ibv_post_srq_recv()}); allocates nothing. */
    public void postReceive(ReceiveRequests batch, int count) {
        ensureOpen();
        int rc = batch.chain().post(POST_SRQ_RECV, postOp, srq, count);
        if (rc != 0) {
            throw new VerbsException("ibv_post_srq_recv", Math.abs(rc), "receive request " + batch.chain().badIndex()
                    + " of " + count + " on " + describe() + " (max_wr " + maxWr + ", max_sge " + maxSge + ")");
        }
    }

    @Override
    MemorySegment handle() {
        ensureOpen();
        return srq;
    }

    @Override
    protected void destroy() {
        pd.context().untrack(srq.address());
        Ibv.check(rdma_core_h.ibv_destroy_srq(srq), "ibv_destroy_srq", describe());
    }

    @Override
    protected String describe() {
        return "SharedReceiveQueue on " + pd.context().name();
    }
}
