package dev.verbs4j.verbs;

import org.junit.jupiter.api.Test;

import static dev.verbs4j.bindings.rdma_core_h.*;
import static org.assertj.core.api.Assertions.assertThat;

/** The Java constants and enums carry the C values of the rdma-core 44 headers. */
class ConstantsTest {

    @Test
    void accessAndSendFlags() {
        assertThat(new int[]{Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ, Access.REMOTE_ATOMIC,
                Access.MW_BIND, Access.ZERO_BASED, Access.ON_DEMAND, Access.HUGETLB, Access.RELAXED_ORDERING,
                Access.OPTIONAL_RANGE}).containsExactly(IBV_ACCESS_LOCAL_WRITE(), IBV_ACCESS_REMOTE_WRITE(),
                IBV_ACCESS_REMOTE_READ(), IBV_ACCESS_REMOTE_ATOMIC(), IBV_ACCESS_MW_BIND(), IBV_ACCESS_ZERO_BASED(),
                IBV_ACCESS_ON_DEMAND(), IBV_ACCESS_HUGETLB(), IBV_ACCESS_RELAXED_ORDERING(), IBV_ACCESS_OPTIONAL_RANGE());
        assertThat(new int[]{SendFlags.FENCE, SendFlags.SIGNALED, SendFlags.SOLICITED, SendFlags.INLINE, SendFlags.IP_CSUM})
                .containsExactly(IBV_SEND_FENCE(), IBV_SEND_SIGNALED(), IBV_SEND_SOLICITED(), IBV_SEND_INLINE(), IBV_SEND_IP_CSUM());
        assertThat(new long[]{SendOps.RDMA_WRITE, SendOps.RDMA_WRITE_WITH_IMM, SendOps.SEND, SendOps.SEND_WITH_IMM,
                SendOps.RDMA_READ, SendOps.ATOMIC_CMP_AND_SWP, SendOps.ATOMIC_FETCH_AND_ADD, SendOps.LOCAL_INV,
                SendOps.BIND_MW, SendOps.SEND_WITH_INV}).containsExactly(IBV_QP_EX_WITH_RDMA_WRITE(),
                IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM(), IBV_QP_EX_WITH_SEND(), IBV_QP_EX_WITH_SEND_WITH_IMM(),
                IBV_QP_EX_WITH_RDMA_READ(), IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP(), IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD(),
                IBV_QP_EX_WITH_LOCAL_INV(), IBV_QP_EX_WITH_BIND_MW(), IBV_QP_EX_WITH_SEND_WITH_INV());
        assertThat(new long[]{ExtendedPoller.WITH_BYTE_LEN, ExtendedPoller.WITH_IMM, ExtendedPoller.WITH_QP_NUM,
                ExtendedPoller.WITH_SRC_QP, ExtendedPoller.WITH_SLID, ExtendedPoller.WITH_SL,
                ExtendedPoller.WITH_DLID_PATH_BITS, ExtendedPoller.STANDARD}).containsExactly(IBV_WC_EX_WITH_BYTE_LEN(),
                IBV_WC_EX_WITH_IMM(), IBV_WC_EX_WITH_QP_NUM(), IBV_WC_EX_WITH_SRC_QP(), IBV_WC_EX_WITH_SLID(),
                IBV_WC_EX_WITH_SL(), IBV_WC_EX_WITH_DLID_PATH_BITS(), (long) IBV_WC_STANDARD_FLAGS());
        assertThat(new int[]{WorkCompletion.FLAG_GRH, WorkCompletion.FLAG_WITH_IMM, WorkCompletion.FLAG_IP_CSUM_OK,
                WorkCompletion.FLAG_WITH_INV}).containsExactly(IBV_WC_GRH(), IBV_WC_WITH_IMM(), IBV_WC_IP_CSUM_OK(), IBV_WC_WITH_INV());
    }

    @Test
    void queuePairAttributeMask() {
        assertThat(new int[]{QueuePairAttributes.STATE, QueuePairAttributes.ACCESS_FLAGS, QueuePairAttributes.PKEY_INDEX,
                QueuePairAttributes.PORT, QueuePairAttributes.QKEY, QueuePairAttributes.AV, QueuePairAttributes.PATH_MTU,
                QueuePairAttributes.TIMEOUT, QueuePairAttributes.RETRY_CNT, QueuePairAttributes.RNR_RETRY,
                QueuePairAttributes.RQ_PSN, QueuePairAttributes.MAX_QP_RD_ATOMIC, QueuePairAttributes.MIN_RNR_TIMER,
                QueuePairAttributes.SQ_PSN, QueuePairAttributes.MAX_DEST_RD_ATOMIC, QueuePairAttributes.DEST_QPN})
                .containsExactly(IBV_QP_STATE(), IBV_QP_ACCESS_FLAGS(), IBV_QP_PKEY_INDEX(), IBV_QP_PORT(), IBV_QP_QKEY(),
                        IBV_QP_AV(), IBV_QP_PATH_MTU(), IBV_QP_TIMEOUT(), IBV_QP_RETRY_CNT(), IBV_QP_RNR_RETRY(),
                        IBV_QP_RQ_PSN(), IBV_QP_MAX_QP_RD_ATOMIC(), IBV_QP_MIN_RNR_TIMER(), IBV_QP_SQ_PSN(),
                        IBV_QP_MAX_DEST_RD_ATOMIC(), IBV_QP_DEST_QPN());
    }

