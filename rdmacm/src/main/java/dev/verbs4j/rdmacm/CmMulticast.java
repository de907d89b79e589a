package dev.verbs4j.rdmacm;

import dev.verbs4j.bindings.rdma_cm_join_mc_attr_ex;
import dev.verbs4j.bindings.rdma_core_h;
import dev.verbs4j.rdmacm.internal.Cma;
import dev.verbs4j.rdmacm.internal.SocketAddresses;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The multicast groups one {@link CmId} (a UD id) has joined: joins ({@code rdma_join_multicast},
 * {@code rdma_join_multicast_ex}), leaves, and the leaving of the groups still joined when the id
 * is destroyed (a queue pair attached to a group cannot be destroyed). Owns no native memory:
 * the group addresses are written to a confined arena per call.
 */
final class CmMulticast {

    private static final int MC_JOIN_FULLMEMBER = 0;
    private static final int MC_JOIN_SENDONLY_FULLMEMBER = 1;

    private final CmId owner;
    private final MemorySegment id;
    private final Set<InetSocketAddress> groups = ConcurrentHashMap.newKeySet();

    CmMulticast(CmId owner, MemorySegment id) {
        this.owner = owner;
        this.id = id;
    }

    /** {@link CmId#joinMulticast(InetSocketAddress)}. */
    void join(InetSocketAddress group) {
        String what = owner.describe() + " group " + group;
        owner.outcomes().operate("rdma_join_multicast", what, () -> {
            try (Arena arena = Arena.ofConfined()) {
                Cma.call(Cma.JOIN_MULTICAST, "rdma_join_multicast", what, id, SocketAddresses.write(arena, group), MemorySegment.NULL);
                groups.add(group);
            }
        }, CmOutcomes.JOINED);
    }

    /** {@link CmId#joinMulticast(InetSocketAddress, boolean)}. */
    void join(InetSocketAddress group, boolean sendOnly) {
        String what = owner.describe() + " group " + group + (sendOnly ? " send-only" : "");
        owner.outcomes().operate("rdma_join_multicast_ex", what, () -> {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment attr = arena.allocate(rdma_cm_join_mc_attr_ex.layout());
                rdma_cm_join_mc_attr_ex.comp_mask(attr, rdma_core_h.RDMA_CM_JOIN_MC_ATTR_ADDRESS()
                        | rdma_core_h.RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS());
                rdma_cm_join_mc_attr_ex.join_flags(attr, sendOnly ? MC_JOIN_SENDONLY_FULLMEMBER : MC_JOIN_FULLMEMBER);
                rdma_cm_join_mc_attr_ex.addr(attr, SocketAddresses.write(arena, group));
                Cma.call(Cma.JOIN_MULTICAST_EX, "rdma_join_multicast_ex", what, id, attr, MemorySegment.NULL);
                groups.add(group);
            }
        }, CmOutcomes.JOINED);
    }

    /** {@link CmId#leaveMulticast}. */
    void leave(InetSocketAddress group) {
        owner.held(() -> {
            try (Arena arena = Arena.ofConfined()) {
                // detaches id->qp
                owner.queuePairPart().reading(() -> Cma.call(Cma.LEAVE_MULTICAST, "rdma_leave_multicast",
                        owner.describe() + " group " + group, id, SocketAddresses.write(arena, group)));
                groups.remove(group);
            }
        });
    }

    /**
     * Leaves the groups still joined, from the id's destroy; a failure (the group may be gone) is
     * not looked at: the id goes all the same, and its destruction leaves what is left.
     */
    void leaveAll() {
        owner.queuePairPart().reading(() -> {
            for (InetSocketAddress group : groups) {
                try (Arena arena = Arena.ofConfined()) {
                    Cma.callErrno(Cma.LEAVE_MULTICAST, id, SocketAddresses.write(arena, group));
                }
            }
        });
        groups.clear();
    }
}
