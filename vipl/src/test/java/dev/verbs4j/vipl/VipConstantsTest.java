package dev.verbs4j.vipl;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The enums and bit values of §9.10 and Appendix B against the specification's numbers. */
class VipConstantsTest {

    /** §9.10.1: the eleven codes in the enum's order (0–10), later VIPL's appended from 11 (§13.3, D5). */
    @Test
    void returnCodesHaveTheSpecificationsValues() {
        assertThat(VipReturn.SUCCESS.code()).isZero();
        assertThat(VipReturn.NOT_DONE.code()).isEqualTo(1);
        assertThat(VipReturn.INVALID_PARAMETER.code()).isEqualTo(2);
        assertThat(VipReturn.ERROR_RESOURCE.code()).isEqualTo(3);
        assertThat(VipReturn.TIMEOUT.code()).isEqualTo(4);
        assertThat(VipReturn.REJECT.code()).isEqualTo(5);
        assertThat(VipReturn.INVALID_RELIABILITY_LEVEL.code()).isEqualTo(6);
        assertThat(VipReturn.INVALID_MTU.code()).isEqualTo(7);
        assertThat(VipReturn.INVALID_QOS.code()).isEqualTo(8);
        assertThat(VipReturn.INVALID_PTAG.code()).isEqualTo(9);
        assertThat(VipReturn.INVALID_RDMAREAD.code()).isEqualTo(10);
        assertThat(VipReturn.DESCRIPTOR_ERROR.code()).isEqualTo(11);
        assertThat(VipReturn.INVALID_STATE.code()).isEqualTo(12);
        assertThat(VipReturn.ERROR_NAMESERVICE.code()).isEqualTo(13);
        assertThat(VipReturn.NO_MATCH.code()).isEqualTo(14);
        assertThat(VipReturn.NOT_REACHABLE.code()).isEqualTo(15);
        assertThat(VipReturn.ERROR_NOT_SUPPORTED.code()).isEqualTo(16);
        assertThat(VipReturn.of(5)).isEqualTo(VipReturn.REJECT);
        assertThat(VipReturn.REJECT.cName()).isEqualTo("VIP_REJECT");
        assertThatThrownBy(() -> VipReturn.of(17)).isInstanceOf(IllegalArgumentException.class);
    }

    /** §9.10.7: IDLE 0, CONNECTED 1, CONNECT_PENDING 2, ERROR 3 (the enum's order, not the prose's). */
    @Test
    void viStatesKeepTheEnumOrder() {
        assertThat(VipViState.IDLE.code()).isZero();
        assertThat(VipViState.CONNECTED.code()).isEqualTo(1);
        assertThat(VipViState.CONNECT_PENDING.code()).isEqualTo(2);
        assertThat(VipViState.ERROR.code()).isEqualTo(3);
    }

    /** §9.10.5 and D6: enum values 0/1/2, later VIPL's bit mask 1/2/4. */
    @Test
    void reliabilityLevelsHaveBothEncodings() {
        assertThat(VipReliabilityLevel.UNRELIABLE.code()).isZero();
        assertThat(VipReliabilityLevel.RELIABLE_DELIVERY.code()).isEqualTo(1);
        assertThat(VipReliabilityLevel.RELIABLE_RECEPTION.code()).isEqualTo(2);
        assertThat(VipReliabilityLevel.UNRELIABLE.mask()).isEqualTo(1);
        assertThat(VipReliabilityLevel.RELIABLE_DELIVERY.mask()).isEqualTo(2);
        assertThat(VipReliabilityLevel.RELIABLE_RECEPTION.mask()).isEqualTo(4);
    }