    @Test
    void attributesRestrictedToTheQueuePairType() {
        // what rdma_init_qp_attr gives for RTR and RTS of a connection, kept as each type takes it
        QueuePairAttributes rtr = new QueuePairAttributes().state(QpState.RTR).pathMtu(Mtu.of(3)).destQpn(17).rqPsn(5)
                .maxDestRdAtomic(4).minRnrTimer(12).accessFlags(Access.REMOTE_WRITE);
        int all = rtr.mask();
        assertThat(rtr.restrictTo(QpType.RC).mask()).isEqualTo(all);
        assertThat(rtr.restrictTo(QpType.UC).mask()).isEqualTo(IBV_QP_STATE() | IBV_QP_PATH_MTU() | IBV_QP_DEST_QPN()
                | IBV_QP_RQ_PSN() | IBV_QP_ACCESS_FLAGS());
        QueuePairAttributes rts = new QueuePairAttributes().state(QpState.RTS).sqPsn(9).timeout(14).retryCount(7)
                .rnrRetry(7).maxRdAtomic(4);
        assertThat(rts.restrictTo(QpType.UC).mask()).isEqualTo(IBV_QP_STATE() | IBV_QP_SQ_PSN());
        assertThat(new QueuePairAttributes().state(QpState.RTR).destQpn(3).qkey(7).restrictTo(QpType.UD).mask())
                .isEqualTo(IBV_QP_STATE() | IBV_QP_QKEY());
    }

    @Test
    void enumsHaveTheCValues() {
        assertThat(Opcode.SEND.code()).isEqualTo(IBV_WR_SEND());
        assertThat(Opcode.ATOMIC_WRITE.code()).isEqualTo(IBV_WR_ATOMIC_WRITE());
        assertThat(Opcode.BIND_MW.code()).isEqualTo(IBV_WR_BIND_MW());
        assertThat(Opcode.SEND_WITH_INV.code()).isEqualTo(IBV_WR_SEND_WITH_INV());
        assertThat(Opcode.LOCAL_INV.code()).isEqualTo(IBV_WR_LOCAL_INV());
        assertThat(Opcode.ATOMIC_FETCH_AND_ADD.code()).isEqualTo(IBV_WR_ATOMIC_FETCH_AND_ADD());
        assertThat(WcStatus.TM_RNDV_INCOMPLETE.code()).isEqualTo(IBV_WC_TM_RNDV_INCOMPLETE());
        assertThat(WcStatus.RNR_RETRY_EXC_ERR.code()).isEqualTo(IBV_WC_RNR_RETRY_EXC_ERR());
        assertThat(WcOpcode.RECV_RDMA_WITH_IMM.code()).isEqualTo(IBV_WC_RECV_RDMA_WITH_IMM());
        assertThat(WcOpcode.LOCAL_INV.code()).isEqualTo(IBV_WC_LOCAL_INV());
        assertThat(WcOpcode.of(IBV_WC_FETCH_ADD())).isEqualTo(WcOpcode.FETCH_ADD);
        assertThat(QpType.UD.code()).isEqualTo(IBV_QPT_UD());
        assertThat(QpType.XRC_RECV.code()).isEqualTo(IBV_QPT_XRC_RECV());
        assertThat(QpState.ERR.code()).isEqualTo(IBV_QPS_ERR());
        assertThat(AsyncEventType.WQ_FATAL.ordinal()).isEqualTo(IBV_EVENT_WQ_FATAL());
        assertThat(AsyncEventType.SRQ_LIMIT_REACHED.ordinal()).isEqualTo(IBV_EVENT_SRQ_LIMIT_REACHED());
        assertThat(Mtu.MTU_4096.code()).isEqualTo(IBV_MTU_4096());
        assertThat(PortState.ACTIVE.code()).isEqualTo(IBV_PORT_ACTIVE());
        assertThat(GidType.ROCE_V2.code()).isEqualTo(IBV_GID_TYPE_ROCE_V2());
        assertThat(MemoryWindow.nextRkey(0x12345fff)).isEqualTo(0x12345f00);
        assertThat(MemoryWindow.nextRkey(0x00000101)).isEqualTo(0x00000102);
    }
}
