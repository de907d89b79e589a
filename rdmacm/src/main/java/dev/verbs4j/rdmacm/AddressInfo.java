package dev.verbs4j.rdmacm;

import dev.verbs4j.bindings.rdma_addrinfo;
import dev.verbs4j.rdmacm.internal.Cma;
import dev.verbs4j.rdmacm.internal.SocketAddresses;
import dev.verbs4j.verbs.Errno;
import dev.verbs4j.verbs.QpType;
import dev.verbs4j.verbs.VerbsException;
import dev.verbs4j.verbs.internal.Library;
import dev.verbs4j.verbs.internal.Native;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The result of {@code rdma_getaddrinfo()}: the RDMA addresses for a node and service, as a list
 * of {@link Entry}s. Owns the native {@code rdma_addrinfo} list, freed by {@link #close()}
 * ({@code rdma_freeaddrinfo}); an entry is usable for {@link CmId#createEndpoint} while it is open.
 * A close waits until every {@code createEndpoint} reading one of its entries has returned.
 */
public final class AddressInfo implements AutoCloseable {

    /** {@code RAI_PASSIVE}: addresses for the side that listens. */
    public static final int PASSIVE = 1;
    /** {@code RAI_NUMERICHOST}: the node is a numeric address, no name lookup. */
    public static final int NUMERIC_HOST = 2;
    /** {@code RAI_NOROUTE}: skip route resolution. */
    public static final int NO_ROUTE = 4;
    /** {@code RAI_FAMILY}: keep to the family given. */
    public static final int FAMILY = 8;

    /**
     * One address ({@code struct rdma_addrinfo}), copied; usable for {@link CmId#createEndpoint}
     * while its {@link AddressInfo} is open.
     *
     * @param flags       RAI_* flags
     * @param family      AF_INET (2), AF_INET6 (10) or AF_IB (27)
     * @param qpType      the queue pair type
     * @param portSpace   the port space
     * @param source      the local address, or null
     * @param destination the remote address, or null
     */
    public record Entry(int flags, int family, QpType qpType, PortSpace portSpace, InetSocketAddress source,
                        InetSocketAddress destination, AddressInfo owner, int index) {

        /** The native entry, held until {@link #release()}: a close of the owner waits. */
        MemorySegment acquire() {
            return owner.acquire(index);
        }

        /** Ends what {@link #acquire()} started. */
        void release() {
            owner.release();
        }

        @Override
        public String toString() {
            return "AddressInfo.Entry[" + portSpace + " " + qpType + (source != null ? " from " + source : "")
                    + (destination != null ? " to " + destination : "") + ((flags & PASSIVE) != 0 ? " passive" : "") + "]";
        }
    }

    private final MemorySegment list;
    private final List<Entry> entries;
    private final List<MemorySegment> natives = new ArrayList<>();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition unused = lock.newCondition();
    /** Calls reading the native list; guarded by {@link #lock}. */
    private int users;
    private volatile boolean closed;

    private AddressInfo(MemorySegment list) {
        this.list = list;
        List<Entry> out = new ArrayList<>();
        for (MemorySegment ai = list; !ai.equals(MemorySegment.NULL); ai = rdma_addrinfo.ai_next(ai)) {
            ai = Native.sized(ai, rdma_addrinfo.sizeof());
            out.add(new Entry(rdma_addrinfo.ai_flags(ai), rdma_addrinfo.ai_family(ai), QpType.of(rdma_addrinfo.ai_qp_type(ai)),
                    PortSpace.of(rdma_addrinfo.ai_port_space(ai)), SocketAddresses.read(rdma_addrinfo.ai_src_addr(ai)),
                    SocketAddresses.read(rdma_addrinfo.ai_dst_addr(ai)), this, out.size()));
            natives.add(ai);
        }
        this.entries = List.copyOf(out);
    }

    /**
     * Resolves {@code node} and {@code service} ({@code rdma_getaddrinfo}); either may be null,
     * not both. The caller owns (and closes) the result.
     *
     * @param flags     RAI_* flags ({@link #PASSIVE}, {@link #NUMERIC_HOST}, {@link #NO_ROUTE})
     * @param portSpace the port space (TCP for RC, UDP for UD)
     * @throws VerbsException naming {@code rdma_getaddrinfo} with the getaddrinfo error or errno
     */
    public static AddressInfo resolve(String node, String service, int flags, PortSpace portSpace) {
        if (node == null && service == null) {
            throw new IllegalArgumentException("give a node, a service or both");
        }
        Library.ensureLoaded();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment hints = arena.allocate(rdma_addrinfo.layout());
            rdma_addrinfo.ai_flags(hints, flags);
            rdma_addrinfo.ai_port_space(hints, portSpace.code());
            rdma_addrinfo.ai_qp_type(hints, (portSpace == PortSpace.UDP ? QpType.UD : QpType.RC).code());
            MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
            MemorySegment n = node == null ? MemorySegment.NULL : arena.allocateFrom(node);
            MemorySegment s = service == null ? MemorySegment.NULL : arena.allocateFrom(service);
            int rc = Cma.callErrno(Cma.GETADDRINFO, n, s, hints, out);
            if (rc != 0) {
                throw new VerbsException("rdma_getaddrinfo", -rc > 0 ? -rc : Errno.EINVAL,
                        (node == null ? "" : node) + (service == null ? "" : ":" + service) + " (" + portSpace + ")");
            }
            return new AddressInfo(out.get(ValueLayout.ADDRESS, 0));
        }
    }

    /** The addresses, best first. */
    public List<Entry> entries() {
        ensureOpen();
        return entries;
    }

    /** The first address. */
    public Entry first() {
        ensureOpen();
        if (entries.isEmpty()) {
            throw new IllegalStateException("rdma_getaddrinfo returned no address");
        }
        return entries.getFirst();
    }

    private MemorySegment acquire(int index) {
        lock.lock();
        try {
            ensureOpen();
            MemorySegment entry = natives.get(index);
            users++;
            return entry;
        } finally {
            lock.unlock();
        }
    }

    private void release() {
        lock.lock();
        try {
            if (--users == 0) {
                unused.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("AddressInfo is closed");
        }
    }

    /**
     * Frees the list, once every {@link CmId#createEndpoint} reading an entry has returned; the
     * entries are then unusable. Idempotent.
     */
    @Override
    public void close() {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            while (users > 0) {
                unused.awaitUninterruptibly();
            }
        } finally {
            lock.unlock();
        }
        Cma.callVoid(Cma.FREEADDRINFO, list);
    }
}
