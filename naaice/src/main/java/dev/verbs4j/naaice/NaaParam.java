package dev.verbs4j.naaice;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * One parameter of a middleware (AP2) function: the application's native segment, registered in
 * place, and whether it is sent only with the first invocation ({@code naa_param_t}). A plain
 * value; the application owns the segment. It must come from an open {@link
 * dev.verbs4j.verbs.RdmaArena} (or the global arena): {@link NaaHandle#create} refuses memory of
 * any other arena, which could be freed while the NIC or the NAA can still reach it, and closing
 * the RdmaArena deregisters the parameter before its memory is freed (the handle fails at its
 * next invocation).
 *
 * @param segment    the parameter's memory (native, 1 .. 2^32-1 bytes, of an RdmaArena or the global arena)
 * @param singleSend send it only with the first invocation on the handle
 */
public record NaaParam(MemorySegment segment, boolean singleSend) {

    /** Checks the segment. */
    public NaaParam {
        Objects.requireNonNull(segment, "segment");
    }

    /** A parameter sent with every invocation. */
    public static NaaParam of(MemorySegment segment) {
        return new NaaParam(segment, false);
    }

    /** A parameter sent only with the first invocation. */
    public static NaaParam once(MemorySegment segment) {
        return new NaaParam(segment, true);
    }
}
