package dev.verbs4j.verbs;

import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Descriptors of one thread: usable by their thread, a clear exception from any other, no device needed. */
class ConfinedDescriptorsTest {

    /** What resetting the first of {@code sends} threw on a new platform thread (null: nothing), within 10 s. */
    private static Throwable resetOnAnotherThread(SendRequests sends) throws Exception {
        CompletableFuture<Throwable> other = new CompletableFuture<>();
        Thread.ofPlatform().start(() -> {
            try {
                sends.reset(0).wrId(1);
                other.complete(null);
            } catch (Throwable e) {
                other.complete(e);
            }
        });
        return other.get(10, TimeUnit.SECONDS);
    }

    @Test
    void confinedDescriptorsWorkOnTheirThreadAndRefuseOthers() throws Exception {
        try (SendRequests sends = SendRequests.confined(2, 1);
             ReceiveRequests recvs = ReceiveRequests.confined(2, 1);
             WorkCompletions wcs = WorkCompletions.confined(4)) {
            sends.reset(1).wrId(42).opcode(Opcode.SEND);
            recvs.get(0).wrId(7);
            assertThat(sends.capacity()).isEqualTo(2);
            assertThat(wcs.capacity()).isEqualTo(4);
            assertThat(resetOnAnotherThread(sends)).isInstanceOf(WrongThreadException.class);
        }
    }

    @Test
    void sharedDescriptorsStayUsableFromAnyThread() throws Exception {
        try (SendRequests sends = new SendRequests(1, 1)) {
            assertThat(resetOnAnotherThread(sends)).isNull();
        }
        assertThatThrownBy(() -> SendRequests.confined(0, 1)).isInstanceOf(IllegalArgumentException.class);
    }
}
