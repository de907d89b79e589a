package dev.verbs4j.vipl;

import org.junit.jupiter.api.Test;

import java.util.function.ToIntFunction;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The enums and bit values of §9.10 and Appendix B against the specification's numbers. */
class VipConstantsTest {

    /** Asserts that {@code constants} have the numbers 0, 1, 2, ... in this order. */
    @SafeVarargs
    private static <E> void assertNumbered(ToIntFunction<E> number, E... constants) {
        for (int i = 0; i < constants.length; i++) {
            assertThat(number.applyAsInt(constants[i])).as("%s", constants[i]).isEqualTo(i);
        }
    }

    /** §9.10.1: the eleven codes in the enum's order (0–10), later VIPL's appended from 11 (§13.3, D5). */
    @Test
    void returnCodesHaveTheSpecificationsValues() {
        assertNumbered(VipReturn::code, VipReturn.SUCCESS, VipReturn.NOT_DONE, VipReturn.INVALID_PARAMETER,
                VipReturn.ERROR_RESOURCE, VipReturn.TIMEOUT, VipReturn.REJECT, VipReturn.INVALID_RELIABILITY_LEVEL,
                VipReturn.INVALID_MTU, VipReturn.INVALID_QOS, VipReturn.INVALID_PTAG, VipReturn.INVALID_RDMAREAD,
                VipReturn.DESCRIPTOR_ERROR, VipReturn.INVALID_STATE, VipReturn.ERROR_NAMESERVICE, VipReturn.NO_MATCH,
                VipReturn.NOT_REACHABLE, VipReturn.ERROR_NOT_SUPPORTED);
        assertThat(VipReturn.of(5)).isEqualTo(VipReturn.REJECT);
        assertThat(VipReturn.REJECT.cName()).isEqualTo("VIP_REJECT");
        assertThatThrownBy(() -> VipReturn.of(17)).isInstanceOf(IllegalArgumentException.class);
    }

    /** §9.10.7: IDLE 0, CONNECTED 1, CONNECT_PENDING 2, ERROR 3 (the enum's order, not the prose's). */
    @Test
    void viStatesKeepTheEnumOrder() {
        assertNumbered(VipViState::code, VipViState.IDLE, VipViState.CONNECTED, VipViState.CONNECT_PENDING, VipViState.ERROR);
    }

    /** §9.10.5 and D6: enum values 0/1/2, later VIPL's bit mask 1/2/4. */
    @Test
    void reliabilityLevelsHaveBothEncodings() {
        assertNumbered(VipReliabilityLevel::code, VipReliabilityLevel.UNRELIABLE, VipReliabilityLevel.RELIABLE_DELIVERY,
                VipReliabilityLevel.RELIABLE_RECEPTION);
        assertThat(VipReliabilityLevel.UNRELIABLE.mask()).isEqualTo(1);
        assertThat(VipReliabilityLevel.RELIABLE_DELIVERY.mask()).isEqualTo(2);
        assertThat(VipReliabilityLevel.RELIABLE_RECEPTION.mask()).isEqualTo(4);
    }

    /** §9.10.3: the asynchronous error codes 0–8 and resource codes 0–3. */
    @Test
    void asyncErrorCodesHaveTheEnumsOrder() {
        assertNumbered(VipErrorCode::ordinal, VipErrorCode.POST_DESC, VipErrorCode.CONN_LOST, VipErrorCode.RECVQ_EMPTY,
                VipErrorCode.VI_OVERRUN, VipErrorCode.RDMAW_PROT);
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
