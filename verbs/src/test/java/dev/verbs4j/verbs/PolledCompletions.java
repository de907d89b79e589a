package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_wc;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** Fills a {@link WorkCompletions} as a poll would, for host tests of what consumes polled completions. */
public final class PolledCompletions {

    private static final long SIZE = ibv_wc.sizeof();
    private static final long WR_ID = ibv_wc.wr_id$offset();
    private static final long QP_NUM = ibv_wc.qp_num$offset();
    private static final long STATUS = ibv_wc.status$offset();
    private static final long OPCODE = ibv_wc.opcode$offset();

    private PolledCompletions() {
    }

    /**
     * Writes {@code n} successful receive completions, number {@code from} on, of {@code wrIds}
     * and {@code qpNums} into {@code into}, as a poll that returned {@code n}; returns {@code n}.
     */
    public static int fill(WorkCompletions into, long[] wrIds, int[] qpNums, int from, int n) {
        MemorySegment array = into.segment();
        for (int i = 0; i < n; i++) {
            long at = i * SIZE; // (no slice per completion: a poll allocates nothing)
            array.set(ValueLayout.JAVA_LONG_UNALIGNED, at + WR_ID, wrIds[from + i]);
            array.set(ValueLayout.JAVA_INT_UNALIGNED, at + QP_NUM, qpNums[from + i]);
            array.set(ValueLayout.JAVA_INT_UNALIGNED, at + STATUS, 0);
            array.set(ValueLayout.JAVA_INT_UNALIGNED, at + OPCODE, 128); // IBV_WC_RECV
        }
        into.filled(n);
        return n;
    }
}
