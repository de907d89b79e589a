package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_send_wr;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;

import static dev.verbs4j.bindings.rdma_core_h.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The XRC API's checks that need no device, and the C values and field it writes. */
class XrcArgumentsTest {

    @Test
    void anXrcReceiveQueuePairWithoutItsDomainIsRefusedWithTheWayToMakeOne() {
        assertThatThrownBy(() -> QueuePairInit.of(QpType.XRC_RECV, null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("XRC domain")
                .hasMessageContaining("XrcDomain.createReceiveQueuePair()");
        assertThatThrownBy(() -> QueuePairInit.of(QpType.XRC_RECV, null, null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("XrcDomain.createReceiveQueuePair()");
        assertThatThrownBy(() -> QueuePairInit.of(QpType.XRC_SEND, null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("sendCq");
    }

    @Test
    void theRemoteSrqNumberLandsInQpTypeXrcAndHas24Bits() {
        try (SendRequests batch = new SendRequests(2, 1)) {
            MemorySegment wrs = batch.requests();
            SendRequest wr = batch.get(1);
            assertThat(wr.xrcRemoteSrqNumber(0xabcdef)).isSameAs(wr);
            MemorySegment second = wrs.asSlice(ibv_send_wr.sizeof(), ibv_send_wr.sizeof());
            assertThat(ibv_send_wr.qp_type.xrc.remote_srqn(ibv_send_wr.qp_type.xrc(ibv_send_wr.qp_type(second))))
                    .isEqualTo(0xabcdef);
            MemorySegment first = wrs.asSlice(0, ibv_send_wr.sizeof());
            assertThat(ibv_send_wr.qp_type.xrc.remote_srqn(ibv_send_wr.qp_type.xrc(ibv_send_wr.qp_type(first))))
                    .as("the first request is untouched").isZero();

            for (int bad : new int[]{-1, 1 << 24, Integer.MIN_VALUE}) {
                assertThatThrownBy(() -> wr.xrcRemoteSrqNumber(bad)).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("24 bits");
            }
            batch.reset(1);
            assertThat(ibv_send_wr.qp_type.xrc.remote_srqn(ibv_send_wr.qp_type.xrc(ibv_send_wr.qp_type(second))))
                    .as("a reused request starts without a remote SRQ").isZero();
        }
    }

    @Test
    void xrcConstantsCarryTheCValues() {
        assertThat(QpType.XRC_SEND.code()).isEqualTo(IBV_QPT_XRC_SEND());
        assertThat(QpType.XRC_RECV.code()).isEqualTo(IBV_QPT_XRC_RECV());
        assertThat(SharedReceiveQueue.SRQT_XRC).isEqualTo(IBV_SRQT_XRC());
        assertThat(new int[]{SharedReceiveQueue.INIT_ATTR_TYPE, SharedReceiveQueue.INIT_ATTR_PD,
                SharedReceiveQueue.INIT_ATTR_XRCD, SharedReceiveQueue.INIT_ATTR_CQ}).containsExactly(
                IBV_SRQ_INIT_ATTR_TYPE(), IBV_SRQ_INIT_ATTR_PD(), IBV_SRQ_INIT_ATTR_XRCD(), IBV_SRQ_INIT_ATTR_CQ());
        assertThat(new int[]{QueuePair.INIT_ATTR_PD, QueuePair.INIT_ATTR_XRCD, QueuePair.INIT_ATTR_SEND_OPS_FLAGS})
                .containsExactly(IBV_QP_INIT_ATTR_PD(), IBV_QP_INIT_ATTR_XRCD(), IBV_QP_INIT_ATTR_SEND_OPS_FLAGS());
    }
}