    /** §9.10.3: the asynchronous error codes 0–8 and resource codes 0–3. */
    @Test
    void asyncErrorCodesHaveTheEnumsOrder() {
        assertThat(VipErrorCode.POST_DESC.ordinal()).isZero();
        assertThat(VipErrorCode.CONN_LOST.ordinal()).isEqualTo(1);
        assertThat(VipErrorCode.RECVQ_EMPTY.ordinal()).isEqualTo(2);
        assertThat(VipErrorCode.VI_OVERRUN.ordinal()).isEqualTo(3);
        assertThat(VipErrorCode.RDMAW_PROT.ordinal()).isEqualTo(4);
        assertThat(VipErrorCode.COMP_PROT.ordinal()).isEqualTo(8);
        assertThat(VipResourceCode.NIC.ordinal()).isZero();
        assertThat(VipResourceCode.DESCRIPTOR.ordinal()).isEqualTo(3);
    }

    /** §10.2: the Control field's bits. */
    @Test
    void controlBits() {
        assertThat(VipControl.OP_SENDRECV).isZero();
        assertThat(VipControl.OP_RDMAWRITE).isEqualTo(1);
        assertThat(VipControl.OP_RDMAREAD).isEqualTo(2);
        assertThat(VipControl.OP_MASK).isEqualTo(3);
        assertThat(VipControl.IMMEDIATE).isEqualTo(4);
        assertThat(VipControl.QFENCE).isEqualTo(8);
        assertThat(VipControl.RESERVED).isEqualTo(0xFFF0);
    }

    /** §10.4: the Status field's bits, and the reserved mask of later VIPL (0xFFF0FE00). */
    @Test
    void statusBits() {
        assertThat(VipStatus.DONE).isEqualTo(0x1);
        assertThat(VipStatus.FORMAT_ERROR).isEqualTo(0x2);
        assertThat(VipStatus.PROTECTION_ERROR).isEqualTo(0x4);
        assertThat(VipStatus.LENGTH_ERROR).isEqualTo(0x8);
        assertThat(VipStatus.PARTIAL_ERROR).isEqualTo(0x10);
        assertThat(VipStatus.DESC_FLUSHED_ERROR).isEqualTo(0x20);
        assertThat(VipStatus.TRANSPORT_ERROR).isEqualTo(0x40);
        assertThat(VipStatus.RDMA_PROT_ERROR).isEqualTo(0x80);
        assertThat(VipStatus.REMOTE_DESC_ERROR).isEqualTo(0x100);
        assertThat(VipStatus.ERROR_MASK).isEqualTo(0x1FE);
        assertThat(VipStatus.OP_MASK).isEqualTo(0x70000);
        assertThat(VipStatus.OP_RECEIVE).isEqualTo(0x10000);
        assertThat(VipStatus.OP_RDMA_WRITE).isEqualTo(0x20000);
        assertThat(VipStatus.OP_REMOTE_RDMA_WRITE).isEqualTo(0x30000);
        assertThat(VipStatus.OP_RDMA_READ).isEqualTo(0x40000);
        assertThat(VipStatus.IMMEDIATE).isEqualTo(0x80000);
        assertThat(VipStatus.RESERVED & (VipStatus.DONE | VipStatus.ERROR_MASK | VipStatus.OP_MASK | VipStatus.IMMEDIATE)).isZero();
        assertThat(VipStatus.RESERVED | VipStatus.DONE | VipStatus.ERROR_MASK | VipStatus.OP_MASK | VipStatus.IMMEDIATE)
                .isEqualTo(0xFFFFFFFF);
        assertThat(VipStatus.describe(0x90001)).isEqualTo("DONE|OP_RECEIVE|IMMEDIATE");
        assertThat(VipStatus.isSuccess(0x10001)).isTrue();
        assertThat(VipStatus.isSuccess(0x21)).isFalse();
    }

    @Test
    void exceptionCarriesTheCode() {
        VipException e = new VipException(VipReturn.TIMEOUT, "VipConnectWait", "x");
        assertThat(e.code()).isEqualTo(VipReturn.TIMEOUT);
        assertThat(e).hasMessageContaining("VIP_TIMEOUT").hasMessageContaining("VipConnectWait");
        assertThatThrownBy(() -> new VipException(VipReturn.SUCCESS, "f", null)).isInstanceOf(IllegalArgumentException.class);
    }
}
