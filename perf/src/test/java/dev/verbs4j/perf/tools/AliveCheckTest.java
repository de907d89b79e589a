package dev.verbs4j.perf.tools;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The timing rule of {@link AliveCheck}, perftest's {@code check_alive}, on a made-up clock. */
class AliveCheckTest {

    private static final long S = 1_000_000_000L;

    @AfterEach
    void clear() {
        System.clearProperty(AliveCheck.PERIOD_PROPERTY);
    }

    @Test
    void nothingReceivedEndsTheRunAtTheFirstLook() {
        AliveCheck a = new AliveCheck(60);
        a.arm(200, 0);
        assertThat(a.silent(59 * S)).isFalse();
        assertThat(a.silent(60 * S)).isTrue();
        assertThat(a.current()).isZero();
        assertThat(a.total()).isEqualTo(200);
    }

    @Test
    void progressDefersTheVerdictByAPeriod() {
        AliveCheck a = new AliveCheck(60);
        a.arm(200, 0);
        a.received(10);
        assertThat(a.silent(60 * S)).isFalse();
        assertThat(a.silent(119 * S)).isFalse();
        a.received(20);
        assertThat(a.silent(120 * S)).isFalse();
        assertThat(a.silent(180 * S)).isTrue();
        assertThat(a.current()).isEqualTo(20);
    }

    @Test
    void aCompleteCountIsNoVerdictAndStopsTheLooks() {
        AliveCheck a = new AliveCheck(60);
        a.arm(5, 0);
        a.received(5);
        assertThat(a.silent(60 * S)).isFalse();
        assertThat(a.silent(120 * S)).isFalse();
        assertThat(a.silent(500 * S)).isFalse();
    }

    @Test
    void aLaterLoopStartsFromTheCountBefore() {
        // perftest keeps the receive count across the sizes of -a and sets only the last look's back
        AliveCheck a = new AliveCheck(60);
        a.arm(5, 0);
        a.received(5);
        a.loopEnded();
        a.arm(5, 1000 * S);
        assertThat(a.silent(1060 * S)).isFalse(); // 5 > 0: counted as progress
        assertThat(a.silent(1120 * S)).isFalse(); // 5 == 5 but not fewer than required: no verdict
        assertThat(a.silent(5000 * S)).isFalse(); // and no further look
    }

    @Test
    void thePeriodComesFromTheProperty() {
        assertThat(AliveCheck.period()).isEqualTo(60);
        System.setProperty(AliveCheck.PERIOD_PROPERTY, "2");
        assertThat(AliveCheck.period()).isEqualTo(2);
        AliveCheck a = new AliveCheck(AliveCheck.period());
        a.arm(1, 0);
        assertThat(a.silent(2 * S)).isTrue();
        System.setProperty(AliveCheck.PERIOD_PROPERTY, "0");
        assertThatThrownBy(AliveCheck::period).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(AliveCheck.PERIOD_PROPERTY);
        System.setProperty(AliveCheck.PERIOD_PROPERTY, "soon");
        assertThatThrownBy(AliveCheck::period).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(AliveCheck.PERIOD_PROPERTY);
    }
}
