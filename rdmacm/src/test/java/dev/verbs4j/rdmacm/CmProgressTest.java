package dev.verbs4j.rdmacm;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The phases' timeouts, without a device: the limits and the message that names the phase and its event. */
class CmProgressTest {

    @Test
    void aPhaseTimeoutNamesThePhaseAndTheEventItAwaited() throws Exception {
        CmProgress connect = new CmProgress("connect to /198.18.0.2:7471", "connector", Duration.ofSeconds(10));
        connect.start(CmPhase.ADDRESS_RESOLUTION, Duration.ofMillis(2000));
        assertThat(connect.timedOut().getMessage())
                .isEqualTo("connect to /198.18.0.2:7471: timed out in phase address resolution (no RDMA_CM_EVENT_ADDR_RESOLVED within 2000 ms)");
        assertThat(connect.remainingNanos()).isPositive().isLessThanOrEqualTo(2_000_000_000L);
        connect.rest(CmPhase.READY_TO_CONNECT);
        assertThat(connect.remainingNanos()).isEqualTo(Long.MAX_VALUE);
        connect.check(); // a resting phase never times out
        assertThat(connect.failure()).isNull();
        CmProgress accept = new CmProgress("accept from /198.18.0.1:5000", "acceptor", Duration.ofSeconds(10));
        accept.start(CmPhase.ACCEPTANCE, Duration.ofMillis(500));
        assertThat(accept.timedOut().getMessage())
                .isEqualTo("accept from /198.18.0.1:5000: timed out in phase acceptance (no RDMA_CM_EVENT_ESTABLISHED within 500 ms)");
        // a whole that started a moment before its one phase: the limit is still the one given
        CmProgress listen = new CmProgress("listen on /198.18.0.2:20204", "listener", Duration.ofMillis(300));
        listen.start(CmPhase.REQUEST, Duration.ofMillis(300));
        assertThat(listen.timedOut().getMessage())
                .isEqualTo("listen on /198.18.0.2:20204: timed out in phase connection request (no RDMA_CM_EVENT_CONNECT_REQUEST within 300 ms)");
    }

    @Test
    void aPhaseGetsNoMoreThanIsLeftOfTheWhole() throws Exception {
        CmProgress progress = new CmProgress("connect to x", "connector", Duration.ofNanos(1));
        assertThatThrownBy(() -> progress.start(CmPhase.ROUTE_RESOLUTION, Duration.ofSeconds(2)))
                .isInstanceOf(RdmaTimeoutException.class)
                .hasMessageStartingWith("connect to x: timed out in phase route resolution (no RDMA_CM_EVENT_ROUTE_RESOLVED within ");
        assertThat(progress.failure()).isInstanceOf(RdmaTimeoutException.class);
        CmProgress cut = new CmProgress("connect to y", "connector", Duration.ofSeconds(5));
        cut.start(CmPhase.CONNECTION, Duration.ofSeconds(30));
        assertThat(cut.timedOut().getMessage()).matches(
                "connect to y: timed out in phase connection \\(no RDMA_CM_EVENT_ESTABLISHED within (5000|4999) ms, what was left of the whole 5000 ms\\)");
        assertThatThrownBy(progress::ensureActive).isInstanceOf(IllegalStateException.class)
                .hasMessage("connect to x: the connector failed in phase route resolution");
        CmTimeouts t = CmTimeouts.of(Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(3));
        assertThat(t.whole()).isEqualTo(Duration.ofSeconds(6));
        assertThat(t.limit(CmPhase.ROUTE_RESOLUTION)).isEqualTo(Duration.ofSeconds(2));
        assertThat(t.limit(CmPhase.ACCEPTANCE)).isEqualTo(Duration.ofSeconds(3));
        assertThat(CmTimeouts.within(Duration.ofSeconds(5)).limit(CmPhase.ADDRESS_RESOLUTION)).isEqualTo(Duration.ofSeconds(5));
        assertThatThrownBy(() -> t.limit(CmPhase.DECISION)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> CmTimeouts.within(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
    }
}
