package dev.verbs4j.vipl;

import dev.verbs4j.verbs.WcStatus;
import org.junit.jupiter.api.Test;

import java.util.List;

import static dev.verbs4j.vipl.VipReliabilityLevel.RELIABLE_DELIVERY;
import static dev.verbs4j.vipl.VipReliabilityLevel.RELIABLE_RECEPTION;
import static org.assertj.core.api.Assertions.assertThat;

/** Verbs completion status → descriptor Status bits and asynchronous errors (§10.4, §2.5, §9.9.1). */
class CompletionMappingTest {

    /** One row of a mapping table: a send-side completion (not a receive) and what it must map to. */
    private record Row(WcStatus status, VipReliabilityLevel level, int op, Object expected) {
    }

    private static Row row(WcStatus status, VipReliabilityLevel level, int op, Object expected) {
        return new Row(status, level, op, expected);
    }

    /** Every row's {@link CompletionMapping#errorBits} is its expected Status bits. */
    private static void assertErrorBits(List<Row> rows) {
        for (Row r : rows) {
            assertThat(CompletionMapping.errorBits(r.status(), r.level(), false, r.op())).as("%s", r).isEqualTo(r.expected());
        }
    }

    /** Every row's {@link CompletionMapping#asyncError} is its expected error (null: none). */
    private static void assertAsyncErrors(List<Row> rows) {
        for (Row r : rows) {
            assertThat(CompletionMapping.asyncError(r.status(), r.level(), false, r.op())).as("%s", r).isEqualTo(r.expected());
        }
    }

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
        assertErrorBits(List.of(
                row(WcStatus.REM_ACCESS_ERR, RELIABLE_DELIVERY, VipControl.OP_RDMAREAD, VipStatus.RDMA_PROT_ERROR),
                row(WcStatus.REM_ACCESS_ERR, RELIABLE_DELIVERY, VipControl.OP_RDMAWRITE, VipStatus.TRANSPORT_ERROR),
                row(WcStatus.REM_ACCESS_ERR, RELIABLE_RECEPTION, VipControl.OP_RDMAWRITE, VipStatus.RDMA_PROT_ERROR),
                row(WcStatus.RNR_RETRY_EXC_ERR, RELIABLE_RECEPTION, VipControl.OP_SENDRECV, VipStatus.REMOTE_DESC_ERROR),
                row(WcStatus.RNR_RETRY_EXC_ERR, RELIABLE_DELIVERY, VipControl.OP_SENDRECV, VipStatus.TRANSPORT_ERROR),
                // rxe reports an RDMA Write the target queue pair does not enable as an invalid request: a protection error
                row(WcStatus.REM_INV_REQ_ERR, RELIABLE_RECEPTION, VipControl.OP_RDMAWRITE, VipStatus.RDMA_PROT_ERROR),
                row(WcStatus.REM_INV_REQ_ERR, RELIABLE_RECEPTION, VipControl.OP_SENDRECV, VipStatus.REMOTE_DESC_ERROR)));
        assertAsyncErrors(List.of(
                row(WcStatus.REM_ACCESS_ERR, RELIABLE_DELIVERY, VipControl.OP_RDMAWRITE, VipErrorCode.RDMAW_PROT),
                row(WcStatus.RNR_RETRY_EXC_ERR, RELIABLE_DELIVERY, VipControl.OP_SENDRECV, VipErrorCode.RECVQ_EMPTY),
                row(WcStatus.RNR_RETRY_EXC_ERR, RELIABLE_RECEPTION, VipControl.OP_SENDRECV, null),
                row(WcStatus.REM_INV_REQ_ERR, RELIABLE_DELIVERY, VipControl.OP_RDMAWRITE, VipErrorCode.RDMAW_PROT)));
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
