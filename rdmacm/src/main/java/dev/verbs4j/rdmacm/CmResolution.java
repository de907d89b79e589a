package dev.verbs4j.rdmacm;

import dev.verbs4j.bindings.rdma_addr;
import dev.verbs4j.bindings.rdma_cm_id;
import dev.verbs4j.bindings.rdma_route;
import dev.verbs4j.rdmacm.internal.Cma;
import dev.verbs4j.rdmacm.internal.Devices;
import dev.verbs4j.rdmacm.internal.SocketAddresses;
import dev.verbs4j.verbs.Context;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * Where a {@link CmId} is and what it reaches: bind, address and route resolution, listen, and
 * the addresses and device they give the id (read from its {@code struct rdma_route}).
 * Stateless; owns no native memory: the socket addresses are written to a confined arena per call.
 */
final class CmResolution {

    private CmResolution() {
    }

    /** {@link CmId#bind}. */
    static void bind(CmId owner, MemorySegment id, InetSocketAddress local) {
        owner.held(() -> {
            try (Arena arena = Arena.ofConfined()) {
                Cma.call(Cma.BIND_ADDR, "rdma_bind_addr", owner.describe() + " to " + local, id, SocketAddresses.write(arena, local));
            }
        });
    }

    /** {@link CmId#resolveAddress}. */
    static void address(CmId owner, MemorySegment id, InetSocketAddress source, InetSocketAddress destination,
                        Duration timeout) {
        int ms = timeoutMillis(timeout);
        String what = owner.describe() + " to " + destination;
        owner.outcomes().operate("rdma_resolve_addr", what, () -> {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment src = source == null ? MemorySegment.NULL : SocketAddresses.write(arena, source);
                Cma.call(Cma.RESOLVE_ADDR, "rdma_resolve_addr", what, id, src, SocketAddresses.write(arena, destination), ms);
            }
        }, CmOutcomes.ADDR);
    }

    /** {@link CmId#resolveRoute}. */
    static void route(CmId owner, MemorySegment id, Duration timeout) {
        int ms = timeoutMillis(timeout);
        String what = owner.describe();
        owner.outcomes().operate("rdma_resolve_route", what, () -> Cma.call(Cma.RESOLVE_ROUTE, "rdma_resolve_route", what, id, ms),
                CmOutcomes.ROUTE);
    }

    /** {@link CmId#listen}. */
    static void listen(CmId owner, MemorySegment id, int backlog) {
        if (backlog < 0) {
            throw new IllegalArgumentException("backlog must not be negative, got " + backlog);
        }
        owner.held(() -> Cma.call(Cma.LISTEN, "rdma_listen", owner.describe(), id, backlog));
    }

    /** {@link CmId#localAddress}. */
    static InetSocketAddress localAddress(CmId owner, MemorySegment id) {
        return owner.heldIdFor(() -> SocketAddresses.read(rdma_addr.src_addr(rdma_route.addr(rdma_cm_id.route(id)))));
    }

    /** {@link CmId#peerAddress}. */
    static InetSocketAddress peerAddress(CmId owner, MemorySegment id) {
        return owner.heldIdFor(() -> SocketAddresses.read(rdma_addr.dst_addr(rdma_route.addr(rdma_cm_id.route(id)))));
    }

    /** {@link CmId#context}. */
    static Context context(CmId owner, MemorySegment id) {
        return owner.heldIdFor(() -> {
            MemorySegment verbs = rdma_cm_id.verbs(id);
            if (verbs.equals(MemorySegment.NULL)) {
                throw new IllegalStateException(owner.describe() + " is not bound to a device yet (bind to an address, or resolve one)");
            }
            return Devices.context(verbs);
        });
    }

    /**
     * {@code rdma_create_ep} for {@code entry}: the native id, synchronous on a channel of
     * librdmacm's own; the caller owns it.
     */
    static MemorySegment createEndpoint(AddressInfo.Entry entry) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
            MemorySegment ai = entry.acquire();
            try {
                Cma.call(Cma.CREATE_EP, "rdma_create_ep", entry.toString(), out, ai, MemorySegment.NULL, MemorySegment.NULL);
            } finally {
                entry.release();
            }
            return out.get(ValueLayout.ADDRESS, 0);
        }
    }

    /** {@code timeout} as the milliseconds librdmacm takes: 1 ms .. 24 days. */
    static int timeoutMillis(Duration timeout) {
        long ms = timeout.toMillis();
        if (ms <= 0 || ms > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("timeout must be 1 ms .. 24 days, got " + timeout);
        }
        return (int) ms;
    }
}
