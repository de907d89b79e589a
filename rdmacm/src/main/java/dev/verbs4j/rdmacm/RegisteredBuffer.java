package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.ProtectionDomain;

import java.lang.foreign.MemorySegment;

/**
 * Application memory registered once for an {@link RdmaConnection}'s (or an endpoint
 * group's) protection domain: the source and target of one-sided operations and of
 * zero-copy sends and receives. Wraps a {@link MemoryRegion} over memory of an {@link
 * dev.verbs4j.verbs.RdmaArena} or of the global arena; the memory stays the application's, the
 * region belongs to the connection's (or group's) protection domain and is deregistered by
 * {@link #close()}, by closing the connection (or group), or by closing the arena, whichever
 * comes first. {@link #remote()} describes it for a peer.
 *
 * <p>While an operation on it is outstanding the connection keeps a reference to it; the device
 * refers to it by key only. Deregistering it then (closing it or its arena) is safe: the
 * operation completes with an error (and, as any error completion, breaks the connection), the
 * device never reaches the freed memory.
 */
public final class RegisteredBuffer implements AutoCloseable {

    private final MemoryRegion region;

    RegisteredBuffer(MemoryRegion region) {
        this.region = region;
    }

    /** Registers {@code segment} in {@code pd}; wraps the library's refusal of memory that can be freed while registered. */
    static RegisteredBuffer register(ProtectionDomain pd, MemorySegment segment, int access) {
        if (segment.byteSize() == 0) {
            throw new IllegalArgumentException("segment: an empty segment cannot be registered");
        }
        return new RegisteredBuffer(pd.register(segment, access));
    }

    /** The registered memory. */
    public MemorySegment segment() {
        return region.segment();
    }

    /** The length in bytes. */
    public long length() {
        return region.length();
    }

    /** The whole buffer as a peer addresses it; send its {@link RemoteBuffer#toBytes() bytes} to the peer. */
    public RemoteBuffer remote() {
        return new RemoteBuffer(region.remoteAddress(), region.length(), region.rkey());
    }

    /** Whether it was deregistered (closed, or its arena, connection or group closed). */
    public boolean isClosed() {
        return region.isClosed();
    }

    MemoryRegion region() {
        return region;
    }

    /**
     * Checks that {@code [offset, offset + length)} lies inside this buffer and fits one work request.
     *
     * @throws IllegalArgumentException naming {@code what} otherwise
     * @throws IllegalStateException    when the buffer was deregistered
     */
    void checkRange(long offset, long length, String what) {
        if (offset < 0 || length < 0 || offset > region.length() - length) {
            throw new IllegalArgumentException(what + ": the local range of " + length + " bytes at offset " + offset
                    + " is outside the registered buffer of " + region.length() + " bytes");
        }
        if (length > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(what + ": " + length + " bytes exceed one work request (at most 2^31 - 1)");
        }
        if (region.isClosed()) {
            throw new IllegalStateException(what + ": the registered buffer is closed (deregistered)");
        }
    }

    /** Deregisters the memory (the memory itself stays the application's). Idempotent. */
    @Override
    public void close() {
        region.close();
    }

    @Override
    public String toString() {
        return "RegisteredBuffer[" + region.length() + " bytes" + (region.isClosed() ? ", closed" : "") + "]";
    }
}
