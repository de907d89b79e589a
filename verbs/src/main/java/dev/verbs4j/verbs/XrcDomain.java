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
import java.util.Objects;

/**
 * An XRC domain ({@code struct ibv_xrcd}, from {@code ibv_open_xrcd()} through the provider's
 * extended operations). Devices without XRC (Soft-RoCE among them) refuse it with {@code
 * EOPNOTSUPP}. In it live the XRC shared receive queues ({@link #createSharedReceiveQueue}) and
 * the XRC receive queue pairs ({@link #createReceiveQueuePair()}); the sending side is an {@link
 * QpType#XRC_SEND} queue pair of a {@link ProtectionDomain}, whose requests name the target queue
 * with {@link SendRequest#xrcRemoteSrqNumber}. Owned by its {@link Context}; closing it closes those
 * queues and queue pairs first, then calls {@code ibv_close_xrcd()}.
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
        try (Use held = context.use(); Arena arena = Arena.ofConfined()) {
            MemorySegment open = ExtendedOps.op(context.handle(), verbs_context.open_xrcd$offset());
            this.closeOp = ExtendedOps.op(context.handle(), verbs_context.close_xrcd$offset());
            MemorySegment attr = arena.allocate(ibv_xrcd_init_attr.layout());
            ibv_xrcd_init_attr.comp_mask(attr, INIT_ATTR_FD | INIT_ATTR_OFLAGS);
            ibv_xrcd_init_attr.fd(attr, -1);
            ibv_xrcd_init_attr.oflags(attr, O_CREAT);
            this.xrcd = Ibv.createThrough(OPEN_XRCD, closeOp.equals(MemorySegment.NULL) ? MemorySegment.NULL : open,
                    "ibv_open_xrcd", context.name() + " (XRC)", ibv_xrcd.sizeof(), context.handle(), attr);
            attach();
        }
    }

    /** The context this domain belongs to. */
    public Context context() {
        return context;
    }

    /**
     * Creates an XRC shared receive queue of {@code maxWr} requests with {@code maxSge} entries
     * each, in this domain and {@code pd}, completing on {@code cq} ({@code ibv_create_srq_ex()}
     * with {@code IBV_SRQT_XRC}). The queue belongs to {@code pd} and closes before this domain and
     * {@code cq}; senders reach it by its {@link SharedReceiveQueue#srqNumber()}.
     *
     * @throws NullPointerException     when {@code pd} or {@code cq} is null
     * @throws IllegalArgumentException when they belong to another context, or a size is below 1
     * @throws IllegalStateException    when this domain, {@code pd} or {@code cq} is closed
     * @throws VerbsException           naming {@code ibv_create_srq_ex} and the errno when the provider refuses
     */
    public SharedReceiveQueue createSharedReceiveQueue(ProtectionDomain pd, CompletionQueue cq, int maxWr, int maxSge) {
        try (Use held = use()) {
            Objects.requireNonNull(pd, "pd");
            Objects.requireNonNull(cq, "cq");
            if (pd.context() != context || cq.context() != context) {
                throw new IllegalArgumentException("the protection domain and completion queue of an XRC SRQ must belong to "
                        + context.name() + ", as this domain does");
            }
            return new SharedReceiveQueue(pd, this, cq, maxWr, maxSge);
        }
    }

    /**
     * Creates an XRC receive queue pair in this domain ({@code ibv_create_qp_ex()} with {@code
     * IBV_QP_INIT_ATTR_XRCD}): it has no completion queues and no work queues; connected to an XRC
     * send queue pair (through {@link QueuePair#init}, {@link QueuePair#readyToReceive} and {@link
     * QueuePair#readyToSend}), it delivers that peer's messages to the XRC shared receive queue each
     * names. Owned by this domain, which closes it first.
     *
     * @throws IllegalStateException when this domain is closed
     * @throws VerbsException        naming {@code ibv_create_qp_ex} and the errno when the provider refuses
     */
    public QueuePair createReceiveQueuePair() {
        try (Use held = use()) {
            return new QueuePair(this);
        }
    }

    @Override
    MemorySegment handle() {
        ensureOpen();
        return xrcd;
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
