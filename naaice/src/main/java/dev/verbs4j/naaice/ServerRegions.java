package dev.verbs4j.naaice;

import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.ProtectionDomain;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * The regions one {@link ServerConnection} set up for its client: the parameter regions
 * (registered with the connection's protection domain, which owns them), the internal regions
 * (memory of a shared arena this object owns), and what they take of the server's budget. Used
 * by the thread that serves the connection.
 */
final class ServerRegions {

    /** A region the client writes (INPUT). */
    private static final int INPUT_ACCESS = Access.LOCAL_WRITE | Access.REMOTE_WRITE;
    /** Any other region: written by the kernel (the CPU) and read by the RDMA writes back to the client. */
    private static final int OTHER_ACCESS = 0;

    /** A parameter region: its registration, flags, and the client's region it is written back to. */
    record ServerRegion(MemoryRegion mr, int flags, long hostAddress, int hostRkey, long size) {
    }

    private final NaaServer server;
    private final ProtectionDomain pd;
    private final List<ServerRegion> params = new ArrayList<>();
    private final List<MemorySegment> internals = new ArrayList<>();
    private Arena internalMemory;
    private int reservedRegions;
    private long reservedBytes;

    ServerRegions(NaaServer server, ProtectionDomain pd) {
        this.server = server;
        this.pd = pd;
    }

    /** The parameter regions, in the request's order. */
    List<ServerRegion> params() {
        return params;
    }

    /** The internal regions' memory, in the request's order. */
    List<MemorySegment> internals() {
        return internals;
    }

    /**
     * Checks the request against the connection's and the server's limits, reserves its share of
     * the server's budget and makes the regions; null when they are made, else why not (nothing
     * is held then).
     */
    NaaServer.Refusal setUp(MrspMessage.Request r) {
        if (r.entries().size() > server.maxRegions) {
            return new NaaServer.Refusal(Mrsp.TOO_MANY_REGIONS, r.entries().size() + " regions requested, at most "
                    + server.maxRegions);
        }
        long total = 0;
        for (MrspMessage.RequestEntry e : r.entries()) {
            total += e.size();
        }
        if (total > server.maxBytes) {
            return new NaaServer.Refusal(Mrsp.NOT_ENOUGH_MEMORY, total + " bytes requested, at most " + server.maxBytes);
        }
        NaaServer.Refusal refusal = server.reserve(r.entries().size(), total);
        if (refusal != null) {
            return refusal;
        }
        reservedRegions = r.entries().size();
        reservedBytes = total;
        try {
            internalMemory = Arena.ofShared();
            for (MrspMessage.RequestEntry e : r.entries()) {
                if (e.internal()) {
                    internals.add(internalMemory.allocate(Math.max(1, e.size()), 64).asSlice(0, e.size()));
                } else {
                    // the advertise carries every region's rkey; only an input's lets the client write
                    int access = (e.flags() & RegionFlags.INPUT) != 0 ? INPUT_ACCESS : OTHER_ACCESS;
                    MemoryRegion mr = pd.allocateRegion(Math.max(1, e.size()), access);
                    params.add(new ServerRegion(mr, e.flags(), e.hostAddress(), e.rkey(), e.size()));
                }
            }
        } catch (RuntimeException | OutOfMemoryError ex) {
            free();
            return new NaaServer.Refusal(Mrsp.NOT_ENOUGH_MEMORY, "allocating the regions failed: " + ex);
        }
        return null;
    }

    /** The advertise entries of the parameter regions. */
    List<MrspMessage.AdvertiseEntry> advertise() {
        List<MrspMessage.AdvertiseEntry> advertise = new ArrayList<>(params.size());
        for (ServerRegion r : params) {
            advertise.add(new MrspMessage.AdvertiseEntry(r.mr().remoteAddress(), r.mr().rkey(), r.size()));
        }
        return advertise;
    }

    /** A kernel's view of the regions for RPC {@code rpc}, function {@code fn}, immediate {@code imm}. */
    KernelCall call(int fn, int imm, long rpc) {
        List<MemorySegment> segs = new ArrayList<>(params.size());
        List<Integer> flags = new ArrayList<>(params.size());
        for (ServerRegion r : params) {
            segs.add(r.mr().segment().asSlice(0, r.size()));
            flags.add(r.flags());
        }
        return new KernelCall(fn, imm, rpc, List.copyOf(segs), List.copyOf(flags), List.copyOf(internals));
    }

    /** Frees what a failed setup made: the registrations, the internal memory and the reservation. */
    private void free() {
        for (ServerRegion r : params) {
            r.mr().close();
        }
        params.clear();
        internals.clear();
        if (internalMemory != null) {
            internalMemory.close();
            internalMemory = null;
        }
        releaseBudget();
    }

    /** When the connection is freed (its protection domain, with the registrations, closed first): the rest. */
    void release() {
        if (internalMemory != null) {
            internalMemory.close();
        }
        releaseBudget();
    }

    /** Gives the server back the regions and bytes this connection's setup took. */
    private void releaseBudget() {
        if (reservedRegions != 0 || reservedBytes != 0) {
            server.release(reservedRegions, reservedBytes);
            reservedRegions = 0;
            reservedBytes = 0;
        }
    }
}
