package dev.verbs4j.rdmacm;

import dev.verbs4j.rdmacm.internal.Cma;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The options of a {@link CmId} at level {@code RDMA_OPTION_ID} ({@code rdma_set_option}): type
 * of service, address reuse, IPv6-only binding, ACK timeout. Stateless; owns no native memory:
 * each value is written to a confined arena per call.
 */
final class CmIdOptions {

    private static final int OPTION_ID = 0;
    private static final int OPTION_ID_TOS = 0;
    private static final int OPTION_ID_REUSEADDR = 1;
    private static final int OPTION_ID_AFONLY = 2;
    private static final int OPTION_ID_ACK_TIMEOUT = 3;

    private CmIdOptions() {
    }

    static void typeOfService(CmId owner, MemorySegment id, int tos) {
        if (tos < 0 || tos > 255) {
            throw new IllegalArgumentException("type of service must be 0..255, got " + tos);
        }
        set(owner, id, OPTION_ID_TOS, "TOS", new byte[]{(byte) tos});
    }

    static void reuseAddress(CmId owner, MemorySegment id, boolean on) {
        set(owner, id, OPTION_ID_REUSEADDR, "REUSEADDR", intBytes(on ? 1 : 0));
    }

    static void afOnly(CmId owner, MemorySegment id, boolean on) {
        set(owner, id, OPTION_ID_AFONLY, "AFONLY", intBytes(on ? 1 : 0));
    }

    static void ackTimeout(CmId owner, MemorySegment id, int timeout) {
        if (timeout < 0 || timeout > 31) {
            throw new IllegalArgumentException("ACK timeout must be 0..31, got " + timeout);
        }
        set(owner, id, OPTION_ID_ACK_TIMEOUT, "ACK_TIMEOUT", new byte[]{(byte) timeout});
    }

    private static void set(CmId owner, MemorySegment id, int name, String what, byte[] value) {
        owner.held(() -> {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment v = arena.allocateFrom(ValueLayout.JAVA_BYTE, value);
                Cma.call(Cma.SET_OPTION, "rdma_set_option", owner.describe() + " RDMA_OPTION_ID_" + what, id, OPTION_ID, name, v,
                        (long) value.length);
            }
        });
    }

    private static byte[] intBytes(int v) {
        byte[] b = new byte[4];
        MemorySegment.ofArray(b).set(ValueLayout.JAVA_INT_UNALIGNED, 0, v);
        return b;
    }
}
