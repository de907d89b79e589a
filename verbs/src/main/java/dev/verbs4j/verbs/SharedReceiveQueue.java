package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_context;
import dev.verbs4j.bindings.ibv_context_ops;
import dev.verbs4j.bindings.ibv_srq;
import dev.verbs4j.bindings.ibv_srq_attr;
import dev.verbs4j.bindings.ibv_srq_init_attr;
import dev.verbs4j.bindings.ibv_srq_init_attr_ex;
import dev.verbs4j.bindings.rdma_core_h;
import dev.verbs4j.bindings.verbs_context;
import dev.verbs4j.verbs.internal.ExtendedOps;
import dev.verbs4j.verbs.internal.Ibv;
import dev.verbs4j.verbs.internal.Native;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * A shared receive queue ({@code struct ibv_srq}, from {@code ibv_create_srq()}): receive buffers
 * that several queue pairs consume. An XRC shared receive queue ({@code ibv_create_srq_ex()} with
 * {@code IBV_SRQT_XRC}, from {@link XrcDomain#createSharedReceiveQueue}) takes the messages that
 * XRC senders address to its {@link #srqNumber()} and completes them on its own completion queue.
 * Owned by its {@link ProtectionDomain}, closed after the queue pairs that use it (an XRC one also
 * before its domain and completion queue); closing it calls {@code ibv_destroy_srq()}.
 */
public final class SharedReceiveQueue extends NativeResource {

    private static final MethodHandle CREATE_SRQ = Ibv.withErrno("ibv_create_srq");

    private static final MethodHandle CREATE_SRQ_EX =
            Native.downcallPointerWithErrno(verbs_context.create_srq_ex.descriptor());
    private static final MethodHandle GET_SRQ_NUM = Native.downcallPointer(verbs_context.get_srq_num.descriptor(), false);
    private static final int SRQ_LIMIT = 2;
    /** {@code IBV_SRQT_XRC} and the {@code IBV_SRQ_INIT_ATTR_*} bits an XRC SRQ is created with. */
    static final int SRQT_XRC = 1;
    static final int INIT_ATTR_TYPE = 1;
    static final int INIT_ATTR_PD = 1 << 1;
    static final int INIT_ATTR_XRCD = 1 << 2;
    static final int INIT_ATTR_CQ = 1 << 3;

    private final ProtectionDomain pd;
    private final MemorySegment srq;
    private final MemorySegment postOp;
    private final int maxWr;
    private final int maxSge;
    private final boolean xrc;

    SharedReceiveQueue(ProtectionDomain pd, int maxWr, int maxSge) {
        this(pd, null, null, maxWr, maxSge);
    }

    /**
     * A basic shared receive queue ({@code ibv_create_srq()}) when {@code xrcd} is null, else an
     * XRC one in {@code xrcd} completing on {@code cq} ({@code ibv_create_srq_ex()} through the
     * provider's operation, as verbs.h does for anything but a basic queue).
     */
    SharedReceiveQueue(ProtectionDomain pd, XrcDomain xrcd, CompletionQueue cq, int maxWr, int maxSge) {
        super(pd);
        this.pd = pd;
        this.xrc = xrcd != null;
        if (maxWr < 1 || maxSge < 1) {
            throw new IllegalArgumentException("maxWr and maxSge must be at least 1, got " + maxWr + ", " + maxSge);
        }
        Context context = pd.context();
        try (Use heldPd = pd.use(); Use heldXrcd = xrcd == null ? null : xrcd.use();
             Use heldCq = cq == null ? null : cq.use(); Arena arena = Arena.ofConfined()) {
            // ibv_srq_init_attr is the prefix of ibv_srq_init_attr_ex: the common fields are written alike.
            MemorySegment init = arena.allocate(xrcd == null ? ibv_srq_init_attr.layout() : ibv_srq_init_attr_ex.layout());
            MemorySegment attr = ibv_srq_init_attr.attr(init);
            ibv_srq_attr.max_wr(attr, maxWr);
            ibv_srq_attr.max_sge(attr, maxSge);
            String what = context.name() + ", " + maxWr + " WRs, " + maxSge + " SGEs";
            if (xrcd == null) {
                this.srq = Ibv.create(CREATE_SRQ, "ibv_create_srq", what, ibv_srq.sizeof(), pd.handle(), init);
            } else {
                ibv_srq_init_attr_ex.comp_mask(init, INIT_ATTR_TYPE | INIT_ATTR_XRCD | INIT_ATTR_CQ | INIT_ATTR_PD);
                ibv_srq_init_attr_ex.srq_type(init, SRQT_XRC);
                ibv_srq_init_attr_ex.pd(init, pd.handle());
                ibv_srq_init_attr_ex.xrcd(init, xrcd.handle());
                ibv_srq_init_attr_ex.cq(init, cq.handle());
                MemorySegment op = ExtendedOps.op(context.handle(), verbs_context.create_srq_ex$offset());
                this.srq = Ibv.createThrough(CREATE_SRQ_EX, op, "ibv_create_srq_ex", "XRC SRQ on " + what,
                        ibv_srq.sizeof(), context.handle(), init);
            }
            this.maxWr = ibv_srq_attr.max_wr(attr);
            this.maxSge = ibv_srq_attr.max_sge(attr);
            this.postOp = ibv_context_ops.post_srq_recv(ibv_context.ops(context.handle()));
            attach(xrcd, cq);
        }
        context.track(srq.address(), this);
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
     * The queue's number ({@code ibv_get_srq_num()} through the provider's operation): what XRC
     * senders put in {@link SendRequest#xrcRemoteSrqNumber} to reach an XRC shared receive queue.
     *
     * @throws VerbsException {@code EOPNOTSUPP} when the provider has no SRQ numbers (no XRC)
     */
    public int srqNumber() {
        try (Use held = use()) {
            MemorySegment op = ExtendedOps.op(pd.context().handle(), verbs_context.get_srq_num$offset());
            if (op.equals(MemorySegment.NULL)) {
                throw new VerbsException("ibv_get_srq_num", Errno.EOPNOTSUPP, describe());
            }
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment number = arena.allocate(ValueLayout.JAVA_INT);
                int rc;
                try {
                    rc = (int) GET_SRQ_NUM.invokeExact(op, srq, number);
                } catch (Throwable t) {
                    throw Ibv.unchecked(t);
                }
                Ibv.check(rc, "ibv_get_srq_num", describe());
                return number.get(ValueLayout.JAVA_INT, 0);
            }
        }
    }

    /**
     * Arms the limit: when fewer than {@code limit} receive requests remain, the context reports
     * one {@link AsyncEventType#SRQ_LIMIT_REACHED} event ({@code ibv_modify_srq(IBV_SRQ_LIMIT)}).
     */
    public void armLimit(int limit) {
        try (Use held = use()) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment attr = arena.allocate(ibv_srq_attr.layout());
                ibv_srq_attr.srq_limit(attr, limit);
                Ibv.check(rdma_core_h.ibv_modify_srq(srq, attr, SRQ_LIMIT), "ibv_modify_srq", describe() + ", limit " + limit);
            }
        }
    }

    /** Posts the first {@code count} requests of {@code batch} ({@code ibv_post_srq_recv()}); allocates nothing. */
    public void postReceive(ReceiveRequests batch, int count) {
        int rc;
        enterCall();
        try {
            rc = batch.post(postOp, srq, count);
        } finally {
            exitCall();
        }
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
        return (xrc ? "XRC " : "") + "SharedReceiveQueue on " + pd.context().name();
    }
}
