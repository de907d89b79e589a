package dev.verbs4j.naaice;

import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.MemoryRegion;

import java.lang.foreign.MemorySegment;

/**
 * One region of a {@link NaaClient} (a parameter or an internal region): the application's
 * segment (none for an internal region), its registration once the device is known, and where the
 * NAA placed it. The segment belongs to the application; the registration to the client, which
 * closes it with its protection domain.
 */
final class ClientRegion {

    /** An output parameter: the NAA writes it back. */
    private static final int OUTPUT_ACCESS = Access.LOCAL_WRITE | Access.REMOTE_WRITE;
    /** Any other parameter: only read locally, by the RDMA writes to the NAA. */
    private static final int INPUT_ACCESS = 0;

    final MemorySegment segment;
    final long size;
    final int flags;
    /** How errors name it: "parameter 1", or the middleware's "input 0", "output 1". */
    final String label;
    long bytesToSend;
    MemoryRegion mr;
    long remoteAddress;
    int remoteRkey;
    long requestedAddress;

    ClientRegion(MemorySegment segment, long size, int flags, String label) {
        this.segment = segment;
        this.size = size;
        this.flags = flags;
        this.label = label;
        this.bytesToSend = size;
    }

    int access() {
        return (flags & RegionFlags.OUTPUT) != 0 ? OUTPUT_ACCESS : INPUT_ACCESS;
    }

    boolean internal() {
        return (flags & RegionFlags.INTERNAL) != 0;
    }
}
