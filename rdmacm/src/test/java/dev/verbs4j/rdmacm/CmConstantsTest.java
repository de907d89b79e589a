package dev.verbs4j.rdmacm;

import dev.verbs4j.bindings.rdma_core_h;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The Java enums and constants of the connection manager against the C headers' values. */
class CmConstantsTest {

    @Test
    void eventTypesHaveTheHeadersValues() {
        assertThat(CmEventType.ADDR_RESOLVED.code()).isEqualTo(rdma_core_h.RDMA_CM_EVENT_ADDR_RESOLVED());
        assertThat(CmEventType.CONNECT_REQUEST.code()).isEqualTo(rdma_core_h.RDMA_CM_EVENT_CONNECT_REQUEST());
        assertThat(CmEventType.REJECTED.code()).isEqualTo(rdma_core_h.RDMA_CM_EVENT_REJECTED());
        assertThat(CmEventType.DISCONNECTED.code()).isEqualTo(rdma_core_h.RDMA_CM_EVENT_DISCONNECTED());
        assertThat(CmEventType.MULTICAST_JOIN.code()).isEqualTo(rdma_core_h.RDMA_CM_EVENT_MULTICAST_JOIN());
        assertThat(CmEventType.TIMEWAIT_EXIT.code()).isEqualTo(rdma_core_h.RDMA_CM_EVENT_TIMEWAIT_EXIT());
        assertThat(CmEventType.values()).hasSize(rdma_core_h.RDMA_CM_EVENT_TIMEWAIT_EXIT() + 1);
        assertThat(CmEventType.of(8)).isEqualTo(CmEventType.REJECTED);
        assertThat(CmEventType.ESTABLISHED).hasToString("RDMA_CM_EVENT_ESTABLISHED");
        assertThatThrownBy(() -> CmEventType.of(16)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("16");
    }

    @Test
    void errorEventsAreTheFailures() {
        assertThat(CmEventType.REJECTED.isError()).isTrue();
        assertThat(CmEventType.ADDR_ERROR.isError()).isTrue();
        assertThat(CmEventType.ESTABLISHED.isError()).isFalse();
        assertThat(CmEventType.DISCONNECTED.isError()).isFalse();
    }

    @Test
    void portSpacesHaveTheHeadersValues() {
        assertThat(PortSpace.TCP.code()).isEqualTo(rdma_core_h.RDMA_PS_TCP());
        assertThat(PortSpace.UDP.code()).isEqualTo(rdma_core_h.RDMA_PS_UDP());
        assertThat(PortSpace.IB.code()).isEqualTo(rdma_core_h.RDMA_PS_IB());
        assertThat(PortSpace.IPOIB.code()).isEqualTo(rdma_core_h.RDMA_PS_IPOIB());
        assertThat(PortSpace.of(0x106)).isEqualTo(PortSpace.TCP);
        assertThatThrownBy(() -> PortSpace.of(7)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("0x7");
    }

    @Test
    void connectionParametersAreCheckedAndCopied() {
        byte[] data = {1, 2, 3};
        ConnectionParameters p = ConnectionParameters.DEFAULT.withPrivateData(data);
        data[0] = 9;
        assertThat(p.privateData()).containsExactly(1, 2, 3);
        p.privateData()[1] = 9;
        assertThat(p.privateData()).containsExactly(1, 2, 3);
        assertThat(p).isEqualTo(ConnectionParameters.DEFAULT.withPrivateData(new byte[]{1, 2, 3}));
        assertThat(p.withRetries(3, 2).retryCount()).isEqualTo(3);
        assertThatThrownBy(() -> ConnectionParameters.DEFAULT.withRetries(8, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("retryCount").hasMessageContaining("8");
        assertThatThrownBy(() -> ConnectionParameters.DEFAULT.withRdmaReads(-1, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("responderResources");
        assertThatThrownBy(() -> ConnectionParameters.DEFAULT.withPrivateData(new byte[256]))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("256");
    }

    @Test
    void eventPrivateDataIsTrimmedOfPadding() {
        CmEvent ev = new CmEvent(CmEventType.REJECTED, 28, null, null, new byte[]{'n', 'o', 0, 0, 0}, null, null);
        assertThat(ev.privateData()).hasSize(5);
        assertThat(ev.privateDataTrimmed()).containsExactly('n', 'o');
    }
}
