package dev.verbs4j.verbs;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;

import static org.assertj.core.api.Assertions.assertThat;

/** The data path allocates nothing: post_send + poll_cq round trips on the loopback device. */
@Tag(TestBed.TAG)
class AllocationDeviceTest {

    @Test
    void hundredThousandPostAndPollRoundTripsAllocateAlmostNothing() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long thread = Thread.currentThread().threadId();
        try (QpPair p = QpPair.connected(TestBed.loopback(), TestBed.loopback(), QpType.RC);
             SendRequests sends = new SendRequests(1, 1)) {
            sends.reset(0).opcode(Opcode.RDMA_WRITE).flags(SendFlags.SIGNALED).sge(p.mrA, 0, 64)
                    .rdma(p.mrB.remoteAddress(), p.mrB.rkey());
            roundTrips(p, sends, 20_000);   // warm up: let the JIT compile the path
            long before = threads.getThreadAllocatedBytes(thread);
            roundTrips(p, sends, 100_000);
            long allocated = threads.getThreadAllocatedBytes(thread) - before;
            assertThat(allocated).as("bytes allocated by 100,000 round trips").isLessThan(64 * 1024);
        }
    }

    private static void roundTrips(QpPair p, SendRequests sends, int n) {
        SendRequest wr = sends.get(0);
        for (int i = 0; i < n; i++) {
            wr.wrId(i);
            p.a.postSend(sends, 1);
            int got;
            do {
                got = p.cqA.poll(p.wcs);
            } while (got == 0);
            WorkCompletion wc = p.wcs.get(0);
            if (!wc.isSuccess() || wc.wrId() != i) {
                throw new AssertionError("round trip " + i + ": " + wc);
            }
        }
    }
}
