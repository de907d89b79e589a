package dev.verbs4j.vipl;

import dev.verbs4j.verbs.WcStatus;
import org.junit.jupiter.api.Test;

import static dev.verbs4j.vipl.VipReliabilityLevel.RELIABLE_DELIVERY;
import static dev.verbs4j.vipl.VipReliabilityLevel.RELIABLE_RECEPTION;
import static org.assertj.core.api.Assertions.assertThat;

/** Verbs completion status → descriptor Status bits and asynchronous errors (§10.4, §2.5, §9.9.1). */
class CompletionMappingTest {

    @Test
    void localErrorsAndFlush() {
        assertThat(CompletionMapping.errorBits(WcStatus.SUCCESS, RELIABLE_DELIVERY, false, 0)).isZero();
        assertThat(CompletionMapping.errorBits(WcStatus.LOC_LEN_ERR, RELIABLE_DELIVERY, true, 0)).isEqualTo(VipStatus.LENGTH_ERROR);
        assertThat(CompletionMapping.errorBits(WcStatus.LOC_PROT_ERR, RELIABLE_DELIVERY, false, 0)).isEqualTo(VipStatus.PROTECTION_ERROR);
        assertThat(CompletionMapping.errorBits(WcStatus.WR_FLUSH_ERR, RELIABLE_RECEPTION, true, 0)).isEqualTo(VipStatus.DESC_FLUSHED_ERROR);
        assertThat(CompletionMapping.errorBits(WcStatus.RETRY_EXC_ERR, RELIABLE_DELIVERY, false, 0)).isEqualTo(VipStatus.TRANSPORT_ERROR);
    }

    /** §10.4 validity column: RDMA_PROT under RD for Reads only, under RR for Reads and Writes; REMOTE_DESC under RR only. */
    @Test
    void remoteErrorsDependOnTheLevel() {
        assertThat(CompletionMapping.errorBits(WcStatus.REM_ACCESS_ERR, RELIABLE_DELIVERY, false, VipControl.OP_RDMAREAD))
                .isEqualTo(VipStatus.RDMA_PROT_ERROR);
        assertThat(CompletionMapping.errorBits(WcStatus.REM_ACCESS_ERR, RELIABLE_DELIVERY, false, VipControl.OP_RDMAWRITE))
                .isEqualTo(VipStatus.TRANSPORT_ERROR);
        assertThat(CompletionMapping.asyncError(WcStatus.REM_ACCESS_ERR, RELIABLE_DELIVERY, false, VipControl.OP_RDMAWRITE))
                .isEqualTo(VipErrorCode.RDMAW_PROT);
        assertThat(CompletionMapping.errorBits(WcStatus.REM_ACCESS_ERR, RELIABLE_RECEPTION, false, VipControl.OP_RDMAWRITE))
                .isEqualTo(VipStatus.RDMA_PROT_ERROR);
        assertThat(CompletionMapping.errorBits(WcStatus.RNR_RETRY_EXC_ERR, RELIABLE_RECEPTION, false, VipControl.OP_SENDRECV))
                .isEqualTo(VipStatus.REMOTE_DESC_ERROR);
        assertThat(CompletionMapping.errorBits(WcStatus.RNR_RETRY_EXC_ERR, RELIABLE_DELIVERY, false, VipControl.OP_SENDRECV))
                .isEqualTo(VipStatus.TRANSPORT_ERROR);
        assertThat(CompletionMapping.asyncError(WcStatus.RNR_RETRY_EXC_ERR, RELIABLE_DELIVERY, false, VipControl.OP_SENDRECV))
                .isEqualTo(VipErrorCode.RECVQ_EMPTY);
        assertThat(CompletionMapping.asyncError(WcStatus.RNR_RETRY_EXC_ERR, RELIABLE_RECEPTION, false, VipControl.OP_SENDRECV)).isNull();
        // rxe reports an RDMA Write the target queue pair does not enable as an invalid request: a protection error
        assertThat(CompletionMapping.errorBits(WcStatus.REM_INV_REQ_ERR, RELIABLE_RECEPTION, false, VipControl.OP_RDMAWRITE))
                .isEqualTo(VipStatus.RDMA_PROT_ERROR);
        assertThat(CompletionMapping.asyncError(WcStatus.REM_INV_REQ_ERR, RELIABLE_DELIVERY, false, VipControl.OP_RDMAWRITE))
                .isEqualTo(VipErrorCode.RDMAW_PROT);
        assertThat(CompletionMapping.errorBits(WcStatus.REM_INV_REQ_ERR, RELIABLE_RECEPTION, false, VipControl.OP_SENDRECV))
                .isEqualTo(VipStatus.REMOTE_DESC_ERROR);
    }

    @Test
    void opBits() {
        assertThat(CompletionMapping.opBits(true, 0, true)).isEqualTo(VipStatus.OP_REMOTE_RDMA_WRITE);
        assertThat(CompletionMapping.opBits(true, 0, false)).isEqualTo(VipStatus.OP_RECEIVE);
        assertThat(CompletionMapping.opBits(false, VipControl.OP_RDMAREAD, false)).isEqualTo(VipStatus.OP_RDMA_READ);
        assertThat(CompletionMapping.opBits(false, VipControl.OP_RDMAWRITE, false)).isEqualTo(VipStatus.OP_RDMA_WRITE);
        assertThat(CompletionMapping.opBits(false, VipControl.OP_SENDRECV, false)).isEqualTo(VipStatus.OP_SEND);
    }
}
