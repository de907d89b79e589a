package dev.verbs4j.naaice;

import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * One RPC as a {@link Kernel} sees it: the function code, the user bytes of the immediate, and
 * the NAA's copies of the connection's regions. The segments belong to the server's connection
 * (registered native memory, freed when the connection ends); they are valid only during
 * {@link Kernel#run} and keep their contents from one RPC to the next.
 *
 * @param functionCode the function code F (1..127)
 * @param immediate    the raw host → NAA immediate (user bytes in bits 8..31)
 * @param rpc          the RPC's number on its connection, from 1
 * @param parameters   the parameter regions, in the host's parameter order, at their full size
 * @param flags        each parameter's {@link RegionFlags}
 * @param internals    the internal (scratch) regions, in request order
 */
public record KernelCall(int functionCode, int immediate, long rpc, List<MemorySegment> parameters, List<Integer> flags,
                         List<MemorySegment> internals) {

    /** User byte {@code index} (0..2) of the immediate. */
    public int userByte(int index) {
        return Immediate.userByte(immediate, index);
    }
}
