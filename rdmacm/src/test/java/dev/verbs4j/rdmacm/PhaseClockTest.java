package dev.verbs4j.rdmacm;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The phases' timeouts, without a device: the limits and the message that names the phase and its event. */
class PhaseClockTest {

    @Test
    void aPhaseTimeoutNamesThePhaseAndTheEventItAwaited() throws Exception {
        PhaseClock clock = new PhaseClock(Duration.ofSeconds(10));
        clock.start(CmPhase.ADDRESS_RESOLUTION, Duration.ofMillis(2000), "connect to /198.18.0.2:7471");
        assertThat(clock.timedOut("connect to /198.18.0.2:7471").getMessage())
                .isEqualTo("connect to /198.18.0.2:7471: address resolution (no RDMA_CM_EVENT_ADDR_RESOLVED within 2000 ms)");
        assertThat(clock.remainingNanos()).isPositive().isLessThanOrEqualTo(2_000_000_000L);
        clock.start(CmPhase.ACCEPTANCE, Duration.ofMillis(500), "accept from /198.18.0.1:5000");
        assertThat(clock.timedOut("accept from /198.18.0.1:5000").getMessage())
                .isEqualTo("accept from /198.18.0.1:5000: acceptance (no RDMA_CM_EVENT_ESTABLISHED within 500 ms)");
        clock.rest(CmPhase.READY_TO_CONNECT);
        assertThat(clock.remainingNanos()).isEqualTo(Long.MAX_VALUE);
        clock.check("connect"); // a resting phase never times out
    }

    @Test
    void aPhaseGetsNoMoreThanIsLeftOfTheWhole() {
        PhaseClock clock = new PhaseClock(Duration.ofNanos(1));
        assertThatThrownBy(() -> clock.start(CmPhase.ROUTE_RESOLUTION, Duration.ofSeconds(2), "connect to x"))
                .isInstanceOf(RdmaTimeoutException.class)
                .hasMessageStartingWith("connect to x: route resolution (no RDMA_CM_EVENT_ROUTE_RESOLVED within ");
        CmTimeouts t = CmTimeouts.of(Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(3));
        assertThat(t.whole()).isEqualTo(Duration.ofSeconds(6));
        assertThat(t.limit(CmPhase.ROUTE_RESOLUTION)).isEqualTo(Duration.ofSeconds(2));
        assertThat(t.limit(CmPhase.ACCEPTANCE)).isEqualTo(Duration.ofSeconds(3));
        assertThat(CmTimeouts.within(Duration.ofSeconds(5)).limit(CmPhase.ADDRESS_RESOLUTION)).isEqualTo(Duration.ofSeconds(5));
        assertThatThrownBy(() -> t.limit(CmPhase.DECISION)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> CmTimeouts.within(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
    }
}
