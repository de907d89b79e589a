package dev.verbs4j.vipl;

import dev.verbs4j.verbs.RdmaArena;
import dev.verbs4j.verbs.TestBed;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The VIPL data path allocates (almost) nothing per descriptor: VipPostRecv + VipPostSend, then
 * VipSendDone and VipCQDone + VipRecvDone until each is done, over one Reliable Delivery
 * connection between the two test hosts, measured on the calling thread after a warm-up.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_3)
@Timeout(300)
class ViplAllocationDeviceTest {

    private static final int DESC_SIZE = 128;
    private static final int SEGS = (DESC_SIZE - VipDescriptor.CONTROL_SIZE) / VipDescriptor.SEGMENT_SIZE;
    private static final long WAIT = 10_000;
    /** Bytes a round trip may allocate on average: what the JIT's own noise leaves, far below one object per call. */
    private static final long BYTES_PER_ROUND_TRIP = 16;

    @Test
    void postAndDoneRoundTripsAllocateAlmostNothing() throws Exception {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long thread = Thread.currentThread().threadId();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        VipNic nicA = Vipl.openNic(TestBed.hostA().device());
        VipNic nicB = Vipl.openNic(TestBed.hostB().device());
        try (RdmaArena arena = RdmaArena.ofShared()) {
            VipPtag tagA = Vipl.createPtag(nicA);
            VipPtag tagB = Vipl.createPtag(nicB);
            MemorySegment memA = arena.allocate(1 << 16, 4096);
            MemorySegment memB = arena.allocate(1 << 16, 4096);
            VipMemHandle hA = Vipl.registerMem(nicA, memA, VipMemAttributes.of(tagA));
            VipMemHandle hB = Vipl.registerMem(nicB, memB, VipMemAttributes.of(tagB));
            VipCq cq = Vipl.createCQ(nicB, 64);
            VipVi c = Vipl.createVi(nicA, VipViAttributes.of(tagA), null, null);
            VipVi s = Vipl.createVi(nicB, VipViAttributes.of(tagB), null, cq);
            byte[] disc = {'a', 'l', 'l', 'o', 'c'};
            ViplTwoHosts.listen(nicB, TestBed.hostB().address());
            Future<VipReturn> accepted = pool.submit(() -> Vipl.connectAccept(
                    Vipl.connectWait(nicB, VipNetAddress.of(TestBed.hostB().address(), disc), WAIT), s));
            assertThat(Vipl.connectRequest(c, VipNetAddress.of(TestBed.hostA().address(), new byte[]{1}),
                    VipNetAddress.of(TestBed.hostB().address(), disc), WAIT)).isEqualTo(VipReturn.SUCCESS);
            assertThat(accepted.get(WAIT, TimeUnit.MILLISECONDS)).isEqualTo(VipReturn.SUCCESS);

            // one send and one receive descriptor, both with a data segment, posted again each round
            VipDescriptor send = VipDescriptor.at(memA, 0, SEGS).sendReceive(0).addData(memA.asSlice(4096, 64), hA);
            VipDescriptor recv = VipDescriptor.at(memB, 0, SEGS).sendReceive(0).addData(memB.asSlice(4096, 64), hB);
            VipDescriptor out = VipDescriptor.empty();
            VipCqEntry entry = new VipCqEntry();
            roundTrips(c, s, cq, send, hA, recv, hB, out, entry, 12_000); // warm up: let the JIT compile the path (C2)
            // a few windows at most: on a loaded machine the JIT may finish compiling the path late
            int n = 4_000;
            long allocated = Long.MAX_VALUE;
            for (int window = 0; window < 4 && allocated >= n * BYTES_PER_ROUND_TRIP; window++) {
                long before = threads.getThreadAllocatedBytes(thread);
                roundTrips(c, s, cq, send, hA, recv, hB, out, entry, n);
                allocated = threads.getThreadAllocatedBytes(thread) - before;
                System.out.printf("[vipl] %d post and done round trips allocated %d bytes%n", n, allocated);
            }
            assertThat(allocated).as("bytes allocated by %d round trips", n).isLessThan(n * BYTES_PER_ROUND_TRIP);

            assertThat(Vipl.disconnect(c)).isEqualTo(VipReturn.SUCCESS);
            assertThat(Vipl.disconnect(s)).isEqualTo(VipReturn.SUCCESS);
            assertThat(Vipl.destroyVi(c)).isEqualTo(VipReturn.SUCCESS);
            assertThat(Vipl.destroyVi(s)).isEqualTo(VipReturn.SUCCESS);
            assertThat(Vipl.destroyCQ(cq)).isEqualTo(VipReturn.SUCCESS);
        } finally {
            Vipl.closeNic(nicA);
            Vipl.closeNic(nicB);
            pool.shutdownNow();
        }
    }

    /** {@code n} times: a receive on {@code s}, a send from {@code c}, each dequeued once done. */
    private static void roundTrips(VipVi c, VipVi s, VipCq cq, VipDescriptor send, VipMemHandle sendMemory, VipDescriptor recv,
                                   VipMemHandle recvMemory, VipDescriptor out, VipCqEntry entry, int n) {
        for (int i = 0; i < n; i++) {
            check(Vipl.postRecv(s, recv, recvMemory), i, "VipPostRecv");
            check(Vipl.postSend(c, send, sendMemory), i, "VipPostSend");
            VipReturn rc;
            while ((rc = Vipl.sendDone(c, out)) == VipReturn.NOT_DONE) {
                Thread.onSpinWait();
            }
            check(rc, i, "VipSendDone");
            if (out.status() != (VipStatus.DONE | VipStatus.OP_SEND)) {
                throw new AssertionError("round trip " + i + ": send status " + VipStatus.describe(out.status()));
            }
            while ((rc = Vipl.cqDone(cq, entry)) == VipReturn.NOT_DONE) {
                Thread.onSpinWait();
            }
            check(rc, i, "VipCQDone");
            check(Vipl.recvDone(entry.vi(), out), i, "VipRecvDone");
            if (out.status() != (VipStatus.DONE | VipStatus.OP_RECEIVE) || out.length() != 64) {
                throw new AssertionError("round trip " + i + ": receive status " + VipStatus.describe(out.status()));
            }
        }
    }

    private static void check(VipReturn rc, int i, String function) {
        if (rc != VipReturn.SUCCESS) {
            throw new AssertionError("round trip " + i + ": " + function + " returned " + rc);
        }
    }
}
