package dev.verbs4j.naaice;

import dev.verbs4j.verbs.WcOpcode;
import dev.verbs4j.verbs.WcStatus;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A connection's inbox: completions come out in order, across wrap-around and growth; taking them allocates nothing. */
class CompletionInboxTest {

    private static void add(CompletionInbox in, int n) {
        boolean ok = n % 3 != 0;
        in.add(n, ok ? WcStatus.SUCCESS : WcStatus.WR_FLUSH_ERR, ok ? WcOpcode.RECV_RDMA_WITH_IMM : null, 10 * n, -n);
    }

    private static void assertFirstIs(CompletionInbox in, int n) {
        boolean ok = n % 3 != 0;
        assertThat(in.wrId()).isEqualTo(n);
        assertThat(in.status()).isEqualTo(ok ? WcStatus.SUCCESS : WcStatus.WR_FLUSH_ERR);
        assertThat(in.opcode()).isEqualTo(ok ? WcOpcode.RECV_RDMA_WITH_IMM : null);
        assertThat(in.byteLength()).isEqualTo(10 * n);
        assertThat(in.immediate()).isEqualTo(-n);
        in.removeFirst();
    }

    @Test
    void inOrderAcrossWrapAroundAndGrowth() {
        CompletionInbox in = new CompletionInbox(4);
        int next = 0;
        int taken = 0;
        // wrap around a few times at a steady fill, then grow while wrapped, then drain
        for (int round = 0; round < 10; round++) {
            while (in.size() < 3) {
                add(in, next++);
            }
            assertFirstIs(in, taken++);
            assertFirstIs(in, taken++);
        }
        assertThat(in.capacity()).isEqualTo(4);
        for (int i = 0; i < 9; i++) {
            add(in, next++);
        }
        assertThat(in.capacity()).isEqualTo(16);
        while (!in.isEmpty()) {
            assertFirstIs(in, taken++);
        }
        assertThat(taken).isEqualTo(next);
        assertThatThrownBy(in::wrId).isInstanceOf(IllegalStateException.class);
        add(in, 1);
        add(in, 2);
        in.clear();
        assertThat(in.isEmpty()).isTrue();
        assertThatThrownBy(() -> new CompletionInbox(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("capacity");
    }

    @Test
    void addingAndTakingAllocateNothing() {
        CompletionInbox in = new CompletionInbox(16);
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long sum = churn(in, 200_000); // warm up
        long before = mx.getCurrentThreadAllocatedBytes();
        sum += churn(in, 1_000_000);
        long allocated = mx.getCurrentThreadAllocatedBytes() - before;
        assertThat(sum).isNotZero();
        assertThat(allocated).as("bytes allocated by 1,000,000 adds and takes").isLessThan(1024);
    }

    private static long churn(CompletionInbox in, int n) {
        long sum = 0;
        for (int i = 0; i < n; i++) {
            in.add(i, WcStatus.SUCCESS, WcOpcode.RDMA_WRITE, i, i);
            if (in.size() == 8) {
                while (!in.isEmpty()) {
                    sum += in.wrId() + in.byteLength() + in.immediate() + in.opcode().ordinal() + in.status().ordinal();
                    in.removeFirst();
                }
            }
        }
        return sum;
    }
}
