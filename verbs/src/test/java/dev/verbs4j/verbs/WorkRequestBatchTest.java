package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_recv_wr;
import dev.verbs4j.bindings.ibv_send_wr;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What get and reset of a send and a receive batch do to the native requests; no device needed. */
class WorkRequestBatchTest {

    @Test
    void aSendRequestKeepsItsFieldsThroughGetAndLosesThemThroughReset() {
        try (SendRequests batch = new SendRequests(2, 2); Arena arena = Arena.ofConfined()) {
            MemorySegment data = arena.allocate(16);
            batch.reset(1).wrId(7).opcode(Opcode.SEND).inline(data);
            MemorySegment wr = batch.requests().asSlice(ibv_send_wr.sizeof(), ibv_send_wr.sizeof());

            batch.get(1).immediateData(3);
            assertThat(ibv_send_wr.wr_id(wr)).isEqualTo(7);
            assertThat(ibv_send_wr.num_sge(wr)).isEqualTo(1);
            assertThat(ibv_send_wr.send_flags(wr) & SendFlags.INLINE).isNotZero();

            assertThat(batch.reset(1)).isSameAs(batch.get(0));
            assertThat(ibv_send_wr.wr_id(wr)).isZero();
            assertThat(ibv_send_wr.num_sge(wr)).isZero();
            assertThat(ibv_send_wr.send_flags(wr)).isZero();
            assertThat(ibv_send_wr.next(wr)).as("the chain stays linked").isEqualTo(MemorySegment.NULL);
            assertThat(ibv_send_wr.sg_list(wr).address()).as("the entries stay where they were").isNotZero();
        }
    }

    @Test
    void aReceiveRequestKeepsItsFieldsThroughGetAndLosesThemThroughReset() {
        try (ReceiveRequests batch = new ReceiveRequests(3, 2)) {
            MemorySegment wr = batch.requests().asSlice(ibv_recv_wr.sizeof(), ibv_recv_wr.sizeof());
            batch.reset(1).wrId(9).noSge();
            wr.set(ValueLayout.JAVA_INT, ibv_recv_wr.num_sge$offset(), 2);

            batch.get(1);
            assertThat(ibv_recv_wr.wr_id(wr)).isEqualTo(9);
            assertThat(ibv_recv_wr.num_sge(wr)).isEqualTo(2);

            batch.reset(1);
            assertThat(ibv_recv_wr.wr_id(wr)).isZero();
            assertThat(ibv_recv_wr.num_sge(wr)).isZero();
            assertThat(ibv_recv_wr.next(wr).address()).as("the chain stays linked")
                    .isEqualTo(batch.requests().address() + 2 * ibv_recv_wr.sizeof());
            assertThat(batch.maxSge()).isEqualTo(2);
            assertThat(batch.capacity()).isEqualTo(3);
        }
    }

    @Test
    void indexesOutsideTheBatchAreRefusedWithTheirKind() {
        try (SendRequests sends = new SendRequests(2, 1); ReceiveRequests receives = new ReceiveRequests(2, 1)) {
            assertThatThrownBy(() -> sends.get(2)).isInstanceOf(IndexOutOfBoundsException.class)
                    .hasMessage("send request 2 of 2");
            assertThatThrownBy(() -> sends.reset(-1)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThatThrownBy(() -> receives.get(2)).isInstanceOf(IndexOutOfBoundsException.class)
                    .hasMessage("receive request 2 of 2");
            assertThatThrownBy(() -> receives.reset(-1)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThatThrownBy(() -> new ReceiveRequests(0, 1)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> new SendRequests(1, 0)).isInstanceOf(IllegalArgumentException.class);
        }
    }
}
