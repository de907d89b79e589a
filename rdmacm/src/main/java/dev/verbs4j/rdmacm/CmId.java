package dev.verbs4j.rdmacm;

import dev.verbs4j.bindings.rdma_cm_id;
import dev.verbs4j.rdmacm.internal.Cma;
import dev.verbs4j.verbs.Closeables;
import dev.verbs4j.verbs.Context;
import dev.verbs4j.verbs.NativeResource;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.QpState;
import dev.verbs4j.verbs.QpType;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairAttributes;
import dev.verbs4j.verbs.QueuePairInit;
import dev.verbs4j.verbs.VerbsException;
import dev.verbs4j.verbs.internal.Library;
import dev.verbs4j.verbs.internal.Native;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.function.Supplier;

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

    /** The Q_Key librdmacm gives the UD queue pairs of {@link PortSpace#UDP} ids ({@code RDMA_UDP_QKEY}). */
    public static final int UDP_QKEY = 0x01234567;

    private final MemorySegment id;
    private final PortSpace portSpace;
    private final CmId listener;
    /** The channel librdmacm reports this id's events on: the application's, or the id's own (a synchronous id). */
    private final CmIdChannel channels;
    private volatile CmEventType lastEvent;
    private volatile boolean listening;
    private volatile byte[] lastPrivateData = new byte[0];
    private final CmOutcomes outcomes = new CmOutcomes(this);
    private final CmQueuePair qp;
    private final CmMulticast multicast;

    /**
     * An id on {@code channel}: the application's ({@code own} false: the channel closes the id
     * first) or the id's own (closed with the id). Takes ownership of the native id.
     */
    private CmId(EventChannel channel, boolean own, MemorySegment id, PortSpace portSpace, CmId listener) {
        super(null);
        this.id = Native.sized(id, rdma_cm_id.sizeof());
        this.portSpace = portSpace;
        this.listener = listener;
        this.channels = new CmIdChannel(this, this.id, new CmIdChannel.Binding(channel, own), this::dependOn, this::stopDependingOn);
        this.qp = new CmQueuePair(this, this.id);
        this.multicast = new CmMulticast(this, this.id);
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
        return new CmId(channel, false, rawId(channel, ps), ps, null);
    }

    /** {@code rdma_create_id} on {@code channel}: the native id, which the caller owns. */
    private static MemorySegment rawId(EventChannel channel, PortSpace ps) {
        try (Use held = channel.hold(); Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
            Cma.call(Cma.CREATE_ID, "rdma_create_id", ps + " id", channel.handle_(), out, MemorySegment.NULL, ps.code());
            return out.get(ValueLayout.ADDRESS, 0);
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
        try {
            return new CmId(own, true, rawId(own, ps), ps, null);
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
        MemorySegment raw = CmResolution.createEndpoint(entry);
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
        CmIdChannel.Binding b = channels.binding();
        return b.own() ? null : b.channel();
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

    /** Runs {@code call} of one of the id's parts holding the id and its channel open: their close waits for it. */
    void held(Runnable call) {
        try (Use held = use(); Use heldChannel = channels.current().hold()) {
            call.run();
        }
    }

    /** {@link #held(Runnable)} for a call with a result. */
    <T> T heldFor(Supplier<T> call) {
        try (Use held = use(); Use heldChannel = channels.current().hold()) {
            return call.get();
        }
    }

    /** Runs {@code call} holding only the id open (not its channel). */
    <T> T heldIdFor(Supplier<T> call) {
        try (Use held = use()) {
            return call.get();
        }
    }

    /** Runs {@code call} holding {@code channel} open: its close waits for it. */
    static void holding(EventChannel channel, Runnable call) {
        try (Use held = channel.hold()) {
            call.run();
        }
    }

    /** The channel librdmacm reports the id's events on (also a synchronous id's own). */
    EventChannel eventChannel() {
        return channels.current();
    }

    boolean isSynchronous() {
        return channels.isOwn();
    }

    CmOutcomes outcomes() {
        return outcomes;
    }

    CmQueuePair queuePairPart() {
        return qp;
    }

    /** Keeps the private data of the event that completed a synchronous operation, for {@link #lastPrivateData()}. */
    void recordPrivateData(byte[] data) {
        lastPrivateData = data;
    }

    /** Moves a request's new id from its listener's channel to one of its own. */
    void makeSynchronous() {
        try (Use held = use()) {
            channels.toOwn();
        }
    }

    /** Binds to a local address ({@code rdma_bind_addr}); port 0 picks a free port. Binding an IP also binds its device. */
    public void bind(InetSocketAddress local) {
        CmResolution.bind(this, id, local);
    }

    /**
     * Resolves {@code destination} to an RDMA address and binds the id to the local device that
     * reaches it ({@code rdma_resolve_addr}); outcome {@link CmEventType#ADDR_RESOLVED} or {@link
     * CmEventType#ADDR_ERROR} within {@code timeout}.
     *
     * @param source the local address to use, or null to let the routing table choose
     */
    public void resolveAddress(InetSocketAddress source, InetSocketAddress destination, Duration timeout) {
        CmResolution.address(this, id, source, destination, timeout);
    }

    /** Resolves the route to the destination ({@code rdma_resolve_route}); outcome ROUTE_RESOLVED or ROUTE_ERROR. */
    public void resolveRoute(Duration timeout) {
        CmResolution.route(this, id, timeout);
    }

    /** Listens for connection requests on the bound address ({@code rdma_listen}). */
    public void listen(int backlog) {
        CmResolution.listen(this, id, backlog);
        listening = true;
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
        if (!channels.isOwn()) {
            throw new IllegalStateException(describe() + " is asynchronous: its requests arrive as CONNECT_REQUEST events");
        }
        if (!listening) {
            throw new IllegalStateException(describe() + " does not listen: call listen() before getRequest()");
        }
        return outcomes.awaitRequest().id();
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
        CmConnectionCalls.connect(this, id, parameters);
    }

    /** Accepts the connection request this id came from ({@code rdma_accept}); outcome ESTABLISHED. */
    public void accept(ConnectionParameters parameters) {
        CmConnectionCalls.accept(this, id, parameters);
    }

    /** Rejects the connection request this id came from ({@code rdma_reject}), sending {@code privateData} (may be empty). */
    public void reject(byte[] privateData) {
        CmConnectionCalls.reject(this, id, privateData);
    }

    /** Disconnects ({@code rdma_disconnect}): the queue pair goes to the error state, both sides see DISCONNECTED. */
    public void disconnect() {
        CmConnectionCalls.disconnect(this, id);
    }

    /** Tells the connection manager that the queue pair saw its first receive ({@code rdma_notify(IBV_EVENT_COMM_EST)}). */
    public void notifyEstablished() {
        CmConnectionCalls.notifyEstablished(this, id);
    }

    /**
     * Completes an active connection whose queue pair the application created and drives itself
     * ({@code rdma_establish}): after the CONNECT_RESPONSE event, once the queue pair is in RTS
     * (see {@link #initQueuePairAttributes}). Ids with a queue pair made by {@link
     * #createQueuePair} never need it.
     */
    public void establish() {
        CmConnectionCalls.establish(this, id);
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
        return CmQpAttributes.of(this, id, target);
    }

    /**
     * Moves the id and its pending events to {@code target} ({@code rdma_migrate_id}); null makes
     * it synchronous. Waits for a synchronous operation in progress on the id to end.
     */
    public void migrate(EventChannel target) {
        outcomes.operation().lock();
        try (Use held = use()) {
            channels.migrate(target);
        } finally {
            outcomes.operation().unlock();
        }
    }

    /** Sets the IP type of service of the connection ({@code RDMA_OPTION_ID_TOS}); before resolving. */
    public void setTypeOfService(int tos) {
        CmIdOptions.typeOfService(this, id, tos);
    }

    /** Allows binding to a port in use ({@code RDMA_OPTION_ID_REUSEADDR}); before binding. */
    public void setReuseAddress(boolean on) {
        CmIdOptions.reuseAddress(this, id, on);
    }

    /** Restricts an IPv6 wildcard bind to IPv6 ({@code RDMA_OPTION_ID_AFONLY}); before binding. */
    public void setAfOnly(boolean on) {
        CmIdOptions.afOnly(this, id, on);
    }

    /** Sets the QP's local ACK timeout exponent (4.096 µs × 2^timeout, {@code RDMA_OPTION_ID_ACK_TIMEOUT}). */
    public void setAckTimeout(int timeout) {
        CmIdOptions.ackTimeout(this, id, timeout);
    }

    /**
     * Joins the multicast group {@code group} ({@code rdma_join_multicast}); the queue pair, if
     * any, is attached. Outcome MULTICAST_JOIN (with the group's address in {@link
     * CmEvent#datagram()}) or MULTICAST_ERROR.
     */
    public void joinMulticast(InetSocketAddress group) {
        multicast.join(group);
    }

    /**
     * Joins the multicast group {@code group} ({@code rdma_join_multicast_ex}), as a full member or,
     * with {@code sendOnly}, as a send-only full member that receives nothing from the group.
     * Outcome MULTICAST_JOIN or MULTICAST_ERROR, as {@link #joinMulticast(InetSocketAddress)}.
     */
    public void joinMulticast(InetSocketAddress group, boolean sendOnly) {
        multicast.join(group, sendOnly);
    }

    /** Leaves the multicast group {@code group} ({@code rdma_leave_multicast}). */
    public void leaveMulticast(InetSocketAddress group) {
        multicast.leave(group);
    }

    /** The local address ({@code rdma_get_local_addr}), or null before bind/resolve. */
    public InetSocketAddress localAddress() {
        return CmResolution.localAddress(this, id);
    }

    /** The peer's address ({@code rdma_get_peer_addr}), or null before resolve / request. */
    public InetSocketAddress peerAddress() {
        return CmResolution.peerAddress(this, id);
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
        return heldIdFor(() -> !rdma_cm_id.verbs(id).equals(MemorySegment.NULL));
    }

    /**
     * The verbs context of the device the id is bound to. librdmacm opened the device and keeps it
     * open: the context is shared by every id on the device; closing it closes what the application
     * created from it.
     *
     * @throws IllegalStateException before the id is bound to a device
     */
    public Context context() {
        return CmResolution.context(this, id);
    }

    /** The device port the id uses (from 1), 0 before it is bound to a device. */
    public int portNumber() {
        return heldIdFor(() -> Byte.toUnsignedInt(rdma_cm_id.port_num(id)));
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
        try (Use held = use(); Use heldChannel = channels.current().hold()) {
            return qp.create(pd, init);
        }
    }

    /** The queue pair created on this id, or null. */
    public QueuePair queuePair() {
        return qp.current();
    }

    /** The queue pair type this id's port space implies (RC for TCP and IB, UD for UDP and IPoIB). */
    public QpType qpType() {
        return QpType.of(qpTypeCode());
    }

    int qpTypeCode() {
        return heldIdFor(() -> rdma_cm_id.qp_type(id));
    }

    /**
     * Leaves the groups, closes the queue pair and waits until it is destroyed (also when another
     * thread is destroying it), then destroys the id and, for a synchronous id, its own channel
     * (after waking a thread blocked in a synchronous operation, which then finds the id closed).
     * Every call on the id has returned: {@link #close()} waited for them.
     */
    @Override
    protected void destroy() {
        CmIdChannel.Binding binding = channels.binding();
        EventChannel ch = binding.channel();
        boolean own = binding.own();
        RuntimeException failure = null;
        try {
            if (own) {
                ch.wake();
            }
            // Leave the groups still joined first: a queue pair attached to a group cannot be destroyed (EBUSY on rxe).
            multicast.leaveAll();
            failure = qp.closeAndAwait();
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
        if (own && failure != null) {
            throw Closeables.closeAfter(failure, ch);
        }
        if (own) {
            ch.close();
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
