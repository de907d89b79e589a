package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.WcStatus;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.EnumSet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The outcomes of the connection layer, without a device: every error event maps to a defined exception. */
class RdmaConnectionExceptionTest {

    @Test
    void everyErrorEventMapsToAnEventException() {
        for (CmEventType type : EnumSet.of(CmEventType.ADDR_ERROR, CmEventType.ROUTE_ERROR, CmEventType.CONNECT_ERROR,
                CmEventType.UNREACHABLE, CmEventType.REJECTED, CmEventType.DISCONNECTED, CmEventType.DEVICE_REMOVAL,
                CmEventType.TIMEWAIT_EXIT)) {
            RdmaConnectionException e = RdmaConnectionException.of(new CmEvent(type, -110, null, null, null, null, null), "connect");
            assertThat(e.kind()).as("%s", type).isEqualTo(Failure.Kind.EVENT);
            assertThat(e.event()).isEqualTo(type);
            assertThat(e.status()).isEqualTo(-110);
            assertThat(e.errno()).isEqualTo(110);
            assertThat(e.getMessage()).startsWith("connect: ").contains(type.toString());
        }
    }

    @Test
    void rejectionsNameTheReasonAndKeepThePrivateData() {
        RdmaConnectionException e = RdmaConnectionException.of(new CmEvent(CmEventType.REJECTED, CmEvent.REJECT_CONSUMER, null,
                null, new byte[]{4, 5, 6}, null, null), "connect");
        assertThat(e.getMessage()).contains("rejected by the peer");
        assertThat(e.privateData()).containsExactly(4, 5, 6);
        assertThat(e.errno()).isZero();
        assertThat(RdmaConnectionException.of(new CmEvent(CmEventType.REJECTED, CmEvent.REJECT_INVALID_SERVICE_ID, null, null,
                null, null, null), "connect").getMessage()).contains("nobody listens");
    }

    @Test
    void aServersRejectionReasonReachesTheMessage() {
        byte[] data = java.util.Arrays.copyOf(new RejectionReason("rdma_create_qp failed: EINVAL").encode(), 148);
        RdmaConnectionException e = RdmaConnectionException.of(new CmEvent(CmEventType.REJECTED, CmEvent.REJECT_CONSUMER, null,
                null, data, null, null), "connect to /198.18.0.2:7000");
        assertThat(e.rejectionReason()).isEqualTo("rdma_create_qp failed: EINVAL");
        assertThat(e.getMessage()).isEqualTo("connect to /198.18.0.2:7000: rejected by the peer: rdma_create_qp failed: EINVAL [RDMA_CM_EVENT_REJECTED]");
        assertThat(new RejectionReason("x".repeat(500)).encode()).hasSize(RejectionReason.MAX_BYTES);
        assertThat(RdmaConnectionException.of(new CmEvent(CmEventType.REJECTED, CmEvent.REJECT_CONSUMER, null, null,
                new byte[]{1, 2}, null, null), "connect").rejectionReason()).isNull();
    }

    @Test
    void aSetUpFailureIsToldByVerbAndErrnoFirst() {
        String why = RdmaServer.setUpFailure(new dev.verbs4j.verbs.VerbsException("ibv_reg_mr", 12,
                "cannot allocate a region of 4398046511104 bytes"));
        assertThat(why).isEqualTo("the server could not set up the connection: ibv_reg_mr ENOMEM"
                + " (cannot allocate a region of 4398046511104 bytes)");
        assertThat(RejectionReason.decode(new RejectionReason(why).encode())).contains(new RejectionReason(why));
        assertThat(RdmaServer.setUpFailure(new IllegalStateException("x is closed"))).endsWith(": x is closed");
    }

    @Test
    void completionErrorsAndTimeoutsHaveTheirKinds() {
        RdmaConnectionException e = RdmaConnectionException.of(WcStatus.RETRY_EXC_ERR, "send");
        assertThat(e.kind()).isEqualTo(Failure.Kind.WORK_COMPLETION);
        assertThat(e.wcStatus()).isEqualTo(WcStatus.RETRY_EXC_ERR);
        assertThat(e.rethrown("flush")).hasCause(e).hasMessageStartingWith("flush: send:");
        assertThat(new RdmaTimeoutException("t").kind()).isEqualTo(Failure.Kind.TIMEOUT);
        assertThat(new RdmaTimeoutException("t")).isInstanceOf(java.io.IOException.class);
    }

    @Test
    void anInterruptedWaitIsItsOwnKindAndKeepsTheInterruptStatus() {
        try {
            RdmaConnectionException e = RdmaConnectionException.interrupted("receive");
            assertThat(e.kind()).isEqualTo(Failure.Kind.INTERRUPTED);
            assertThat(e).hasMessage("receive: interrupted while waiting").hasCauseInstanceOf(java.io.InterruptedIOException.class);
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        } finally {
            Thread.interrupted();
        }
    }

    @Test
    void theFailureValueCarriesWhatItsKindNeeds() {
        Failure rejected = RdmaConnectionException.of(new CmEvent(CmEventType.REJECTED, 28, null, null, null, null, null), "connect").failure();
        assertThat(rejected).isEqualTo(Failure.event(CmEventType.REJECTED, 28));
        assertThat(rejected.errno()).isZero();
        assertThat(Failure.event(CmEventType.ADDR_ERROR, -110).errno()).isEqualTo(110);
        assertThat(Failure.event(CmEventType.ADDR_ERROR, -110)).hasToString("EVENT RDMA_CM_EVENT_ADDR_ERROR status -110 ETIMEDOUT");
        assertThat(Failure.workCompletion(WcStatus.RETRY_EXC_ERR)).hasToString("WORK_COMPLETION RETRY_EXC_ERR");
        assertThat(Failure.verbs(12)).hasToString("VERBS_ERROR ENOMEM");
        assertThat(Failure.of(Failure.Kind.CLOSED)).hasToString("CLOSED");
        assertThatThrownBy(() -> Failure.of(null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void optionsAreChecked() {
        ConnectionOptions o = ConnectionOptions.DEFAULT.withMaxMessageSize(4096).withDepths(2, 3).withLinger(Duration.ZERO)
                .withPrivateData(new byte[]{1}).withMinRnrTimer(1);
        assertThat(o).isEqualTo(new ConnectionOptions(4096, 2, 3, Duration.ZERO, new byte[]{1}, 1, 0));
        assertThatThrownBy(() -> o.withMaxMessageSize(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> o.withDepths(0, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> o.withLinger(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> o.withPrivateData(new byte[197])).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> o.withMinRnrTimer(0)).isInstanceOf(IllegalArgumentException.class);
        assertThat(o.postedReceives()).isFalse();
        ConnectionOptions posted = o.withPostedReceives(true);
        assertThat(posted).isNotEqualTo(o).isEqualTo(new ConnectionOptions(4096, 2, 3, Duration.ZERO, new byte[]{1}, 1, 0, true));
        assertThat(posted.withDepths(4, 4).postedReceives()).isTrue();
        assertThat(posted.toString()).contains("postedReceives");
        assertThat(RdmaServer.Verdict.reject(null).privateData()).isEmpty();
        assertThat(RdmaServer.Verdict.accept().accepted()).isTrue();
    }
}
