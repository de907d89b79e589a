package dev.verbs4j.verbs;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** The data path allocates nothing: post_send + poll_cq round trips on the loopback device. */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
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

    @Test
    void completionEventsAllocateAlmostNothing() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long thread = Thread.currentThread().threadId();
        try (ChannelLoopback loop = new ChannelLoopback();
             WorkCompletions wcs = new WorkCompletions(4);
             SendRequests sends = new SendRequests(1, 1)) {
            QueuePair a = loop.a;
            CompletionQueue cq = loop.cq;
            CompletionChannel channel = loop.channel;
            MemoryRegion mr = loop.mr;
            sends.reset(0).opcode(Opcode.RDMA_WRITE).flags(SendFlags.SIGNALED).sge(mr, 0, 64)
                    .rdma(mr.remoteAddress() + 1024, mr.rkey());
            eventRoundTrips(a, cq, channel, sends, wcs, 20_000); // warm up: let the JIT compile the path
            long before = threads.getThreadAllocatedBytes(thread);
            eventRoundTrips(a, cq, channel, sends, wcs, 5_000);
            long allocated = threads.getThreadAllocatedBytes(thread) - before;
            long armed = threads.getThreadAllocatedBytes(thread);
            for (int i = 0; i < 5_000; i++) {
                cq.requestNotify(false);
            }
            armed = threads.getThreadAllocatedBytes(thread) - armed;
            long empty = threads.getThreadAllocatedBytes(thread);
            for (int i = 0; i < 5_000; i++) {
                channel.await(Duration.ZERO);
            }
            empty = threads.getThreadAllocatedBytes(thread) - empty;
            assertThat(allocated).as("bytes allocated by 5,000 round trips that each sleep on a completion event"
                    + " (5,000 arms alone: %d bytes, 5,000 empty zero-timeout waits: %d bytes)", armed, empty)
                    .isLessThan(64 * 1024);
            assertThat(armed).as("bytes allocated by 5,000 arms").isLessThan(16 * 1024);
        }
    }

    /** Arm, post, sleep on the channel until the queue signals, poll: as a program that waits on events does. */
    private static void eventRoundTrips(QueuePair a, CompletionQueue cq, CompletionChannel channel, SendRequests sends,
            WorkCompletions wcs, int n) {
        SendRequest wr = sends.get(0);
        for (int i = 0; i < n; i++) {
            cq.requestNotify(false);
            wr.wrId(i);
            a.postSend(sends, 1);
            if (channel.await(EVENT_WAIT) != cq) {
                throw new AssertionError("round trip " + i + ": no event within " + EVENT_WAIT);
            }
            if (cq.poll(wcs) != 1 || !wcs.get(0).isSuccess() || wcs.get(0).wrId() != i) {
                throw new AssertionError("round trip " + i + ": " + (wcs.count() == 0 ? "no completion" : wcs.get(0)));
            }
        }
    }

    private static final Duration EVENT_WAIT = Duration.ofSeconds(10);

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
