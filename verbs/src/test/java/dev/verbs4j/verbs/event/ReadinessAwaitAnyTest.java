package dev.verbs4j.verbs.event;

import dev.verbs4j.verbs.internal.Libc;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Waiting on event sources: the index of the one with an event, -1 after the timeout, on platform and virtual threads. */
@Timeout(30)
class ReadinessAwaitAnyTest {

    @Test
    void returnsTheIndexOfTheSourceWithAnEventOrMinusOneAfterTheTimeout() throws Exception {
        int a = Libc.eventfd(), b = Libc.eventfd();
        try {
            EventSource sa = () -> a;
            EventSource sb = () -> b;
            assertThat(Readiness.awaitAny(Duration.ofMillis(50), sa, sb)).isEqualTo(-1);
            Libc.signal(b);
            assertThat(Readiness.awaitAny(Duration.ofSeconds(5), sa, sb)).isEqualTo(1);
            CompletableFuture<Integer> virtual = new CompletableFuture<>();
            Thread.ofVirtual().start(() -> virtual.complete(Readiness.awaitAny(null, sa, sb)));
            assertThat(virtual.get(10, TimeUnit.SECONDS)).isEqualTo(1);
            Libc.drain(b);
            CompletableFuture<Integer> timedOut = new CompletableFuture<>();
            Thread.ofVirtual().start(() -> timedOut.complete(Readiness.awaitAny(Duration.ZERO, sa, sb)));
            assertThat(timedOut.get(10, TimeUnit.SECONDS)).isEqualTo(-1);
        } finally {
            Libc.close(a);
            Libc.close(b);
        }
    }
}
