package dev.verbs4j.naaice;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;

/**
 * The three reference kernels of the NAAICE software NAA, for compatibility tests: function 1
 * adds 1 and function 2 adds 2 (mod 256) to every byte of every parameter region over its full
 * size, whatever its flags; function 3 does nothing (measures the communication alone).
 */
public final class ReferenceKernels {

    /** Function code of {@link #ADD_ONE}. */
    public static final int FN_ADD_ONE = 1;
    /** Function code of {@link #ADD_TWO}. */
    public static final int FN_ADD_TWO = 2;
    /** Function code of {@link #NO_OP}. */
    public static final int FN_NO_OP = 3;

    /** Adds 1 to every byte of every parameter region. */
    public static final Kernel ADD_ONE = call -> addToAll(call, 1);
    /** Adds 2 to every byte of every parameter region. */
    public static final Kernel ADD_TWO = call -> addToAll(call, 2);
    /** Does nothing. */
    public static final Kernel NO_OP = call -> 0;

    private static final int CHECK_CHUNK = 1 << 20;

    private ReferenceKernels() {
    }

    /** The three kernels keyed by function code. */
    public static Map<Integer, Kernel> all() {
        return Map.of(FN_ADD_ONE, ADD_ONE, FN_ADD_TWO, ADD_TWO, FN_NO_OP, NO_OP);
    }

    private static int addToAll(KernelCall call, int k) {
        for (MemorySegment s : call.parameters()) {
            addBytes(s, k);
        }
        return 0;
    }

    /**
     * The first index of {@code s} whose byte is not {@code want}, or -1: how a caller checks a
     * parameter it filled with one byte value after a kernel ran.
     */
    public static long firstDifference(MemorySegment s, byte want) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment w = arena.allocate(Math.min(CHECK_CHUNK, Math.max(1, s.byteSize())));
            w.fill(want);
            for (long at = 0; at < s.byteSize(); at += CHECK_CHUNK) {
                long n = Math.min(CHECK_CHUNK, s.byteSize() - at);
                long m = MemorySegment.mismatch(s, at, at + n, w, 0, n);
                if (m >= 0) {
                    return at + m;
                }
            }
            return -1;
        }
    }

    /**
     * Adds {@code k} to every byte of {@code s}, modulo 256. A plain byte loop over the segment:
     * the JIT vectorises it (bin/bench compares it with the same loop in C, gcc -O2).
     */
    public static void addBytes(MemorySegment s, int k) {
        byte add = (byte) k;
        long size = s.byteSize();
        for (long i = 0; i < size; i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) (s.get(ValueLayout.JAVA_BYTE, i) + add));
        }
    }
}
