package dev.verbs4j.rdmacm;

import dev.verbs4j.bindings.ibv_ah_attr;
import dev.verbs4j.bindings.ibv_global_route;
import dev.verbs4j.bindings.rdma_cm_event;
import dev.verbs4j.bindings.rdma_cm_id;
import dev.verbs4j.bindings.rdma_conn_param;
import dev.verbs4j.bindings.rdma_event_channel;
import dev.verbs4j.bindings.rdma_ud_param;
import dev.verbs4j.rdmacm.internal.Cma;
import dev.verbs4j.verbs.AddressVector;
import dev.verbs4j.verbs.Errno;
import dev.verbs4j.verbs.Gid;
import dev.verbs4j.verbs.NativeResource;
import dev.verbs4j.verbs.VerbsException;
import dev.verbs4j.verbs.event.DescriptorWaiter;
import dev.verbs4j.verbs.event.Readiness;
import dev.verbs4j.verbs.event.EventSource;
import dev.verbs4j.verbs.internal.Ibv;
import dev.verbs4j.verbs.internal.Libc;
import dev.verbs4j.verbs.internal.Library;
import dev.verbs4j.verbs.internal.Native;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A connection manager event channel ({@code struct rdma_event_channel}, from {@code
 * rdma_create_event_channel()}): the queue the events of its {@link CmId}s arrive on. Events are
 * copied and acknowledged as they are taken ({@link #getEvent}), so an id can always be destroyed.
 * Its file descriptor is non-blocking and may be watched with poll/epoll. The channel owns its
 * native object; closing it closes its ids first and wakes threads blocked in {@link #getEvent}.
 *
 * <p>Taking an event ({@code rdma_get_cm_event} and {@code rdma_ack_cm_event}) holds the channel
 * open, so a close from another thread waits for it; a thread waiting in {@link #getEvent} only
 * sleeps on the file descriptors and is woken by the close, which frees the channel once every
 * such waiter has left (it then throws {@link IllegalStateException}).
 */
public final class EventChannel extends NativeResource implements EventSource {

    private final MemorySegment channel;
    private final int fd;
    /** The threads sleeping on {@link #fd}: {@link #destroy} wakes them and waits until they have left. */
    private final DescriptorWaiter waiter;
    /**
     * The ids whose native object names this channel, from their creation (or migration here)
     * until {@code rdma_destroy_id} returned (or they migrated away): {@link #destroy} waits
     * until it is empty, also for an id that another thread is still destroying.
     */
    private final Map<Long, CmId> ids = new ConcurrentHashMap<>();
    private final ReentrantLock idsLock = new ReentrantLock();
    /** Signalled when the last id has gone. */
    private final Condition idle = idsLock.newCondition();
    /**
     * {@code rdma_get_cm_event} works on the queue pair of some events' ids (CONNECT_RESPONSE moves
     * it to RTR and RTS, REJECTED to ERR, MULTICAST_JOIN attaches it): taking an event holds this
     * for reading, destroying the queue pair of an id on this channel for writing.
     */
    final ReentrantReadWriteLock qpGuard = new ReentrantReadWriteLock();

    private EventChannel() {
        super(null);
        Library.ensureLoaded();
        this.channel = Native.sized(Cma.callPointer(Cma.CREATE_EVENT_CHANNEL, "rdma_create_event_channel", "new channel"),
                rdma_event_channel.sizeof());
        this.fd = rdma_event_channel.fd(channel);
        try {
            Libc.setNonBlocking(fd, true);
            this.waiter = new DescriptorWaiter(fd);
        } catch (RuntimeException e) {
            Cma.callVoid(Cma.DESTROY_EVENT_CHANNEL, channel);
            throw e;
        }
    }

    /**
     * A new event channel; the caller owns it.
     *
     * @throws VerbsException naming {@code rdma_create_event_channel} and errno, e.g. ENODEV when
     *                        the kernel has no RDMA connection manager
     */
    public static EventChannel create() {
        return new EventChannel();
    }

    /**
     * The private channel of a synchronous id: {@code function} (e.g. {@code rdma_create_id}) is
     * named when it cannot be created, as librdmacm would when creating its own.
     */
    static EventChannel createOwn(String function, String what) {
        try {
            return new EventChannel();
        } catch (VerbsException e) {
            throw new VerbsException(function, e.errno(), what + " (its event channel: " + e.getMessage() + ")");
        }
    }

    /** A new id on this channel in port space {@code ps}; closed with the channel. */
    public CmId createId(PortSpace ps) {
        return CmId.create(this, ps);
    }

    /** The channel's file descriptor (non-blocking): readable when an event is pending. */
    @Override
    public int fd() {
        return fd;
    }

    /**
     * Waits up to {@code timeout} for the next event and returns it, copied and acknowledged; null
     * on timeout.
     *
     * @throws IllegalStateException when the channel is closed, also while waiting
     */
    public CmEvent getEvent(Duration timeout) {
        return waiter.await(timeout, this::tryGetEvent);
    }

    /**
     * Runs {@code task} on a new virtual thread once an event is pending or the channel closes,
     * unless the returned watch is cancelled first; no thread waits meanwhile. Closing the channel
     * runs a pending task (which then finds the channel closed) before the descriptor goes.
     *
     * @throws IllegalStateException when the channel is closed
     */
    public Readiness.Watch whenReadable(Runnable task) {
        try (Use held = use()) {
            return waiter.whenReadable(task);
        }
    }

    /**
     * Sleeps until the channel's descriptor is readable, the channel is being closed, or {@code
     * timeoutMillis} have passed (-1: no limit). Touches no native memory, only the descriptors,
     * which {@link #destroy} closes only once every sleeper has left.
     */
    void awaitReadable(int timeoutMillis) {
        if (!isClosed()) {
            waiter.sleep(timeoutMillis);
        }
    }

    /**
     * Has one {@link #getEvent} return null at once, as on a timeout, when no event is pending:
     * the call waiting now, or else the next one. For a thread that takes events with a long
     * timeout and must look at something else, e.g. a flag that tells it to stop; later calls
     * wait as before. Nothing once the channel is closed.
     */
    public void interruptWait() {
        waiter.interrupt();
    }

    /** Wakes the threads in {@link #awaitReadable}, now and in every later call. */
    void wake() {
        waiter.wake();
    }

    /** Holds the channel open for a call that uses it: until the returned {@link Use} is closed, its close waits. */
    Use hold() {
        return use();
    }

    /**
     * The next event if one is pending (copied and acknowledged), else null, without blocking.
     *
     * @throws IllegalStateException when the channel is closed
     */
    public CmEvent tryGetEvent() {
        while (true) {
            CmEvent event;
            try (Use held = use()) {
                MemorySegment native_;
                qpGuard.readLock().lock();
                try (Arena arena = Arena.ofConfined()) {
                    MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
                    MemorySegment capture = Native.captureSegment(arena);
                    int rc;
                    try {
                        // called directly (not through Cma.callErrno's argument array): a progress loop polls here
                        rc = (int) Cma.GET_CM_EVENT.handle().invoke(capture, channel, out);
                    } catch (Throwable t) {
                        throw Ibv.unchecked(t);
                    }
                    if (rc < 0) {
                        int errno = Native.errno(capture);
                        if (DescriptorWaiter.nonePending(errno == 0 ? Errno.EINVAL : errno, "rdma_get_cm_event", describe())) {
                            return null;
                        }
                    }
                    native_ = Native.sized(out.get(ValueLayout.ADDRESS, 0), rdma_cm_event.sizeof());
                } finally {
                    qpGuard.readLock().unlock();
                }
                MemorySegment[] orphan = new MemorySegment[1];
                try {
                    event = copy(native_, orphan);
                } finally {
                    Cma.call(Cma.ACK_CM_EVENT, "rdma_ack_cm_event", describe(), native_);
                }
                if (orphan[0] != null) {
                    // A request for a listener that is being destroyed: refuse the newcomer rather than leak it
                    // (while the channel, which its destruction writes to, is held).
                    Cma.callVoid(Cma.DESTROY_ID, orphan[0]);
                }
            }
            if (event != null) {
                event.id().eventArrived(event);
                return event;
            }
        }
    }

    private CmEvent copy(MemorySegment ev, MemorySegment[] orphan) {
        CmEventType type = CmEventType.of(rdma_cm_event.event(ev));
        int status = rdma_cm_event.status(ev);
        MemorySegment idPtr = Native.sized(rdma_cm_event.id(ev), rdma_cm_id.sizeof());
        CmId listener = null;
        CmId id;
        if (type == CmEventType.CONNECT_REQUEST) {
            listener = ids.get(rdma_cm_event.listen_id(ev).address());
            if (listener == null || listener.isClosed()) {
                orphan[0] = idPtr;
                return null;
            }
            id = CmId.incoming(this, idPtr, listener);
        } else {
            id = ids.get(idPtr.address());
            if (id == null || id.isClosed()) {
                return null; // its id is being destroyed
            }
        }
        boolean ud = rdma_cm_id.qp_type(idPtr) == dev.verbs4j.verbs.QpType.UD.code();
        MemorySegment param = rdma_cm_event.param(ev);
        byte[] privateData = new byte[0];
        ConnectionParameters conn = null;
        UdParameters datagram = null;
        if (type != CmEventType.MULTICAST_JOIN && type != CmEventType.MULTICAST_ERROR) {
            MemorySegment c = rdma_cm_event.param.conn(param);
            privateData = bytes(rdma_conn_param.private_data(c), Byte.toUnsignedInt(rdma_conn_param.private_data_len(c)));
        }
        if (ud) {
            if (type == CmEventType.ESTABLISHED || type == CmEventType.MULTICAST_JOIN || type == CmEventType.CONNECT_REQUEST) {
                datagram = udParameters(rdma_cm_event.param.ud(param));
            }
        } else if (type == CmEventType.CONNECT_REQUEST || type == CmEventType.CONNECT_RESPONSE
                || type == CmEventType.ESTABLISHED || type == CmEventType.REJECTED) {
            MemorySegment c = rdma_cm_event.param.conn(param);
            conn = new ConnectionParameters(privateData, Byte.toUnsignedInt(rdma_conn_param.responder_resources(c)),
                    Byte.toUnsignedInt(rdma_conn_param.initiator_depth(c)), rdma_conn_param.flow_control(c) != 0,
                    Byte.toUnsignedInt(rdma_conn_param.retry_count(c)) & 7, Byte.toUnsignedInt(rdma_conn_param.rnr_retry_count(c)) & 7,
                    rdma_conn_param.srq(c) != 0, rdma_conn_param.qp_num(c));
        }
        return new CmEvent(type, status, id, listener, privateData, conn, datagram);
    }

    static UdParameters udParameters(MemorySegment ud) {
        return new UdParameters(addressVector(rdma_ud_param.ah_attr(ud)), rdma_ud_param.qp_num(ud), rdma_ud_param.qkey(ud));
    }

    /** The Java copy of an {@code ibv_ah_attr}. */
    static AddressVector addressVector(MemorySegment ah) {
        Gid gid = null;
        int sgid = 0;
        int hop = 0;
        int tclass = 0;
        int flow = 0;
        if (ibv_ah_attr.is_global(ah) != 0) {
            MemorySegment grh = ibv_ah_attr.grh(ah);
            gid = Gid.of(ibv_global_route.dgid(grh).toArray(ValueLayout.JAVA_BYTE));
            sgid = Byte.toUnsignedInt(ibv_global_route.sgid_index(grh));
            hop = Byte.toUnsignedInt(ibv_global_route.hop_limit(grh));
            tclass = Byte.toUnsignedInt(ibv_global_route.traffic_class(grh));
            flow = ibv_global_route.flow_label(grh);
        }
        return new AddressVector(Byte.toUnsignedInt(ibv_ah_attr.port_num(ah)), Short.toUnsignedInt(ibv_ah_attr.dlid(ah)),
                Byte.toUnsignedInt(ibv_ah_attr.sl(ah)), gid, sgid, hop, tclass, flow);
    }

    private static byte[] bytes(MemorySegment p, int len) {
        if (len == 0 || p.equals(MemorySegment.NULL)) {
            return new byte[0];
        }
        return Native.sized(p, len).toArray(ValueLayout.JAVA_BYTE);
    }

    void register(long address, CmId id) {
        ids.put(address, id);
    }

    void unregister(long address) {
        ids.remove(address);
        if (ids.isEmpty()) {
            idsLock.lock();
            try {
                idle.signalAll();
            } finally {
                idsLock.unlock();
            }
        }
    }

    /** The native channel; the caller holds it ({@link #hold()}). */
    MemorySegment handle_() {
        ensureOpen();
        return channel;
    }

    /**
     * Wakes the threads sleeping on the descriptors, waits until they have left (they touch no
     * native memory, so they leave at once) and until every id on the channel is destroyed (they
     * were closed before, but one that another thread was closing may still be in {@code
     * rdma_destroy_id}), then frees the channel. Taking events holds the channel ({@link #use()}),
     * so none is in progress here.
     */
    @Override
    protected void destroy() {
        waiter.close();
        idsLock.lock();
        try {
            while (!ids.isEmpty()) {
                idle.awaitUninterruptibly();
            }
        } finally {
            idsLock.unlock();
        }
        Cma.callVoid(Cma.DESTROY_EVENT_CHANNEL, channel);
    }

    @Override
    protected String describe() {
        return "EventChannel fd " + fd;
    }
}
