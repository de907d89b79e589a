package dev.verbs4j.verbs;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The blocking calls of verbs on virtual threads: more virtual threads than carriers wait in
 * {@link CompletionChannel#await} or {@link Context#awaitAsyncEvent} at once, parked (their
 * carriers run other virtual threads meanwhile, JFR reports none pinned), beside one platform
 * thread in the same call; the event wakes a virtual thread, and closing the resource wakes them
 * all with the exception the platform thread gets.
 */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
@Timeout(120)
class VirtualThreadWaitsDeviceTest {

    @Test
    void completionChannelWaitersParkAndClosingTheChannelWakesThemAsItWakesAPlatformThread() throws Exception {
        ParkedWaits.rehearsed(checked -> {
            try (Context ctx = Context.open(TestBed.loopback().device())) {
                CompletionChannel channel = ctx.createCompletionChannel();
                CompletionQueue cq = ctx.createCompletionQueue(4, channel, 0);
                cq.requestNotify(false);
                try (ParkedWaits waits = ParkedWaits.start("CompletionChannel.await", "pollReadable",
                        () -> channel.await(Duration.ofSeconds(60)))) {
                    waits.assertWokenAlike(checked, channel::close, "threw java.lang.IllegalStateException");
                }
            }
        });
    }

    @Test
    void aCompletionWakesAVirtualThreadParkedInAwait() throws Exception {
        try (ChannelLoopback loop = new ChannelLoopback();
             SendRequests sends = new SendRequests(1, 1);
             ReceiveRequests recvs = new ReceiveRequests(1, 1)) {
            CompletionChannel channel = loop.channel;
            CompletionQueue cq = loop.cq;
            cq.requestNotify(false);
            try (ParkedWaits waits = ParkedWaits.startOne("CompletionChannel.await", () -> channel.await(Duration.ofSeconds(60)))) {
                waits.awaitParked();
                waits.assertCarriersFree();
                loop.sendOneMessage(sends, recvs);
                assertThat(waits.virtualOutcomes()).containsExactly("returned " + cq);
                waits.assertNonePinned();
            }
            cq.ackEvents();
        }
    }

    @Test
    void asyncEventWaitersParkAndClosingTheContextWakesThemAsItWakesAPlatformThread() throws Exception {
        ParkedWaits.rehearsed(checked -> {
            Context ctx = Context.open(TestBed.loopback().device());
            try (ParkedWaits waits = ParkedWaits.start("Context.awaitAsyncEvent", "pollReadable",
                    () -> ctx.awaitAsyncEvent(Duration.ofSeconds(60)))) {
                waits.assertWokenAlike(checked, ctx::close, "threw java.lang.IllegalStateException");
            } finally {
                ctx.close();
            }
        });
    }

    @Test
    void anAsyncEventListenerHoldsNoOsThread() throws Exception {
        try (Context ctx = Context.open(TestBed.loopback().device());
             AsyncEventListener listener = AsyncEventListener.start(ctx, e -> { })) {
            assertThat(listener.isRunning()).isTrue();
            assertThat(Thread.getAllStackTraces().keySet()).as("platform threads")
                    .noneMatch(t -> t.getName().startsWith("verbs4j-async-"));
        }
    }
}
