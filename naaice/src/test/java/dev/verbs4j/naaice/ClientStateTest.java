package dev.verbs4j.naaice;

import dev.verbs4j.rdmacm.CmEventType;
import dev.verbs4j.rdmacm.Failure;
import dev.verbs4j.rdmacm.RdmaConnectionException;
import dev.verbs4j.verbs.WcStatus;

import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The failure rule of the client's state: the first failure stays, except that a real one replaces the NAA's return code. */
class ClientStateTest {

    private final ClientState state = new ClientState(new InetSocketAddress("127.0.0.1", NaaClient.DEFAULT_PORT));

    @Test
    void theFirstFailureStaysAndMovesToError() {
        NaaiceException first = state.fail(NaaiceException.Reason.TIMEOUT, 0, "first", null);
        NaaiceException second = state.fail(NaaiceException.Reason.PROTOCOL, 0, "second", null);
        assertThat(state.state()).isEqualTo(NaaState.ERROR);
        assertThat(second).isSameAs(first);
        assertThat(state.failure()).isSameAs(first);
        assertThat(state.failedForGood()).isTrue();
        assertThat(state.failedByReturnCode()).isFalse();
    }

    @Test
    void aRealFailureReplacesTheReturnCodeAndTheReturnCodeCanBeCleared() {
        state.fail(NaaiceException.Reason.NAA_RETURN_CODE, 3, "code 3", null);
        assertThat(state.failedByReturnCode()).isTrue();
        assertThat(state.failedForGood()).isFalse();
        state.clearReturnCode();
        assertThat(state.failure()).isNull();
        state.fail(NaaiceException.Reason.NAA_RETURN_CODE, 3, "code 3", null); // still in ERROR: not kept
        assertThat(state.failure()).isNull();
    }

    @Test
    void aRealFailureAfterTheReturnCodeIsKept() {
        state.fail(NaaiceException.Reason.NAA_RETURN_CODE, 3, "code 3", null);
        NaaiceException real = state.fail(NaaiceException.Reason.WORK_COMPLETION, 12, "flushed", null);
        assertThat(state.failure()).isSameAs(real);
        assertThat(state.failedWith(NaaiceException.Reason.WORK_COMPLETION)).isTrue();
    }

    @Test
    void nothingFailsAClosedClientAndExpectNamesTheState() {
        state.moveTo(NaaState.DISCONNECTED);
        NaaiceException e = state.fail(NaaiceException.Reason.LOCAL, 0, "late", null);
        assertThat(e.getMessage()).isEqualTo("LOCAL: late");
        assertThat(state.failure()).isNull();
        assertThatThrownBy(() -> state.expect(NaaState.INIT, "startConnect"))
                .isInstanceOf(IllegalStateException.class).hasMessage("startConnect needs INIT, the context is DISCONNECTED");
    }

    @Test
    void aTransportFailureIsCarriedAsTheConnectionsFailure() {
        NaaiceException wc = state.failTransport(NaaiceException.Reason.WORK_COMPLETION, 5, "flushed",
                Failure.workCompletion(WcStatus.WR_FLUSH_ERR));
        assertThat(wc.failure()).isEqualTo(Failure.workCompletion(WcStatus.WR_FLUSH_ERR));
        assertThat(wc.failure().kind()).isEqualTo(Failure.Kind.WORK_COMPLETION);
        RdmaConnectionException cm = new RdmaConnectionException("connect to x: rejected", Failure.event(CmEventType.REJECTED, 28),
                null, null);
        assertThat(new NaaiceException(NaaiceException.Reason.CM_EVENT, 28, "rejected", cm).failure())
                .isEqualTo(Failure.event(CmEventType.REJECTED, 28));
        assertThat(new NaaiceException(NaaiceException.Reason.PROTOCOL, 0, "unexpected message").failure()).isNull();
    }
}
