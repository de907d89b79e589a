package dev.verbs4j.rdmacm;

import dev.verbs4j.bindings.ibv_qp_attr;
import dev.verbs4j.bindings.rdma_addr;
import dev.verbs4j.bindings.rdma_cm_id;
import dev.verbs4j.bindings.rdma_cm_join_mc_attr_ex;
import dev.verbs4j.bindings.rdma_conn_param;
import dev.verbs4j.bindings.rdma_core_h;
import dev.verbs4j.bindings.rdma_route;
import dev.verbs4j.rdmacm.internal.Cma;
import dev.verbs4j.rdmacm.internal.Devices;
import dev.verbs4j.rdmacm.internal.SocketAddresses;
import dev.verbs4j.verbs.Context;
import dev.verbs4j.verbs.Errno;
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
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A connection manager id ({@code struct rdma_cm_id}, from {@code rdma_create_id()}): the RDMA
 * counterpart of a socket. It binds, resolves, listens, connects, accepts and disconnects; the
 * queue pair created on it ({@link #createQueuePair}) is a verbs {@link QueuePair} whose states
 * the connection manager drives.
 *
 * <p>An id on an {@link EventChannel} is asynchronous: its operations return at once and their
 * outcome arrives as a {@link CmEvent} on the channel. An id without a channel ({@link
 * #createSynchronous}, {@link #createEndpoint}, {@link #getRequest}) is synchronous: each operation
 * blocks until its outcome and throws a {@link VerbsException} when it failed. A synchronous id
 * has an event channel of its own (not librdmacm's: {@link #channel()} is null) on which its
 * operations wait for their outcome; one operation waits at a time, the others queue behind it.
 * Unlike librdmacm's own synchronous mode, an operation waits past events that are not its
 * outcome (TIMEWAIT_EXIT, ADDR_CHANGE) instead of ending on them.
 *
 * <p>The id owns its native object and its queue pair: closing it closes the queue pair ({@code
 * rdma_destroy_qp}) and then calls {@code rdma_destroy_id()}. Ids on a channel are closed with it.
 *
 * <p>Every call holds the id (and the channel librdmacm writes its command to) open for its
 * duration, so a {@link #close()} from another thread waits for it, and calls after the close
 * throw {@link IllegalStateException}. A thread blocked in a synchronous operation is woken by
 * the close and throws {@link IllegalStateException}. The queue pair is destroyed while no call
 * through which librdmacm works on it (connect, accept, disconnect, multicast, taking an event
 * that moves it) is in progress, and the id is not destroyed before its queue pair, whichever
 * thread closes which.
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
    private static final int ECONNRESET = 104;
    private static final int ECONNREFUSED = 111;

    /** The events that end a synchronous operation as a failure (when not its outcome). */
    private static final Set<CmEventType> FAILURES = EnumSet.of(CmEventType.ADDR_ERROR, CmEventType.ROUTE_ERROR,
            CmEventType.CONNECT_ERROR, CmEventType.UNREACHABLE, CmEventType.REJECTED, CmEventType.DEVICE_REMOVAL,
            CmEventType.MULTICAST_ERROR, CmEventType.DISCONNECTED);
    private static final Set<CmEventType> ADDR = EnumSet.of(CmEventType.ADDR_RESOLVED);
    private static final Set<CmEventType> ROUTE = EnumSet.of(CmEventType.ROUTE_RESOLVED);
    /** CONNECT_RESPONSE: the id has no queue pair; the application completes with {@link #establish}. */
    private static final Set<CmEventType> CONNECTED = EnumSet.of(CmEventType.ESTABLISHED, CmEventType.CONNECT_RESPONSE);
    private static final Set<CmEventType> ESTABLISHED = EnumSet.of(CmEventType.ESTABLISHED);
    private static final Set<CmEventType> DISCONNECTED = EnumSet.of(CmEventType.DISCONNECTED);
    private static final Set<CmEventType> JOINED = EnumSet.of(CmEventType.MULTICAST_JOIN);
    private static final Set<CmEventType> REQUEST = EnumSet.of(CmEventType.CONNECT_REQUEST);

    /** The Q_Key librdmacm gives the UD queue pairs of {@link PortSpace#UDP} ids ({@code RDMA_UDP_QKEY}). */
    public static final int UDP_QKEY = 0x01234567;

    private final MemorySegment id;
    private final PortSpace portSpace;
    private final CmId listener;
    /** The channel librdmacm reports this id's events on: the application's, or the id's own when {@link #synchronous}. */
    private volatile EventChannel channel;
    /** Whether {@link #channel} is the id's own (a synchronous id), closed with the id. */
    private volatile boolean synchronous;
    private volatile QueuePair queuePair;
    private volatile CmEventType lastEvent;
    private volatile boolean listening;
    private volatile byte[] lastPrivateData = new byte[0];
    private final Set<InetSocketAddress> groups = ConcurrentHashMap.newKeySet();
    /** Operations that may wait for an outcome, and migration: one at a time. */
    private final ReentrantLock operation = new ReentrantLock();
    /**
     * Guards {@code id->qp}: held for reading by the calls through which librdmacm works on the
     * queue pair, for writing while it is created, destroyed, or the id migrates.
     */
    private final ReentrantReadWriteLock qpLock = new ReentrantReadWriteLock();
    private final Condition qpDestroyed = qpLock.writeLock().newCondition();
    /** The factory whose queue pair {@code rdma_create_qp} made, until {@code rdma_destroy_qp}; guarded by {@link #qpLock}. */
    private Factory liveQp;

    /**
     * An id on {@code channel}: the application's ({@code own} false: the channel closes the id
     * first) or the id's own (closed with the id). Takes ownership of the native id.
     */
    private CmId(EventChannel channel, boolean own, MemorySegment id, PortSpace portSpace, CmId listener) {
        super(null);
        this.id = Native.sized(id, rdma_cm_id.sizeof());
        this.portSpace = portSpace;
        this.listener = listener;
        this.channel = channel;
        this.synchronous = own;
        channel.register(this.id.address(), this);
        if (!own) {
            try {
                dependOn(channel);
            } catch (IllegalStateException e) {
                Cma.callVoid(Cma.DESTROY_ID, this.id);
                channel.unregister(this.id.address());
                throw e;
            }
        }
    }

    static CmId create(EventChannel channel, PortSpace ps) {
        Library.ensureLoaded();
        try (Use held = channel.hold(); Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
            Cma.call(Cma.CREATE_ID, "rdma_create_id", ps + " id", channel.handle_(), out, MemorySegment.NULL, ps.code());
            return new CmId(channel, false, out.get(ValueLayout.ADDRESS, 0), ps, null);
        }
    }

    static CmId incoming(EventChannel channel, MemorySegment id, CmId listener) {
        return new CmId(channel, false, id, listener.portSpace, listener);
    }

    /**
     * A new synchronous id in port space {@code ps} (no event channel: every operation blocks
     * until its outcome). The caller owns it.
     */
    public static CmId createSynchronous(PortSpace ps) {
        Library.ensureLoaded();
        EventChannel own = EventChannel.createOwn("rdma_create_id", ps + " id");
        try (Use held = own.hold(); Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
            Cma.call(Cma.CREATE_ID, "rdma_create_id", ps + " id", own.handle_(), out, MemorySegment.NULL, ps.code());
            return new CmId(own, true, out.get(ValueLayout.ADDRESS, 0), ps, null);
        } catch (RuntimeException e) {
            own.close();
            throw e;
        }
    }

    /**
     * A synchronous id made from a resolved address ({@code rdma_create_ep()}): for a passive
     * entry ({@link AddressInfo#PASSIVE}) bound to its source address, ready to {@link #listen};
     * otherwise with address and route resolved towards the destination, ready to {@link
     * #connect}. Create its queue pair with {@link #createQueuePair}. The caller owns it. A
     * concurrent {@link AddressInfo#close()} waits until the entry has been read.
     */
    public static CmId createEndpoint(AddressInfo.Entry entry) {
        Library.ensureLoaded();
        MemorySegment raw;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
            MemorySegment ai = entry.acquire();
            try {
                Cma.call(Cma.CREATE_EP, "rdma_create_ep", entry.toString(), out, ai, MemorySegment.NULL, MemorySegment.NULL);
            } finally {
                entry.release();
            }
            raw = out.get(ValueLayout.ADDRESS, 0);
        }
        // librdmacm made it synchronous on a channel of its own, where a blocked call cannot be woken:
        // move it to a channel of ours (which also acknowledges the event of the route it resolved)
        EventChannel own;
        try {
            own = EventChannel.createOwn("rdma_create_ep", entry.toString());
        } catch (RuntimeException e) {
            Cma.callVoid(Cma.DESTROY_ID, raw);
            throw e;
        }
        try (Use held = own.hold()) {
            Cma.call(Cma.MIGRATE_ID, "rdma_migrate_id", entry.toString(), raw, own.handle_());
        } catch (RuntimeException e) {
            Cma.callVoid(Cma.DESTROY_ID, raw);
            own.close();
            throw e;
        }
        return new CmId(own, true, raw, entry.portSpace(), null);
    }

    /** The port space. */
    public PortSpace portSpace() {
        return portSpace;
    }

    /** The event channel, or null for a synchronous id. */
    public EventChannel channel() {
        return synchronous ? null : channel;
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

    /**
     * Runs {@code call}, a librdmacm function on this id, holding the id and its channel; on a
     * synchronous id then waits for the outcome among {@code outcome} and returns its event (null
     * on an asynchronous id).
     */
    private CmEvent operate(String function, String what, Runnable call, Set<CmEventType> outcome) {
        operation.lock();
        try {
            boolean sync;
            try (Use held = use(); Use heldChannel = channel.hold()) {
                sync = synchronous && outcome != null;
                call.run();
            }
            return sync ? awaitOutcome(function, what, outcome) : null;
        } finally {
            operation.unlock();
        }
    }

    /**
     * Waits on the id's own channel for the event that ends a synchronous operation: returns it
     * when it is one of {@code outcome} with status 0, throws a {@link VerbsException} naming
     * {@code function} when the operation failed. Holds the id only while taking an event and
     * sleeps on the descriptors between, so that a close from another thread wakes it.
     */
    private CmEvent awaitOutcome(String function, String what, Set<CmEventType> outcome) {
        EventChannel own = channel;
        while (true) {
            try (Use held = use()) {
                CmEvent ev = own.tryGetEvent();
                if (ev != null) {
                    CmEvent end = judge(ev, function, what, outcome);
                    if (end != null) {
                        return end;
                    }
                    continue;
                }
            } catch (IllegalStateException e) {
                if (isClosed()) {
                    throw new IllegalStateException(describe() + " was closed while " + function + " waited for its outcome", e);
                }
                throw e;
            }
            own.awaitReadable(-1);
        }
    }

    /** The outcome {@code ev} is, or null when it is not one; throws when it is a failure. */
    private CmEvent judge(CmEvent ev, String function, String what, Set<CmEventType> outcome) {
        if (ev.type() == CmEventType.CONNECT_REQUEST) {
            CmId child = ev.id();
            if (ev.listener() == this && outcome.contains(CmEventType.CONNECT_REQUEST)) {
                try {
                    child.makeSynchronous();
                } catch (RuntimeException e) {
                    refuse(child, e);
                    throw e;
                }
                child.lastPrivateData = ev.privateData();
                return ev;
            }
            refuse(child, null); // not asked for: getRequest takes the requests
            return null;
        }
        if (ev.id() != this) {
            return null; // an event of a request's id before it moved to its own channel
        }
        boolean expected = outcome.contains(ev.type());
        if (expected && ev.status() == 0) {
            lastPrivateData = ev.privateData();
            return ev;
        }
        if (expected || FAILURES.contains(ev.type())) {
            lastPrivateData = ev.privateData();
            throw new VerbsException(function, errno(ev), what + ": " + ev.type()
                    + (ev.status() != 0 ? " (status " + ev.status() + ")" : ""));
        }
        return null; // TIMEWAIT_EXIT, ADDR_CHANGE, ...: not an outcome
    }

    /** The errno librdmacm's synchronous calls report for {@code ev}. */
    private static int errno(CmEvent ev) {
        if (ev.type() == CmEventType.REJECTED) {
            return ECONNREFUSED;
        }
        if (ev.status() != 0) {
            return Math.abs(ev.status());
        }
        return switch (ev.type()) {
            case DISCONNECTED -> ECONNRESET;
            case DEVICE_REMOVAL -> Errno.ENODEV;
            case UNREACHABLE -> Errno.ETIMEDOUT;
            default -> Errno.EIO;
        };
    }

    /** Rejects and frees a connection request nobody takes. */
    private static void refuse(CmId child, RuntimeException cause) {
        try {
            child.reject(new byte[0]);
        } catch (RuntimeException e) {
            if (cause != null) {
                cause.addSuppressed(e);
            }
        }
        try {
            child.close();
        } catch (RuntimeException e) {
            if (cause != null) {
                cause.addSuppressed(e);
            }
        }
    }

    /** Moves a request's new id from its listener's channel to one of its own. */
    private void makeSynchronous() {
        EventChannel own = EventChannel.createOwn("rdma_migrate_id", describe());
        try (Use held = use()) {
            moveTo(own, true);
        } catch (RuntimeException e) {
            own.close();
            throw e;
        }
    }

    /** Binds to a local address ({@code rdma_bind_addr}); port 0 picks a free port. Binding an IP also binds its device. */
    public void bind(InetSocketAddress local) {
        try (Use held = use(); Use heldChannel = channel.hold(); Arena arena = Arena.ofConfined()) {
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
        int ms = timeoutMillis(timeout);
        String what = describe() + " to " + destination;
        operate("rdma_resolve_addr", what, () -> {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment src = source == null ? MemorySegment.NULL : SocketAddresses.write(arena, source);
                Cma.call(Cma.RESOLVE_ADDR, "rdma_resolve_addr", what, id, src, SocketAddresses.write(arena, destination), ms);
            }
        }, ADDR);
    }

    /** Resolves the route to the destination ({@code rdma_resolve_route}); outcome ROUTE_RESOLVED or ROUTE_ERROR. */
    public void resolveRoute(Duration timeout) {
        int ms = timeoutMillis(timeout);
        operate("rdma_resolve_route", describe(), () -> Cma.call(Cma.RESOLVE_ROUTE, "rdma_resolve_route", describe(), id, ms), ROUTE);
    }

    /** Listens for connection requests on the bound address ({@code rdma_listen}). */
    public void listen(int backlog) {
        if (backlog < 0) {
            throw new IllegalArgumentException("backlog must not be negative, got " + backlog);
        }
        try (Use held = use(); Use heldChannel = channel.hold()) {
            Cma.call(Cma.LISTEN, "rdma_listen", describe(), id, backlog);
            listening = true;
        }
    }

    /**
     * Takes the next connection request of a synchronous listener ({@code rdma_get_request}),
     * blocking until one arrives, and returns its new synchronous id (owned by the caller). The
     * request's event is acknowledged at once (its private data is kept for {@link
     * #lastPrivateData()}), so the listener can always be closed; a close from another thread
     * wakes the caller, which then throws {@link IllegalStateException}.
     */
    public CmId getRequest() {
        ensureOpen();
        if (!synchronous) {
            throw new IllegalStateException(describe() + " is asynchronous: its requests arrive as CONNECT_REQUEST events");
        }
        if (!listening) {
            throw new IllegalStateException(describe() + " does not listen: call listen() before getRequest()");
        }
        operation.lock();
        try {
            return awaitOutcome("rdma_get_request", describe(), REQUEST).id();
        } finally {
            operation.unlock();
        }
    }

    /**
     * The private data of the event that completed the last synchronous operation (for an id
     * from {@link #getRequest}, the connection request's; after a rejected connect, the
     * rejecter's), or empty. A copy, taken when the operation returned.
     */
    public byte[] lastPrivateData() {
        ensureOpen();
        return lastPrivateData.clone();
    }

    /** Connects to the resolved destination ({@code rdma_connect}); outcome ESTABLISHED, or REJECTED, UNREACHABLE, CONNECT_ERROR. */
    public void connect(ConnectionParameters parameters) {
        operate("rdma_connect", describe(), () -> {
            qpLock.readLock().lock(); // reads id->qp
            try (Arena arena = Arena.ofConfined()) {
                Cma.call(Cma.CONNECT, "rdma_connect", describe(), id, write(arena, parameters));
            } finally {
                qpLock.readLock().unlock();
            }
        }, CONNECTED);
    }

    /** Accepts the connection request this id came from ({@code rdma_accept}); outcome ESTABLISHED. */
    public void accept(ConnectionParameters parameters) {
        // librdmacm waits for no outcome of a UD accept
        operate("rdma_accept", describe(), () -> {
            qpLock.readLock().lock(); // moves id->qp to RTR and RTS
            try (Arena arena = Arena.ofConfined()) {
                Cma.call(Cma.ACCEPT, "rdma_accept", describe(), id, write(arena, parameters));
            } finally {
                qpLock.readLock().unlock();
            }
        }, qpTypeCode() == QpType.UD.code() ? null : ESTABLISHED);
    }

    /** Rejects the connection request this id came from ({@code rdma_reject}), sending {@code privateData} (may be empty). */
    public void reject(byte[] privateData) {
        byte[] data = privateData == null ? new byte[0] : privateData;
        if (data.length > 255) {
            throw new IllegalArgumentException("reject private data of " + data.length + " bytes: at most 255");
        }
        try (Use held = use(); Use heldChannel = channel.hold(); Arena arena = Arena.ofConfined()) {
            MemorySegment p = data.length == 0 ? MemorySegment.NULL : arena.allocateFrom(ValueLayout.JAVA_BYTE, data);
            Cma.call(Cma.REJECT, "rdma_reject", describe(), id, p, (byte) data.length);
        }
    }

    /** Disconnects ({@code rdma_disconnect}): the queue pair goes to the error state, both sides see DISCONNECTED. */
    public void disconnect() {
        operate("rdma_disconnect", describe(), () -> {
            qpLock.readLock().lock(); // moves id->qp to ERR
            try {
                Cma.call(Cma.DISCONNECT, "rdma_disconnect", describe(), id);
            } finally {
                qpLock.readLock().unlock();
            }
        }, DISCONNECTED);
    }

    /** Tells the connection manager that the queue pair saw its first receive ({@code rdma_notify(IBV_EVENT_COMM_EST)}). */
    public void notifyEstablished() {
        try (Use held = use(); Use heldChannel = channel.hold()) {
            Cma.call(Cma.NOTIFY, "rdma_notify", describe(), id, IBV_EVENT_COMM_EST);
        }
    }

    /**
     * Completes an active connection whose queue pair the application created and drives itself
     * ({@code rdma_establish}): after the CONNECT_RESPONSE event, once the queue pair is in RTS
     * (see {@link #initQueuePairAttributes}). Ids with a queue pair made by {@link
     * #createQueuePair} never need it.
     */
    public void establish() {
        try (Use held = use(); Use heldChannel = channel.hold()) {
            qpLock.readLock().lock(); // checks id->qp
            try {
                Cma.call(Cma.ESTABLISH, "rdma_establish", describe(), id);
            } finally {
                qpLock.readLock().unlock();
            }
        }
    }

    /**
     * The attributes that move a queue pair the application created itself (not with {@link
     * #createQueuePair}) to {@code target} (INIT, RTR or RTS) for this id's connection ({@code
     * rdma_init_qp_attr}): port, P_Key index, access flags, path, PSNs, remote QPN and the
     * resources the connection negotiated. Apply them with {@link QueuePair#modify}.
     */
    public QueuePairAttributes initQueuePairAttributes(QpState target) {
        if (target != QpState.INIT && target != QpState.RTR && target != QpState.RTS) {
            throw new IllegalArgumentException("rdma_init_qp_attr gives the attributes for INIT, RTR or RTS, not " + target);
        }
        try (Use held = use(); Use heldChannel = channel.hold(); Arena arena = Arena.ofConfined()) {
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
     * it synchronous. Waits for a synchronous operation in progress on the id to end.
     */
    public void migrate(EventChannel target) {
        operation.lock();
        try (Use held = use()) {
            if (target == null) {
                if (synchronous) {
                    return;
                }
                EventChannel own = EventChannel.createOwn("rdma_migrate_id", describe());
                try {
                    moveTo(own, true);
                } catch (RuntimeException e) {
                    own.close();
                    throw e;
                }
            } else if (target != channel || synchronous) {
                moveTo(target, false);
            }
        } finally {
            operation.unlock();
        }
    }

    /**
     * Moves the id to {@code target}, the application's channel or ({@code own}) a new channel of
     * the id's own; a previous own channel is closed. The caller holds the id. Registered on both
     * channels while it moves, so that no event of it is dropped; holds the queue pair lock so that
     * the channel does not change under a queue pair being destroyed.
     */
    private void moveTo(EventChannel target, boolean own) {
        EventChannel old;
        boolean wasOwn;
        qpLock.writeLock().lock();
        try (Use heldTarget = target.hold()) {
            old = channel;
            wasOwn = synchronous;
            if (!own) {
                dependOn(target);
            }
            target.register(id.address(), this);
            try (Use heldOld = old.hold()) {
                Cma.call(Cma.MIGRATE_ID, "rdma_migrate_id", describe(), id, target.handle_());
            } catch (RuntimeException e) {
                target.unregister(id.address());
                if (!own) {
                    stopDependingOn(target);
                }
                throw e;
            }
            channel = target;
            synchronous = own;
            old.unregister(id.address());
            if (!wasOwn) {
                stopDependingOn(old);
            }
        } finally {
            qpLock.writeLock().unlock();
        }
        if (wasOwn) {
            old.close(); // the id's own, now empty
        }
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
        try (Use held = use(); Use heldChannel = channel.hold(); Arena arena = Arena.ofConfined()) {
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
        String what = describe() + " group " + group;
        operate("rdma_join_multicast", what, () -> {
            try (Arena arena = Arena.ofConfined()) {
                Cma.call(Cma.JOIN_MULTICAST, "rdma_join_multicast", what, id, SocketAddresses.write(arena, group), MemorySegment.NULL);
                groups.add(group);
            }
        }, JOINED);
    }

    /**
     * Joins the multicast group {@code group} ({@code rdma_join_multicast_ex}), as a full member or,
     * with {@code sendOnly}, as a send-only full member that receives nothing from the group.
     * Outcome MULTICAST_JOIN or MULTICAST_ERROR, as {@link #joinMulticast(InetSocketAddress)}.
     */
    public void joinMulticast(InetSocketAddress group, boolean sendOnly) {
        String what = describe() + " group " + group + (sendOnly ? " send-only" : "");
        operate("rdma_join_multicast_ex", what, () -> {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment attr = arena.allocate(rdma_cm_join_mc_attr_ex.layout());
                rdma_cm_join_mc_attr_ex.comp_mask(attr, rdma_core_h.RDMA_CM_JOIN_MC_ATTR_ADDRESS()
                        | rdma_core_h.RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS());
                rdma_cm_join_mc_attr_ex.join_flags(attr, sendOnly ? MC_JOIN_SENDONLY_FULLMEMBER : MC_JOIN_FULLMEMBER);
                rdma_cm_join_mc_attr_ex.addr(attr, SocketAddresses.write(arena, group));
                Cma.call(Cma.JOIN_MULTICAST_EX, "rdma_join_multicast_ex", what, id, attr, MemorySegment.NULL);
                groups.add(group);
            }
        }, JOINED);
    }

    /** Leaves the multicast group {@code group} ({@code rdma_leave_multicast}). */
    public void leaveMulticast(InetSocketAddress group) {
        try (Use held = use(); Use heldChannel = channel.hold(); Arena arena = Arena.ofConfined()) {
            qpLock.readLock().lock(); // detaches id->qp
            try {
                Cma.call(Cma.LEAVE_MULTICAST, "rdma_leave_multicast", describe() + " group " + group, id,
                        SocketAddresses.write(arena, group));
            } finally {
                qpLock.readLock().unlock();
            }
            groups.remove(group);
        }
    }

    /** The local address ({@code rdma_get_local_addr}), or null before bind/resolve. */
    public InetSocketAddress localAddress() {
        try (Use held = use()) {
            return SocketAddresses.read(rdma_addr.src_addr(rdma_route.addr(rdma_cm_id.route(id))));
        }
    }

    /** The peer's address ({@code rdma_get_peer_addr}), or null before resolve / request. */
    public InetSocketAddress peerAddress() {
        try (Use held = use()) {
            return SocketAddresses.read(rdma_addr.dst_addr(rdma_route.addr(rdma_cm_id.route(id))));
        }
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
        try (Use held = use()) {
            return !rdma_cm_id.verbs(id).equals(MemorySegment.NULL);
        }
    }

    /**
     * The verbs context of the device the id is bound to. librdmacm opened the device and keeps it
     * open: the context is shared by every id on the device; closing it closes what the application
     * created from it.
     *
     * @throws IllegalStateException before the id is bound to a device
     */
    public Context context() {
        try (Use held = use()) {
            MemorySegment verbs = rdma_cm_id.verbs(id);
            if (verbs.equals(MemorySegment.NULL)) {
                throw new IllegalStateException(describe() + " is not bound to a device yet (bind to an address, or resolve one)");
            }
            return Devices.context(verbs);
        }
    }

    /** The device port the id uses (from 1), 0 before it is bound to a device. */
    public int portNumber() {
        try (Use held = use()) {
            return Byte.toUnsignedInt(rdma_cm_id.port_num(id));
        }
    }

    /**
     * Creates the id's queue pair ({@code rdma_create_qp}) on {@code pd}, which must belong to the
     * id's {@link #context()}. The connection manager moves it through its states: connected
     * queue pairs become ready on connect/accept, UD ones are ready to send at once. The queue
     * pair is closed with the id (or may be closed before it, also by closing {@code pd}); its
     * destruction waits for calls through which librdmacm works on it, and the id's close waits
     * for its destruction.
     *
     * @throws IllegalStateException when the id has a queue pair (also one still being destroyed)
     */
    public QueuePair createQueuePair(ProtectionDomain pd, QueuePairInit init) {
        try (Use held = use(); Use heldChannel = channel.hold()) {
            qpLock.writeLock().lock();
            try {
                QueuePair existing = queuePair;
                if ((existing != null && !existing.isClosed()) || liveQp != null) {
                    throw new IllegalStateException(describe() + " already has " + (existing != null ? existing : "a queue pair"));
                }
                if (pd.context() != context()) {
                    throw new IllegalArgumentException(pd + " belongs to " + pd.context() + ", not to the id's device " + context().name());
                }
                Factory factory = new Factory(VerbsAccess.bridge().handle(pd));
                QueuePair qp;
                try {
                    qp = VerbsAccess.bridge().createQueuePair(pd, init, factory, this);
                } catch (RuntimeException e) {
                    // created, but its QueuePair failed after: nobody can close it, so it goes now
                    destroyQueuePair(factory);
                    throw e;
                }
                // recorded before the id can be closed (it waits for this call): its close then closes the queue pair
                queuePair = qp;
                return qp;
            } finally {
                qpLock.writeLock().unlock();
            }
        }
    }

    /** Creates and destroys the id's queue pair through librdmacm, for the verbs {@link QueuePair}. */
    private final class Factory implements VerbsAccess.QueuePairFactory {
        private final MemorySegment pdHandle;

        Factory(MemorySegment pdHandle) {
            this.pdHandle = pdHandle;
        }

        /** Called by the QueuePair's constructor, inside {@link #createQueuePair} (which holds the id and the lock). */
        @Override
        public MemorySegment create(MemorySegment initAttr, boolean extended) {
            if (extended) {
                Cma.call(Cma.CREATE_QP_EX, "rdma_create_qp_ex", describe(), id, initAttr);
            } else {
                Cma.call(Cma.CREATE_QP, "rdma_create_qp", describe(), id, pdHandle, initAttr);
            }
            liveQp = this;
            return rdma_cm_id.qp(id);
        }

        /** Called by the QueuePair's close, on whichever thread closes it (also the id's, from its destroy). */
        @Override
        public void destroy(MemorySegment qp) {
            destroyQueuePair(this);
        }
    }

    /**
     * {@code rdma_destroy_qp} unless the queue pair is gone already, while no call works on it:
     * neither a call on the id (the lock) nor an event being taken on its channel. The id is not
     * destroyed before: its {@link #destroy()} waits until {@link #liveQp} is null.
     */
    private void destroyQueuePair(Factory factory) {
        qpLock.writeLock().lock();
        try {
            if (liveQp != factory) {
                return;
            }
            ReentrantReadWriteLock.WriteLock events = channel.qpGuard.writeLock();
            events.lock();
            try {
                Cma.callVoid(Cma.DESTROY_QP, id);
            } finally {
                events.unlock();
            }
            liveQp = null;
            qpDestroyed.signalAll();
        } finally {
            qpLock.writeLock().unlock();
        }
    }

    /** The queue pair created on this id, or null. */
    public QueuePair queuePair() {
        QueuePair qp = queuePair;
        return qp == null || qp.isClosed() ? null : qp;
    }

    /** The queue pair type this id's port space implies (RC for TCP and IB, UD for UDP and IPoIB). */
    public QpType qpType() {
        return QpType.of(qpTypeCode());
    }

    private int qpTypeCode() {
        try (Use held = use()) {
            return rdma_cm_id.qp_type(id);
        }
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

    /**
     * Leaves the groups, closes the queue pair and waits until it is destroyed (also when another
     * thread is destroying it), then destroys the id and, for a synchronous id, its own channel
     * (after waking a thread blocked in a synchronous operation, which then finds the id closed).
     * Every call on the id has returned: {@link #close()} waited for them.
     */
    @Override
    protected void destroy() {
        EventChannel ch = channel;
        boolean own = synchronous;
        RuntimeException failure = null;
        try {
            if (own) {
                ch.wake();
            }
            // Leave the groups still joined first: a queue pair attached to a group cannot be destroyed (EBUSY on rxe).
            qpLock.readLock().lock();
            try {
                for (InetSocketAddress group : groups) {
                    try (Arena arena = Arena.ofConfined()) {
                        Cma.callErrno(Cma.LEAVE_MULTICAST, id, SocketAddresses.write(arena, group));
                    }
                }
            } finally {
                qpLock.readLock().unlock();
            }
            groups.clear();
            QueuePair qp = queuePair;
            if (qp != null) {
                try {
                    qp.close(); // returns at once when another thread is closing it: waited for below
                } catch (RuntimeException e) {
                    failure = e;
                }
            }
            qpLock.writeLock().lock();
            try {
                while (liveQp != null) {
                    qpDestroyed.awaitUninterruptibly();
                }
            } finally {
                qpLock.writeLock().unlock();
            }
            // events of the id taken meanwhile are dropped (it is closed), and acknowledged, which this waits for
            Cma.call(Cma.DESTROY_ID, "rdma_destroy_id", describe(), id);
        } catch (RuntimeException e) {
            // the native id may still name its channel: an own channel stays allocated (woken above)
            if (failure != null) {
                e.addSuppressed(failure);
            }
            throw e;
        } finally {
            ch.unregister(id.address()); // lets a closing channel go on
        }
        if (own) {
            try {
                ch.close();
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    protected String describe() {
        return "CmId " + portSpace + " 0x" + Long.toHexString(id.address());
    }
}
