package dev.verbs4j.rdmacm;

import dev.verbs4j.bindings.ibv_qp_attr;
import dev.verbs4j.bindings.rdma_addr;
import dev.verbs4j.bindings.rdma_cm_event;
import dev.verbs4j.bindings.rdma_cm_id;
import dev.verbs4j.bindings.rdma_cm_join_mc_attr_ex;
import dev.verbs4j.bindings.rdma_conn_param;
import dev.verbs4j.bindings.rdma_core_h;
import dev.verbs4j.bindings.rdma_route;
import dev.verbs4j.rdmacm.internal.Cma;
import dev.verbs4j.rdmacm.internal.Devices;
import dev.verbs4j.rdmacm.internal.SocketAddresses;
import dev.verbs4j.verbs.Context;
import dev.verbs4j.verbs.NativeResource;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.Mtu;
import dev.verbs4j.verbs.QpState;
import dev.verbs4j.verbs.QpType;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairAttributes;
import dev.verbs4j.verbs.QueuePairInit;
import dev.verbs4j.verbs.VerbsException;
import dev.verbs4j.verbs.internal.Library;
import dev.verbs4j.verbs.internal.Native;
import dev.verbs4j.verbs.internal.VerbsAccess;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * A connection manager id ({@code struct rdma_cm_id}, from {@code rdma_create_id()}): the RDMA
 * counterpart of a socket. It binds, resolves, listens, connects, accepts and disconnects; the
 * queue pair created on it ({@link #createQueuePair}) is a verbs {@link QueuePair} whose states
 * the connection manager drives.
 *
 * <p>An id on an {@link EventChannel} is asynchronous: its operations return at once and their
 * outcome arrives as a {@link CmEvent} on the channel. An id without a channel ({@link
 * #createSynchronous}, {@link #createEndpoint}, {@link #getRequest}) is synchronous: each operation
 * blocks until its outcome and throws a {@link VerbsException} when it failed.
 *
 * <p>The id owns its native object and its queue pair: closing it closes the queue pair ({@code
 * rdma_destroy_qp}) and then calls {@code rdma_destroy_id()}. Ids on a channel are closed with it.
 */
public final class CmId extends NativeResource {

    private static final int OPTION_ID = 0;
    private static final int OPTION_ID_TOS = 0;
    private static final int OPTION_ID_REUSEADDR = 1;
    private static final int OPTION_ID_AFONLY = 2;
    private static final int OPTION_ID_ACK_TIMEOUT = 3;
    private static final int IBV_EVENT_COMM_EST = 3;
    private static final int MC_JOIN_FULLMEMBER = 0;
    private static final int MC_JOIN_SENDONLY_FULLMEMBER = 1;

    /** The Q_Key librdmacm gives the UD queue pairs of {@link PortSpace#UDP} ids ({@code RDMA_UDP_QKEY}). */
    public static final int UDP_QKEY = 0x01234567;

    private final MemorySegment id;
    private final PortSpace portSpace;
    private final CmId listener;
    private volatile EventChannel channel;
    private volatile QueuePair queuePair;
    private volatile CmEventType lastEvent;
    private volatile boolean listening;
    private final java.util.Set<InetSocketAddress> groups = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private CmId(EventChannel channel, MemorySegment id, PortSpace portSpace, CmId listener) {
        super(null);
        this.id = Native.sized(id, rdma_cm_id.sizeof());
        this.portSpace = portSpace;
        this.listener = listener;
        this.channel = channel;
        if (channel != null) {
            try {
                dependOn(channel);
            } catch (IllegalStateException e) {
                Cma.callVoid(Cma.DESTROY_ID, this.id);
                throw e;
            }
            channel.register(this.id.address(), this);
        }
    }

    static CmId create(EventChannel channel, PortSpace ps) {
        Library.ensureLoaded();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
            Cma.call(Cma.CREATE_ID, "rdma_create_id", ps + " id", channel == null ? MemorySegment.NULL : channel.handle_(),
                    out, MemorySegment.NULL, ps.code());
            return new CmId(channel, out.get(ValueLayout.ADDRESS, 0), ps, null);
        }
    }

    static CmId incoming(EventChannel channel, MemorySegment id, CmId listener) {
        return new CmId(channel, id, listener.portSpace, listener);
    }

    /**
     * A new synchronous id in port space {@code ps} (no event channel: every operation blocks
     * until its outcome). The caller owns it.
     */
    public static CmId createSynchronous(PortSpace ps) {
        return create(null, ps);
    }

    /**
     * A synchronous id made from a resolved address ({@code rdma_create_ep()}): for a passive
     * entry ({@link AddressInfo#PASSIVE}) bound to its source address, ready to {@link #listen};
     * otherwise with address and route resolved towards the destination, ready to {@link
     * #connect}. Create its queue pair with {@link #createQueuePair}. The caller owns it.
     */
    public static CmId createEndpoint(AddressInfo.Entry entry) {
        Library.ensureLoaded();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
            Cma.call(Cma.CREATE_EP, "rdma_create_ep", entry.toString(), out, entry.handle(), MemorySegment.NULL, MemorySegment.NULL);
            return new CmId(null, out.get(ValueLayout.ADDRESS, 0), entry.portSpace(), null);
        }
    }

    /** The port space. */
    public PortSpace portSpace() {
        return portSpace;
    }

    /** The event channel, or null for a synchronous id. */
    public EventChannel channel() {
        return channel;
    }

    /** The listener whose connection request created this id, or null. */
    public CmId listener() {
        return listener;
    }

    /** The type of the last event taken for this id from its channel, or null. */
    public CmEventType lastEvent() {
        return lastEvent;
    }

    void eventArrived(CmEvent event) {
        lastEvent = event.type();
    }

    /** Binds to a local address ({@code rdma_bind_addr}); port 0 picks a free port. Binding an IP also binds its device. */
    public void bind(InetSocketAddress local) {
        ensureOpen();
        try (Arena arena = Arena.ofConfined()) {
            Cma.call(Cma.BIND_ADDR, "rdma_bind_addr", describe() + " to " + local, id, SocketAddresses.write(arena, local));
        }
    }

    /**
     * Resolves {@code destination} to an RDMA address and binds the id to the local device that
     * reaches it ({@code rdma_resolve_addr}); outcome {@link CmEventType#ADDR_RESOLVED} or {@link
     * CmEventType#ADDR_ERROR} within {@code timeout}.
     *
     * @param source the local address to use, or null to let the routing table choose
     */
    public void resolveAddress(InetSocketAddress source, InetSocketAddress destination, Duration timeout) {
        ensureOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment src = source == null ? MemorySegment.NULL : SocketAddresses.write(arena, source);
            Cma.call(Cma.RESOLVE_ADDR, "rdma_resolve_addr", describe() + " to " + destination, id, src,
                    SocketAddresses.write(arena, destination), timeoutMillis(timeout));
        }
    }

    /** Resolves the route to the destination ({@code rdma_resolve_route}); outcome ROUTE_RESOLVED or ROUTE_ERROR. */
    public void resolveRoute(Duration timeout) {
        ensureOpen();
        Cma.call(Cma.RESOLVE_ROUTE, "rdma_resolve_route", describe(), id, timeoutMillis(timeout));
    }

    /** Listens for connection requests on the bound address ({@code rdma_listen}). */
    public void listen(int backlog) {
        ensureOpen();
        if (backlog < 0) {
            throw new IllegalArgumentException("backlog must not be negative, got " + backlog);
        }
        Cma.call(Cma.LISTEN, "rdma_listen", describe(), id, backlog);
        listening = true;
    }

    /**
     * Takes the next connection request of a synchronous listener ({@code rdma_get_request}),
     * blocking until one arrives, and returns its new synchronous id (owned by the caller).
     */
    public CmId getRequest() {
        ensureOpen();
        if (channel != null) {
            throw new IllegalStateException(describe() + " is asynchronous: its requests arrive as CONNECT_REQUEST events");
        }
        if (!listening) {
            throw new IllegalStateException(describe() + " does not listen: call listen() before getRequest()");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
            Cma.call(Cma.GET_REQUEST, "rdma_get_request", describe(), id, out);
            return new CmId(null, out.get(ValueLayout.ADDRESS, 0), portSpace, this);
        }
    }

    /**
     * The private data of the event that completed the last synchronous operation (for an id
     * from {@link #getRequest}, the connection request's; after a rejected connect, the
     * rejecter's), or empty.
     */
    public byte[] lastPrivateData() {
        ensureOpen();
        MemorySegment ev = rdma_cm_id.event(id);
        if (ev.equals(MemorySegment.NULL)) {
            return new byte[0];
        }
        ev = Native.sized(ev, rdma_cm_event.sizeof());
        MemorySegment c = rdma_cm_event.param.conn(rdma_cm_event.param(ev));
        int len = Byte.toUnsignedInt(rdma_conn_param.private_data_len(c));
        MemorySegment p = rdma_conn_param.private_data(c);
        return len == 0 || p.equals(MemorySegment.NULL) ? new byte[0] : Native.sized(p, len).toArray(ValueLayout.JAVA_BYTE);
    }

    /** Connects to the resolved destination ({@code rdma_connect}); outcome ESTABLISHED, or REJECTED, UNREACHABLE, CONNECT_ERROR. */
    public void connect(ConnectionParameters parameters) {
        ensureOpen();
        try (Arena arena = Arena.ofConfined()) {
            Cma.call(Cma.CONNECT, "rdma_connect", describe(), id, write(arena, parameters));
        }
    }

    /** Accepts the connection request this id came from ({@code rdma_accept}); outcome ESTABLISHED. */
    public void accept(ConnectionParameters parameters) {
        ensureOpen();
        try (Arena arena = Arena.ofConfined()) {
            Cma.call(Cma.ACCEPT, "rdma_accept", describe(), id, write(arena, parameters));
        }
    }

    /** Rejects the connection request this id came from ({@code rdma_reject}), sending {@code privateData} (may be empty). */
    public void reject(byte[] privateData) {
        ensureOpen();
        byte[] data = privateData == null ? new byte[0] : privateData;
        if (data.length > 255) {
            throw new IllegalArgumentException("reject private data of " + data.length + " bytes: at most 255");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = data.length == 0 ? MemorySegment.NULL : arena.allocateFrom(ValueLayout.JAVA_BYTE, data);
            Cma.call(Cma.REJECT, "rdma_reject", describe(), id, p, (byte) data.length);
        }
    }

    /** Disconnects ({@code rdma_disconnect}): the queue pair goes to the error state, both sides see DISCONNECTED. */
    public void disconnect() {
        ensureOpen();
        Cma.call(Cma.DISCONNECT, "rdma_disconnect", describe(), id);
    }

    /** Tells the connection manager that the queue pair saw its first receive ({@code rdma_notify(IBV_EVENT_COMM_EST)}). */
    public void notifyEstablished() {
        ensureOpen();
        Cma.call(Cma.NOTIFY, "rdma_notify", describe(), id, IBV_EVENT_COMM_EST);
    }

    /**
     * Completes an active connection whose queue pair the application created and drives itself
     * ({@code rdma_establish}): after the CONNECT_RESPONSE event, once the queue pair is in RTS
     * (see {@link #initQueuePairAttributes}). Ids with a queue pair made by {@link
     * #createQueuePair} never need it.
     */
    public void establish() {
        ensureOpen();
        Cma.call(Cma.ESTABLISH, "rdma_establish", describe(), id);
    }

    /**
     * The attributes that move a queue pair the application created itself (not with {@link
     * #createQueuePair}) to {@code target} (INIT, RTR or RTS) for this id's connection ({@code
     * rdma_init_qp_attr}): port, P_Key index, access flags, path, PSNs, remote QPN and the
     * resources the connection negotiated. Apply them with {@link QueuePair#modify}.
     */
    public QueuePairAttributes initQueuePairAttributes(QpState target) {
        ensureOpen();
        if (target != QpState.INIT && target != QpState.RTR && target != QpState.RTS) {
            throw new IllegalArgumentException("rdma_init_qp_attr gives the attributes for INIT, RTR or RTS, not " + target);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ibv_qp_attr.layout());
            MemorySegment mask = arena.allocate(ValueLayout.JAVA_INT);
            ibv_qp_attr.qp_state(attr, target.code());
            Cma.call(Cma.INIT_QP_ATTR, "rdma_init_qp_attr", describe() + " for " + target, id, attr, mask);
            return queuePairAttributes(attr, mask.get(ValueLayout.JAVA_INT, 0));
        }
    }

    private static QueuePairAttributes queuePairAttributes(MemorySegment attr, int mask) {
        QueuePairAttributes a = new QueuePairAttributes();
        if ((mask & 1) != 0) {
            a.state(QpState.of(ibv_qp_attr.qp_state(attr)));
        }
        if ((mask & 1 << 3) != 0) {
            a.accessFlags(ibv_qp_attr.qp_access_flags(attr));
        }
        if ((mask & 1 << 4) != 0) {
            a.pkeyIndex(Short.toUnsignedInt(ibv_qp_attr.pkey_index(attr)));
        }
        if ((mask & 1 << 5) != 0) {
            a.port(Byte.toUnsignedInt(ibv_qp_attr.port_num(attr)));
        }
        if ((mask & 1 << 6) != 0) {
            a.qkey(ibv_qp_attr.qkey(attr));
        }
        if ((mask & 1 << 7) != 0) {
            a.addressVector(EventChannel.addressVector(ibv_qp_attr.ah_attr(attr)));
        }
        if ((mask & 1 << 8) != 0) {
            a.pathMtu(Mtu.of(ibv_qp_attr.path_mtu(attr)));
        }
        if ((mask & 1 << 9) != 0) {
            a.timeout(Byte.toUnsignedInt(ibv_qp_attr.timeout(attr)));
        }
        if ((mask & 1 << 10) != 0) {
            a.retryCount(Byte.toUnsignedInt(ibv_qp_attr.retry_cnt(attr)));
        }
        if ((mask & 1 << 11) != 0) {
            a.rnrRetry(Byte.toUnsignedInt(ibv_qp_attr.rnr_retry(attr)));
        }
        if ((mask & 1 << 12) != 0) {
            a.rqPsn(ibv_qp_attr.rq_psn(attr));
        }
        if ((mask & 1 << 13) != 0) {
            a.maxRdAtomic(Byte.toUnsignedInt(ibv_qp_attr.max_rd_atomic(attr)));
        }
        if ((mask & 1 << 15) != 0) {
            a.minRnrTimer(Byte.toUnsignedInt(ibv_qp_attr.min_rnr_timer(attr)));
        }
        if ((mask & 1 << 16) != 0) {
            a.sqPsn(ibv_qp_attr.sq_psn(attr));
        }
        if ((mask & 1 << 17) != 0) {
            a.maxDestRdAtomic(Byte.toUnsignedInt(ibv_qp_attr.max_dest_rd_atomic(attr)));
        }
        if ((mask & 1 << 20) != 0) {
            a.destQpn(ibv_qp_attr.dest_qp_num(attr));
        }
        int known = 1 | 1 << 3 | 1 << 4 | 1 << 5 | 1 << 6 | 1 << 7 | 1 << 8 | 1 << 9 | 1 << 10 | 1 << 11 | 1 << 12 | 1 << 13
                | 1 << 15 | 1 << 16 | 1 << 17 | 1 << 20;
        if ((mask & ~known) != 0) {
            throw new IllegalStateException("rdma_init_qp_attr set attributes this layer does not carry: mask 0x"
                    + Integer.toHexString(mask & ~known));
        }
        return a;
    }

    /**
     * Moves the id and its pending events to {@code target} ({@code rdma_migrate_id}); null makes
     * it synchronous.
     */
    public void migrate(EventChannel target) {
        ensureOpen();
        EventChannel old = channel;
        if (target != null) {
            dependOn(target);
        }
        try {
            Cma.call(Cma.MIGRATE_ID, "rdma_migrate_id", describe(), id, target == null ? MemorySegment.NULL : target.handle_());
        } catch (RuntimeException e) {
            if (target != null) {
                stopDependingOn(target);
            }
            throw e;
        }
        if (old != null) {
            old.unregister(id.address());
            stopDependingOn(old);
        }
        if (target != null) {
            target.register(id.address(), this);
        }
        channel = target;
    }

    /** Sets the IP type of service of the connection ({@code RDMA_OPTION_ID_TOS}); before resolving. */
    public void setTypeOfService(int tos) {
        if (tos < 0 || tos > 255) {
            throw new IllegalArgumentException("type of service must be 0..255, got " + tos);
        }
        setOption(OPTION_ID_TOS, "TOS", new byte[]{(byte) tos});
    }

    /** Allows binding to a port in use ({@code RDMA_OPTION_ID_REUSEADDR}); before binding. */
    public void setReuseAddress(boolean on) {
        setOption(OPTION_ID_REUSEADDR, "REUSEADDR", intBytes(on ? 1 : 0));
    }

    /** Restricts an IPv6 wildcard bind to IPv6 ({@code RDMA_OPTION_ID_AFONLY}); before binding. */
    public void setAfOnly(boolean on) {
        setOption(OPTION_ID_AFONLY, "AFONLY", intBytes(on ? 1 : 0));
    }

    /** Sets the QP's local ACK timeout exponent (4.096 µs × 2^timeout, {@code RDMA_OPTION_ID_ACK_TIMEOUT}). */
    public void setAckTimeout(int timeout) {
        if (timeout < 0 || timeout > 31) {
            throw new IllegalArgumentException("ACK timeout must be 0..31, got " + timeout);
        }
        setOption(OPTION_ID_ACK_TIMEOUT, "ACK_TIMEOUT", new byte[]{(byte) timeout});
    }

    private void setOption(int name, String what, byte[] value) {
        ensureOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment v = arena.allocateFrom(ValueLayout.JAVA_BYTE, value);
            Cma.call(Cma.SET_OPTION, "rdma_set_option", describe() + " RDMA_OPTION_ID_" + what, id, OPTION_ID, name, v,
                    (long) value.length);
        }
    }

    private static byte[] intBytes(int v) {
        byte[] b = new byte[4];
        MemorySegment.ofArray(b).set(ValueLayout.JAVA_INT_UNALIGNED, 0, v);
        return b;
    }

    /**
     * Joins the multicast group {@code group} ({@code rdma_join_multicast}); the queue pair, if
     * any, is attached. Outcome MULTICAST_JOIN (with the group's address in {@link
     * CmEvent#datagram()}) or MULTICAST_ERROR.
     */
    public void joinMulticast(InetSocketAddress group) {
        ensureOpen();
        try (Arena arena = Arena.ofConfined()) {
            Cma.call(Cma.JOIN_MULTICAST, "rdma_join_multicast", describe() + " group " + group, id,
                    SocketAddresses.write(arena, group), MemorySegment.NULL);
            groups.add(group);
        }
    }

    /**
     * Joins the multicast group {@code group} ({@code rdma_join_multicast_ex}), as a full member or,
     * with {@code sendOnly}, as a send-only full member that receives nothing from the group.
     * Outcome MULTICAST_JOIN or MULTICAST_ERROR, as {@link #joinMulticast(InetSocketAddress)}.
     */
    public void joinMulticast(InetSocketAddress group, boolean sendOnly) {
        ensureOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(rdma_cm_join_mc_attr_ex.layout());
            rdma_cm_join_mc_attr_ex.comp_mask(attr, rdma_core_h.RDMA_CM_JOIN_MC_ATTR_ADDRESS()
                    | rdma_core_h.RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS());
            rdma_cm_join_mc_attr_ex.join_flags(attr, sendOnly ? MC_JOIN_SENDONLY_FULLMEMBER : MC_JOIN_FULLMEMBER);
            rdma_cm_join_mc_attr_ex.addr(attr, SocketAddresses.write(arena, group));
            Cma.call(Cma.JOIN_MULTICAST_EX, "rdma_join_multicast_ex", describe() + " group " + group
                    + (sendOnly ? " send-only" : ""), id, attr, MemorySegment.NULL);
            groups.add(group);
        }
    }

    /** Leaves the multicast group {@code group} ({@code rdma_leave_multicast}). */
    public void leaveMulticast(InetSocketAddress group) {
        ensureOpen();
        try (Arena arena = Arena.ofConfined()) {
            Cma.call(Cma.LEAVE_MULTICAST, "rdma_leave_multicast", describe() + " group " + group, id,
                    SocketAddresses.write(arena, group));
            groups.remove(group);
        }
    }

    /** The local address ({@code rdma_get_local_addr}), or null before bind/resolve. */
    public InetSocketAddress localAddress() {
        ensureOpen();
        return SocketAddresses.read(rdma_addr.src_addr(rdma_route.addr(rdma_cm_id.route(id))));
    }

    /** The peer's address ({@code rdma_get_peer_addr}), or null before resolve / request. */
    public InetSocketAddress peerAddress() {
        ensureOpen();
        return SocketAddresses.read(rdma_addr.dst_addr(rdma_route.addr(rdma_cm_id.route(id))));
    }

    /** The local port ({@code rdma_get_src_port}, in host order), 0 when unbound. */
    public int localPort() {
        InetSocketAddress a = localAddress();
        return a == null ? 0 : a.getPort();
    }

    /** The peer's port ({@code rdma_get_dst_port}, in host order), 0 when unknown. */
    public int peerPort() {
        InetSocketAddress a = peerAddress();
        return a == null ? 0 : a.getPort();
    }

    /** Whether the id is bound to a device (after bind to an address, resolve, or a request). */
    public boolean hasDevice() {
        ensureOpen();
        return !rdma_cm_id.verbs(id).equals(MemorySegment.NULL);
    }

    /**
     * The verbs context of the device the id is bound to. librdmacm opened the device and keeps it
     * open: the context is shared by every id on the device; closing it closes what the application
     * created from it.
     *
     * @throws IllegalStateException before the id is bound to a device
     */
    public Context context() {
        ensureOpen();
        MemorySegment verbs = rdma_cm_id.verbs(id);
        if (verbs.equals(MemorySegment.NULL)) {
            throw new IllegalStateException(describe() + " is not bound to a device yet (bind to an address, or resolve one)");
        }
        return Devices.context(verbs);
    }

    /** The device port the id uses (from 1), 0 before it is bound to a device. */
    public int portNumber() {
        ensureOpen();
        return Byte.toUnsignedInt(rdma_cm_id.port_num(id));
    }

    /**
     * Creates the id's queue pair ({@code rdma_create_qp}) on {@code pd}, which must belong to the
     * id's {@link #context()}. The connection manager moves it through its states: connected
     * queue pairs become ready on connect/accept, UD ones are ready to send at once. The queue
     * pair is closed with the id (or may be closed before it).
     */
    public QueuePair createQueuePair(ProtectionDomain pd, QueuePairInit init) {
        ensureOpen();
        QueuePair existing = queuePair;
        if (existing != null && !existing.isClosed()) {
            throw new IllegalStateException(describe() + " already has " + existing);
        }
        if (pd.context() != context()) {
            throw new IllegalArgumentException(pd + " belongs to " + pd.context() + ", not to the id's device " + context().name());
        }
        MemorySegment pdHandle = VerbsAccess.bridge().handle(pd);
        QueuePair qp = VerbsAccess.bridge().createQueuePair(pd, init, new VerbsAccess.QueuePairFactory() {
            @Override
            public MemorySegment create(MemorySegment initAttr, boolean extended) {
                if (extended) {
                    Cma.call(Cma.CREATE_QP_EX, "rdma_create_qp_ex", describe(), id, initAttr);
                } else {
                    Cma.call(Cma.CREATE_QP, "rdma_create_qp", describe(), id, pdHandle, initAttr);
                }
                return rdma_cm_id.qp(id);
            }

            @Override
            public void destroy(MemorySegment qp) {
                Cma.callVoid(Cma.DESTROY_QP, id);
            }
        });
        queuePair = qp;
        return qp;
    }

    /** The queue pair created on this id, or null. */
    public QueuePair queuePair() {
        QueuePair qp = queuePair;
        return qp == null || qp.isClosed() ? null : qp;
    }

    /** The queue pair type this id's port space implies (RC for TCP and IB, UD for UDP and IPoIB). */
    public QpType qpType() {
        ensureOpen();
        return QpType.of(rdma_cm_id.qp_type(id));
    }

    MemorySegment handle_() {
        ensureOpen();
        return id;
    }

    private static MemorySegment write(Arena arena, ConnectionParameters p) {
        if (p == null) {
            return MemorySegment.NULL;
        }
        MemorySegment c = arena.allocate(rdma_conn_param.layout());
        byte[] data = p.privateData();
        if (data.length > 0) {
            rdma_conn_param.private_data(c, arena.allocateFrom(ValueLayout.JAVA_BYTE, data));
            rdma_conn_param.private_data_len(c, (byte) data.length);
        }
        rdma_conn_param.responder_resources(c, (byte) p.responderResources());
        rdma_conn_param.initiator_depth(c, (byte) p.initiatorDepth());
        rdma_conn_param.flow_control(c, (byte) (p.flowControl() ? 1 : 0));
        rdma_conn_param.retry_count(c, (byte) p.retryCount());
        rdma_conn_param.rnr_retry_count(c, (byte) p.rnrRetryCount());
        rdma_conn_param.srq(c, (byte) (p.srq() ? 1 : 0));
        rdma_conn_param.qp_num(c, p.qpNum());
        return c;
    }

    private static int timeoutMillis(Duration timeout) {
        long ms = timeout.toMillis();
        if (ms <= 0 || ms > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("timeout must be 1 ms .. 24 days, got " + timeout);
        }
        return (int) ms;
    }

    @Override
    protected void destroy() {
        QueuePair qp = queuePair;
        RuntimeException failure = null;
        // Leave the groups still joined first: a queue pair attached to a group cannot be destroyed (EBUSY on rxe).
        for (InetSocketAddress group : groups) {
            try (Arena arena = Arena.ofConfined()) {
                Cma.callErrno(Cma.LEAVE_MULTICAST, id, SocketAddresses.write(arena, group));
            }
        }
        groups.clear();
        if (qp != null) {
            try {
                qp.close();
            } catch (RuntimeException e) {
                failure = e;
            }
        }
        EventChannel ch = channel;
        if (ch != null) {
            ch.unregister(id.address());
        }
        Cma.call(Cma.DESTROY_ID, "rdma_destroy_id", describe(), id);
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    protected String describe() {
        return "CmId " + portSpace + " 0x" + Long.toHexString(id.address());
    }
}
