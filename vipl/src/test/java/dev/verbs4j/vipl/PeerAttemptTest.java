package dev.verbs4j.vipl;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The pause of a peer attempt between two requests: a cancellation ends it at once — no device needed. */
class PeerAttemptTest {

    @Test
    void aCancellationEndsThePauseAtOnce() throws Exception {
        PeerConnect.Attempt attempt = new PeerConnect.Attempt();
        CompletableFuture<Boolean> paused = new CompletableFuture<>();
        Thread t = Thread.ofVirtual().start(() -> paused.complete(attempt.pause(TimeUnit.MINUTES.toNanos(10))));
        Thread.sleep(100);
        assertThat(paused).isNotDone();
        long t0 = System.nanoTime();
        attempt.cancel(VipReturn.INVALID_PARAMETER);
        assertThat(paused.get(5, TimeUnit.SECONDS)).as("cancelled").isFalse();
        assertThat(System.nanoTime() - t0).isLessThan(TimeUnit.SECONDS.toNanos(2));
        assertThat(t.join(Duration.ofSeconds(5))).isTrue();
        assertThat(attempt.outcome.join()).isEqualTo(VipReturn.INVALID_PARAMETER);
        assertThat(attempt.pause(TimeUnit.MINUTES.toNanos(10))).as("cancelled before").isFalse();
    }

    @Test
    void aPauseNotCancelledLastsItsTime() {
        PeerConnect.Attempt attempt = new PeerConnect.Attempt();
        long t0 = System.nanoTime();
        assertThat(attempt.pause(TimeUnit.MILLISECONDS.toNanos(50))).isTrue();
        assertThat(System.nanoTime() - t0).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(50));
        assertThat(attempt.pause(0)).isTrue();
    }

    @Test
    void anInterruptEndsThePauseAndIsKept() {
        PeerConnect.Attempt attempt = new PeerConnect.Attempt();
        Thread.currentThread().interrupt();
        try {
            assertThat(attempt.pause(TimeUnit.MINUTES.toNanos(10))).isFalse();
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        } finally {
            Thread.interrupted();
        }
    }
}
