package dev.verbs4j.vipl;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.assertj.core.api.Assertions.assertThat;

/** The format and length checks of posting (§10.2–10.4), without a device. */
class DescriptorCheckTest {

    private static final VipViAttributes RD = new VipViAttributes(VipReliabilityLevel.RELIABLE_DELIVERY, 32 * 1024, 0, null, false, false);

    private static int check(VipDescriptor d, boolean receive, VipViAttributes a) {
        Posted p = new Posted();
        p.reset(d.segment(), 0, 0);
        return DescriptorCheck.format(d, p, receive, a, 4);
    }

    private static VipDescriptor send(Arena arena, int... lengths) {
        VipDescriptor d = VipDescriptor.at(arena.allocate(VipDescriptor.size(8), 64), 0, 8).sendReceive(0);
        for (int l : lengths) {
            d.addData(0x1000, 1, l);
        }
        return d;
    }

    @Test
    void wellFormedDescriptorsPass() {
        try (Arena arena = Arena.ofConfined()) {
            assertThat(check(send(arena, 1, 0, 5), false, RD)).isZero();
            assertThat(check(send(arena), false, RD)).as("zero data segments (§6.1.1.1)").isZero();
            VipDescriptor w = VipDescriptor.at(arena.allocate(128, 64), 0, 3).rdma(VipControl.OP_RDMAWRITE, VipControl.IMMEDIATE, 0x10, 2)
                    .addData(0x1000, 1, 8);
            assertThat(check(w, false, RD)).isZero();
        }
    }

    /** §12 test 17 (§10.2): reserved control bits, op 11b, a non-zero Reserved word → FORMAT_ERROR. */
    @Test
    void test17ReservedBitsAndUndefinedOpAreFormatErrors() {
        try (Arena arena = Arena.ofConfined()) {
            assertThat(check(send(arena, 4).control(0x10), false, RD)).isEqualTo(VipStatus.FORMAT_ERROR);
            assertThat(check(send(arena, 4).control(3), false, RD)).isEqualTo(VipStatus.FORMAT_ERROR);
            assertThat(check(send(arena, 4).reserved(1), false, RD)).isEqualTo(VipStatus.FORMAT_ERROR);
            VipDescriptor w = VipDescriptor.at(arena.allocate(128, 64), 0, 3).rdma(VipControl.OP_RDMAWRITE, 0, 0x10, 2);
            w.segment(0, 0x10, 2, 5);
            assertThat(check(w, false, RD)).as("address segment Reserved word").isEqualTo(VipStatus.FORMAT_ERROR);
        }
    }

    /** §12 test 17 (§10.2): RDMA on the receive queue, RDMA Read on an Unreliable VI → FORMAT_ERROR. */
    @Test
    void test17RdmaOnTheReceiveQueueAndReadOnUnreliableAreFormatErrors() {
        try (Arena arena = Arena.ofConfined()) {
            VipDescriptor w = VipDescriptor.at(arena.allocate(128, 64), 0, 3).rdma(VipControl.OP_RDMAWRITE, 0, 0x10, 2);
            assertThat(check(w, true, RD)).isEqualTo(VipStatus.FORMAT_ERROR);
            VipDescriptor r = VipDescriptor.at(arena.allocate(128, 64), 0, 3).rdma(VipControl.OP_RDMAREAD, 0, 0x10, 2);
            assertThat(check(r, false, RD.withReliabilityLevel(VipReliabilityLevel.UNRELIABLE))).isEqualTo(VipStatus.FORMAT_ERROR);
            assertThat(check(r, false, RD)).isZero();
        }
    }

    /** §10.3, D11: SegCount beyond the descriptor's room or MaxSegmentsPerDesc → FORMAT_ERROR. */
    @Test
    void segmentCountBeyondRoomOrLimitIsAFormatError() {
        try (Arena arena = Arena.ofConfined()) {
            assertThat(check(send(arena, 1, 1, 1, 1, 1), false, RD)).as("5 > max 4").isEqualTo(VipStatus.FORMAT_ERROR);
            VipDescriptor small = VipDescriptor.at(arena.allocate(64, 64), 0, 1).sendReceive(0).segCount(2);
            assertThat(check(small, false, RD)).isEqualTo(VipStatus.FORMAT_ERROR);
        }
    }

    /** §12 test 16 (§10.3): Length ≠ Σ segments, or above MaxTransferSize → LENGTH_ERROR (send queue only). */
    @Test
    void test16LengthMismatchAndOversizeAreLengthErrors() {
        try (Arena arena = Arena.ofConfined()) {
            assertThat(check(send(arena, 4, 4).length(7), false, RD)).isEqualTo(VipStatus.LENGTH_ERROR);
            assertThat(check(send(arena, 32 * 1024, 1), false, RD)).isEqualTo(VipStatus.LENGTH_ERROR);
            assertThat(check(send(arena, 4, 4).length(99), true, RD)).as("receive Length is ignored").isZero();
        }
    }

    @Test
    void heapDescriptorIsRefusedBeforeAnyCheck() {
        assertThat(Vipl.postSend(null, VipDescriptor.wrap(MemorySegment.ofArray(new byte[64])), null))
                .isEqualTo(VipReturn.INVALID_PARAMETER);
    }
}
