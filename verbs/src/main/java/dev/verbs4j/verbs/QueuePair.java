package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_context;
import dev.verbs4j.bindings.ibv_context_ops;
import dev.verbs4j.bindings.ibv_qp;
import dev.verbs4j.bindings.ibv_qp_attr;
import dev.verbs4j.bindings.ibv_qp_cap;
import dev.verbs4j.bindings.ibv_qp_init_attr;
import dev.verbs4j.bindings.ibv_qp_init_attr_ex;
import dev.verbs4j.bindings.rdma_core_h;
import dev.verbs4j.verbs.internal.Ibv;
import dev.verbs4j.verbs.internal.Native;
import dev.verbs4j.verbs.internal.VerbsAccess;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * A queue pair ({@code struct ibv_qp}, from {@code ibv_create_qp()}): RC, UC or UD, or the two
 * sides of XRC: {@link QpType#XRC_SEND} (from {@link ProtectionDomain#createQueuePair}, as {@code
 * ibv_create_qp_ex()} with {@code IBV_QP_INIT_ATTR_PD} makes it) and {@link QpType#XRC_RECV} (from
 * {@link XrcDomain#createReceiveQueuePair()}, owned by that domain, without a protection domain). Typed
 * transitions ({@link #init}, {@link #readyToReceive}, {@link #readyToSend}, {@link #toError},
 * {@link #reset}) set the attribute masks each type needs; {@link #modify} takes any. {@link
 * #postSend} and {@link #postReceive} call the provider's operations directly and allocate
 * nothing. A UD queue pair joins multicast groups ({@link #attachMulticast}). Owned by its {@link
 * ProtectionDomain} and closed before its completion queues; closing it detaches its multicast
 * groups, then calls {@code ibv_destroy_qp()}.
 */
public final class QueuePair extends NativeResource {

    /** The Q_Key UD queue pairs get unless told otherwise (as in the rdma-core examples). */
    public static final int DEFAULT_QKEY = 0x11111111;

    /** The destination QPN of a UD send to a multicast group: every queue pair attached to it receives. */
    public static final int MULTICAST_QPN = 0xffffff;

    /** The multicast groups attached through this object, detached before it is destroyed. */
    private final MulticastGroups multicast = new MulticastGroups(this);

    private final ProtectionDomain pd;
    private final Context context;
    private final QpType type;
    private final boolean ud;
    private final MemorySegment qp;
    private final MemorySegment postSendOp;
    private final MemorySegment postRecvOp;
    private final int qpNum;
    private final int maxSendWr;
    private final int maxRecvWr;
    private final int maxSendSge;
    private final int maxRecvSge;
    private final int maxInlineData;
    /** {@code IBV_QP_INIT_ATTR_*} bits of {@code ibv_create_qp_ex()}. */
    static final int INIT_ATTR_PD = 1;
    static final int INIT_ATTR_XRCD = 1 << 1;
    static final int INIT_ATTR_SEND_OPS_FLAGS = 1 << 6;

    private final ExtendedQueuePair extended;
    private final VerbsAccess.QueuePairFactory factory;
    private final boolean borrowed;
    private volatile QpState state = QpState.RESET;
    private int port = 1;

    QueuePair(ProtectionDomain pd, QueuePairInit init) {
        this(pd, init, null);
    }

    /** A queue pair made by {@code factory} (the connection manager's), or by libibverbs when null. */
    QueuePair(ProtectionDomain pd, QueuePairInit init, VerbsAccess.QueuePairFactory factory) {
        super(pd);
        this.factory = factory;
        this.borrowed = false;
        this.pd = pd;
        this.context = pd.context();
        this.type = init.type();
        this.ud = type == QpType.UD;
        // an XRC send queue pair has no receive side: its messages land in the peer's XRC SRQs
        boolean receives = type != QpType.XRC_SEND;
        if (init.sendCq().context() != pd.context() || (receives && init.recvCq().context() != pd.context())) {
            throw new IllegalArgumentException("the completion queues belong to another context");
        }
        if (!receives && init.srq() != null) {
            throw new IllegalArgumentException("an XRC send queue pair has no receive side: no shared receive queue");
        }
        CompletionQueue recvCq = receives && init.recvCq() != init.sendCq() ? init.recvCq() : null;
        try (Use heldPd = pd.use(); Use heldSendCq = init.sendCq().use();
             Use heldRecvCq = recvCq == null ? null : recvCq.use();
             Use heldSrq = init.srq() == null ? null : init.srq().use();
             Arena arena = Arena.ofConfined()) {
            QpInitAttributes created = QpInitAttributes.write(arena, init, pd, receives);
            this.qp = created.create(pd, factory);
            MemorySegment cap = created.cap();
            this.maxSendWr = ibv_qp_cap.max_send_wr(cap);
            this.maxRecvWr = ibv_qp_cap.max_recv_wr(cap);
            this.maxSendSge = ibv_qp_cap.max_send_sge(cap);
            this.maxRecvSge = ibv_qp_cap.max_recv_sge(cap);
            this.maxInlineData = ibv_qp_cap.max_inline_data(cap);
            this.qpNum = ibv_qp.qp_num(qp);
            MemorySegment ops = ibv_context.ops(pd.context().handle());
            this.postSendOp = ibv_context_ops.post_send(ops);
            this.postRecvOp = ibv_context_ops.post_recv(ops);
            this.extended = init.sendOps() != 0 ? new ExtendedQueuePair(this, qp) : null;
            attach(init.sendCq(), recvCq, init.srq());
        }
        pd.context().track(qp.address(), this);
        if (factory != null) {
            queryState();
        }
    }

    /**
     * An XRC receive queue pair in {@code xrcd} ({@code ibv_create_qp_ex()} with {@code
     * IBV_QP_INIT_ATTR_XRCD}): no completion queues, no work queues of its own; what it receives
     * lands in the XRC shared receive queue the sender names.
     */
    QueuePair(XrcDomain xrcd) {
        super(xrcd);
        this.factory = null;
        this.borrowed = false;
        this.pd = null;
        this.context = xrcd.context();
        this.type = QpType.XRC_RECV;
        this.ud = false;
        try (Use held = xrcd.use(); Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ibv_qp_init_attr_ex.layout());
            ibv_qp_init_attr_ex.qp_type(attr, type.code());
            ibv_qp_init_attr_ex.comp_mask(attr, INIT_ATTR_XRCD);
            ibv_qp_init_attr_ex.xrcd(attr, xrcd.handle());
            this.qp = QpInitAttributes.createExtended(context, attr, type + " QP in " + xrcd.describe());
            this.maxSendWr = 0;
            this.maxRecvWr = 0;
            this.maxSendSge = 0;
            this.maxRecvSge = 0;
            this.maxInlineData = 0;
            this.qpNum = ibv_qp.qp_num(qp);
            MemorySegment ops = ibv_context.ops(context.handle());
            this.postSendOp = ibv_context_ops.post_send(ops);
            this.postRecvOp = ibv_context_ops.post_recv(ops);
            this.extended = null;
            attach();
        }
        context.track(qp.address(), this);
    }

    /**
     * A queue pair on {@code ibvQp}, made and destroyed by somebody else; {@code init} gives its
     * type, completion queues and capabilities (with send operations: an extended one, whose
     * {@code ibv_qp_to_qp_ex()} is valid), the {@code ibv_qp} its number and state.
     */
    QueuePair(ProtectionDomain pd, MemorySegment ibvQp, QueuePairInit init) {
        super(pd);
        this.factory = null;
        this.borrowed = true;
        this.pd = pd;
        this.context = pd.context();
        this.type = init.type();
        this.ud = type == QpType.UD;
        if (init.sendCq().context() != context || init.recvCq().context() != context) {
            throw new IllegalArgumentException("the completion queues belong to another context");
        }
        this.qp = Native.sized(ibvQp, ibv_qp.sizeof());
        this.maxSendWr = init.maxSendWr();
        this.maxRecvWr = init.maxRecvWr();
        this.maxSendSge = init.maxSendSge();
        this.maxRecvSge = init.maxRecvSge();
        this.maxInlineData = init.maxInlineData();
        this.qpNum = ibv_qp.qp_num(qp);
        this.state = QpState.of(ibv_qp.state(qp));
        MemorySegment ops = ibv_context.ops(context.handle());
        this.postSendOp = ibv_context_ops.post_send(ops);
        this.postRecvOp = ibv_context_ops.post_recv(ops);
        this.extended = init.sendOps() != 0 ? new ExtendedQueuePair(this, qp) : null;
        attach(init.sendCq(), init.recvCq() != init.sendCq() ? init.recvCq() : null);
        context.track(qp.address(), this);
    }

    /**
     * The extended send API ({@code ibv_wr_*}) of a queue pair created with {@link
     * QueuePairInit#sendOps}.
     *
     * @throws IllegalStateException when it was created without send operations
     */
    public ExtendedQueuePair extended() {
        try (Use held = use()) {
            if (extended == null) {
                throw new IllegalStateException(describe() + " was created without send operations (QueuePairInit.sendOps)");
            }
            return extended;
        }
    }

    /** Whether this is a UD queue pair, whose sends name an address handle. */
    boolean isUd() {
        return ud;
    }

    /** The queue pair number. */
    public int qpNum() {
        return qpNum;
    }

    /** The transport type. */
    public QpType type() {
        return type;
    }

    /**
     * The state as of the last transition made through this object (or, for a queue pair the
     * connection manager drives, as of the last {@link #queryState()}).
     */
    public QpState state() {
        return state;
    }

    /** The protection domain; null for an {@link QpType#XRC_RECV} queue pair, which belongs to an {@link XrcDomain}. */
    public ProtectionDomain protectionDomain() {
        return pd;
    }

    /** Send work requests the queue really holds. */
    public int maxSendWr() {
        return maxSendWr;
    }

    /** Receive work requests the queue really holds. */
    public int maxRecvWr() {
        return maxRecvWr;
    }

    /** Scatter/gather entries per send the queue really allows. */
    public int maxSendSge() {
        return maxSendSge;
    }

    /** Scatter entries per receive the queue really allows. */
    public int maxRecvSge() {
        return maxRecvSge;
    }

    /** INLINE bytes the queue really allows. */
    public int maxInlineData() {
        return maxInlineData;
    }

    /** Applies {@code attributes} ({@code ibv_modify_qp()}). */
    public void modify(QueuePairAttributes attributes) {
        try (Use held = use()) {
            QpState target = attributes.targetState();
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment attr = arena.allocate(ibv_qp_attr.layout());
                attributes.writeTo(attr);
                int rc = rdma_core_h.ibv_modify_qp(qp, attr, attributes.mask());
                if (rc != 0) {
                    throw new VerbsException("ibv_modify_qp", Math.abs(rc), describe() + " in state " + state
                            + (target != null ? " -> " + target : "") + ", attribute mask 0x" + Integer.toHexString(attributes.mask()));
                }
            }
            if (target != null) {
                state = target;
            }
        }
    }

    /** The state the device reports ({@code ibv_query_qp()}); also updates {@link #state()}. */
    public QpState queryState() {
        try (Use held = use()) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment attr = arena.allocate(ibv_qp_attr.layout());
                MemorySegment initAttr = arena.allocate(ibv_qp_init_attr.layout());
                Ibv.check(rdma_core_h.ibv_query_qp(qp, attr, QueuePairAttributes.STATE, initAttr), "ibv_query_qp", describe());
                state = QpState.of(ibv_qp_attr.qp_state(attr));
                return state;
            }
        }
    }

    /**
     * RESET → INIT on {@code port}: connected QPs allow remote read, write and atomics ({@link
     * #initConnected}); UD QPs get {@link #DEFAULT_QKEY} ({@link #initDatagram}).
     */
    public void init(int port) {
        if (type == QpType.UD) {
            initDatagram(port, DEFAULT_QKEY);
        } else {
            initConnected(port, Access.REMOTE_READ | Access.REMOTE_WRITE | Access.REMOTE_ATOMIC);
        }
    }

    /**
     * RESET → INIT of a connected (not UD) queue pair on {@code port}, allowing the remote
     * operations of {@code access} ({@link Access}).
     *
     * @throws IllegalStateException when this is a UD queue pair, whose INIT takes a Q_Key
     */
    public void initConnected(int port, int access) {
        if (type == QpType.UD) {
            throw new IllegalStateException(describe() + " is UD: its INIT takes a Q_Key (initDatagram), not access flags");
        }
        toInit(port, new QueuePairAttributes().accessFlags(access));
    }

    /**
     * RESET → INIT of a UD queue pair on {@code port} with Q_Key {@code qkey}.
     *
     * @throws IllegalStateException when this is not a UD queue pair, whose INIT takes access flags
     */
    public void initDatagram(int port, int qkey) {
        if (type != QpType.UD) {
            throw new IllegalStateException(describe() + " is " + type
                    + ": its INIT takes access flags (initConnected), not a Q_Key");
        }
        toInit(port, new QueuePairAttributes().qkey(qkey));
    }

    private void toInit(int port, QueuePairAttributes a) {
        modify(a.state(QpState.INIT).pkeyIndex(0).port(port));
        this.port = port;
    }

    /**
     * INIT → RTR towards {@code remote}. Connected QPs use the port's active MTU, a GRH from local
     * GID {@code sgidIndex} when the remote GID is not zero, and (RC, XRC receive) up to 16 incoming
     * reads and a 0.01 ms minimum RNR timer; UD QPs need no remote.
     */
    public void readyToReceive(QueuePairEndpoint remote, int sgidIndex) {
        if (type == QpType.UD) {
            readyToReceive();
            return;
        }
        QueuePairAttributes a = new QueuePairAttributes().state(QpState.RTR);
        if (type != QpType.UD) {
            Mtu mtu = context.queryPort(port).activeMtu();
            AddressVector av = remote.gid().isZero()
                    ? AddressVector.local(port, remote.lid())
                    : AddressVector.global(port, remote.gid(), sgidIndex);
            a.addressVector(av).pathMtu(mtu).destQpn(remote.qpn()).rqPsn(remote.psn());
            if (type == QpType.RC || type == QpType.XRC_RECV) {
                a.maxDestRdAtomic(readAtomicDepth()).minRnrTimer(12);
            }
        }
        modify(a);
    }

    /** INIT → RTR of a UD queue pair, which has no single remote. */
    public void readyToReceive() {
        if (type != QpType.UD) {
            throw new IllegalStateException(type + " queue pairs need the remote endpoint to become ready to receive");
        }
        modify(new QueuePairAttributes().state(QpState.RTR));
    }

    /**
     * RTR → RTS with send PSN {@code psn}; RC and XRC send QPs retry 7 times, RNR-retry 7 times
     * (without limit), with a 14 (67 ms) ACK timeout; XRC receive QPs get that timeout.
     */
    public void readyToSend(int psn) {
        readyToSend(psn, 14, 7, 7);
    }

    /**
     * RTR → RTS with the RC timeout, retry and RNR-retry counts given (for RC and XRC send QPs;
     * XRC receive QPs take the timeout only; UC and UD none).
     */
    public void readyToSend(int psn, int timeout, int retryCount, int rnrRetry) {
        QueuePairAttributes a = new QueuePairAttributes().state(QpState.RTS).sqPsn(psn);
        if (type == QpType.RC || type == QpType.XRC_SEND) {
            a.timeout(timeout).retryCount(retryCount).rnrRetry(rnrRetry).maxRdAtomic(readAtomicDepth());
        } else if (type == QpType.XRC_RECV) {
            a.timeout(timeout);
        }
        modify(a);
    }

    /**
     * INIT → RTR towards {@code remote} from the port's preferred GID ({@link
     * Context#preferredGidIndex}: RoCE v2 with the local IPv4 address where there is one).
     */
    public void readyToReceive(QueuePairEndpoint remote) {
        readyToReceive(remote, context.preferredGidIndex(port));
    }

    /** RESET → INIT → RTR → RTS towards {@code remote} from the port's preferred GID, sending from {@code psn}. */
    public void connect(int port, QueuePairEndpoint remote, int psn) {
        init(port);
        readyToReceive(remote);
        readyToSend(psn);
    }

    /** RESET → INIT → RTR → RTS towards {@code remote}, sending from PSN {@code psn}. */
    public void connect(int port, QueuePairEndpoint remote, int sgidIndex, int psn) {
        init(port);
        readyToReceive(remote, sgidIndex);
        readyToSend(psn);
    }

    /** Moves to ERR: outstanding work requests complete with {@link WcStatus#WR_FLUSH_ERR}. */
    public void toError() {
        modify(new QueuePairAttributes().state(QpState.ERR));
    }

    /** Moves to RESET, from which {@link #init} starts again. */
    public void reset() {
        modify(new QueuePairAttributes().state(QpState.RESET));
    }

    /** This QP's endpoint for the peer with the port's preferred GID. */
    public QueuePairEndpoint localEndpoint(int psn) {
        ensureOpen();
        return localEndpoint(context.preferredGidIndex(port), psn);
    }

    /** This QP's endpoint for the peer: the port's LID, the QPN, {@code psn}, GID {@code gidIndex}. */
    public QueuePairEndpoint localEndpoint(int gidIndex, int psn) {
        ensureOpen();
        return new QueuePairEndpoint(context.queryPort(port).lid(), qpNum, psn & 0xffffff, context.queryGid(port, gidIndex));
    }

    private int readAtomicDepth() {
        return Math.max(1, Math.min(16, context.queryDevice().maxQpRdAtom()));
    }

    /**
     * Attaches this UD queue pair to multicast group {@code mgid} ({@code ibv_attach_mcast()}):
     * from now on it receives the UD sends to that group (to {@link #MULTICAST_QPN} through an
     * address handle whose GID is {@code mgid}), as every other attached queue pair does. The
     * group stays attached until {@link #detachMulticast} or until this queue pair closes, which
     * detaches it first. On InfiniBand the subnet manager must know the group (its MLID); on RoCE
     * the MLID is 0 and the group an IPv6 multicast address, or an IPv4 one mapped into IPv6.
     *
     * @param mgid the group: a multicast GID ({@link Gid#isMulticast()})
     * @param mlid the group's multicast LID: 0 (RoCE) or 0xc000 to 0xfffe
     * @throws IllegalStateException    when this is not a UD queue pair, or it is attached to the group already
     * @throws IllegalArgumentException when {@code mgid} is not a multicast GID or {@code mlid} no multicast LID
     * @throws VerbsException           when the device refuses
     */
    public void attachMulticast(Gid mgid, int mlid) {
        try (Use held = use()) {
            multicast.attach(qp, mgid, mlid);
        }
    }

    /**
     * Detaches this queue pair from a multicast group that {@link #attachMulticast} attached it to
     * ({@code ibv_detach_mcast()}): it receives no more of the group's sends.
     *
     * @throws IllegalStateException    when it is not attached to that group (through this object)
     * @throws IllegalArgumentException when {@code mgid} is not a multicast GID or {@code mlid} no multicast LID
     * @throws VerbsException           when the device refuses
     */
    public void detachMulticast(Gid mgid, int mlid) {
        try (Use held = use()) {
            multicast.detach(qp, mgid, mlid);
        }
    }

    /**
     * The MGIDs of the multicast groups this queue pair is attached to, in the order attached.
     *
     * @throws IllegalStateException when closed
     */
    public List<Gid> multicastGroups() {
        ensureOpen();
        return multicast.mgids();
    }

    /**
     * Confines this queue pair's data path to the calling thread: its {@link #postSend} and {@link
     * #postReceive} from this thread take no atomic operation (with confined batches, {@link
     * SendRequests#confined}, none at all), and in exchange only this thread may close the queue
     * pair or anything whose close would close it (its protection domain, completion queues,
     * shared receive queue, context): such a close from another thread is an {@link
     * IllegalStateException}, before anything is closed, until this thread has closed the queue
     * pair (or has terminated). Other threads may still post (counted, as before).
     *
     * @return this queue pair
     * @throws IllegalStateException when closed, or confined to another thread already
     */
    public QueuePair confine() {
        confineToCurrentThread();
        return this;
    }

    /**
     * Posts the first {@code count} requests of {@code batch} as one chain ({@code ibv_post_send()}).
     * Allocates nothing.
     *
     * @throws VerbsException naming the errno and the index of the first request the provider refused
     */
    public void postSend(SendRequests batch, int count) {
        int rc;
        boolean counted = enterDataPath();
        ExtendedQueuePair classic = null;
        try {
            if (extended != null) {
                extended.beginClassicPost();
                classic = extended;
            }
            rc = batch.post(this, postSendOp, qp, count);
        } finally {
            if (classic != null) {
                classic.endClassicPost();
            }
            exitDataPath(counted);
        }
        if (rc != 0) {
            throw postSendFailure(rc, batch, count);
        }
        batch.boundWindows(count);
    }

    /** Posts the first {@code count} receive requests of {@code batch} ({@code ibv_post_recv()}). */
    public void postReceive(ReceiveRequests batch, int count) {
        int rc;
        boolean counted = enterDataPath();
        try {
            rc = batch.post(postRecvOp, qp, count);
        } finally {
            exitDataPath(counted);
        }
        if (rc != 0) {
            throw new VerbsException("ibv_post_recv", Math.abs(rc), "receive request " + batch.chain().badIndex() + " of "
                    + count + " on " + describe() + " in state " + state + " (max_recv_wr " + maxRecvWr + ", max_recv_sge "
                    + maxRecvSge + ")");
        }
    }

    private VerbsException postSendFailure(int rc, SendRequests batch, int count) {
        int bad = batch.chain().badIndex();
        String request = bad >= 0 ? "work request " + bad + " of " + count + " (" + batch.get(bad).describe() + ")"
                : count + " work requests";
        return new VerbsException("ibv_post_send", Math.abs(rc), request + " on " + describe() + " in state " + state
                + " (max_send_wr " + maxSendWr + ", max_send_sge " + maxSendSge + ", max_inline_data " + maxInlineData + ")");
    }

    @Override
    MemorySegment handle() {
        ensureOpen();
        return qp;
    }

    @Override
    protected void destroy() {
        context.untrack(qp.address());
        // a queue pair still attached to a group cannot be destroyed (EBUSY): detach first
        RuntimeException failure = multicast.detachAll(qp);
        if (borrowed) {
            if (failure != null) {
                throw failure;
            }
            return;
        }
        try {
            if (factory != null) {
                factory.destroy(qp);
            } else {
                Ibv.check(rdma_core_h.ibv_destroy_qp(qp), "ibv_destroy_qp", describe());
            }
        } catch (RuntimeException e) {
            if (failure != null) {
                e.addSuppressed(failure);
            }
            throw e;
        }
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    protected String describe() {
        return type + " QP 0x" + Integer.toHexString(qpNum) + " on " + context.name();
    }
}
