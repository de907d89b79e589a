package dev.verbs4j.verbs;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Waiting for completions: timeouts, events, and waking a waiter by closing. */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
class CompletionChannelDeviceTest {

    @Test
    void waitTimesOutThenSeesTheEventOfAnArmedQueue() throws Exception {
        try (ChannelLoopback loop = new ChannelLoopback();
             WorkCompletions wcs = new WorkCompletions(4);
             SendRequests sends = new SendRequests(1, 1);
             ReceiveRequests recvs = new ReceiveRequests(1, 1)) {
            CompletionChannel channel = loop.channel;
            CompletionQueue cq = loop.cq;
            // The default GID: the port's RoCE v2 entry with the device's IPv4 address.
            assertThat(loop.ctx.preferredGidIndex(1)).isEqualTo(TestBed.loopback().gidIndex());

            cq.requestNotify(false);
            long start = System.nanoTime();
            assertThat(channel.await(Duration.ofMillis(200))).isNull();
            assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(150));

            loop.sendOneMessage(sends, recvs);
            assertThat(channel.await(Duration.ofSeconds(10))).isSameAs(cq);
            int seen = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (seen < 2 && System.nanoTime() < deadline) {
                seen += cq.poll(wcs);
            }
            assertThat(seen).isEqualTo(2);
            cq.ackEvents();
            assertThat(channel.fd()).isPositive();
            assertThat(channel.tryGetEvent()).isNull();
        }
    }

    @Test
    void closingTheChannelWakesABlockedWaiter() throws Exception {
        try (Context ctx = Context.open(TestBed.loopback().device())) {
            CompletionChannel channel = ctx.createCompletionChannel();
            CompletionQueue cq = ctx.createCompletionQueue(4, channel, 0);
            cq.requestNotify(false);
            CompletableFuture<Throwable> waiter = Blocked.start(() -> channel.await(Duration.ofSeconds(60)));
            Thread.sleep(300);
            assertThat(waiter).isNotDone();
            channel.close();
            Throwable woken = waiter.get(10, TimeUnit.SECONDS);
            assertThat(woken).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
            assertThat(cq.isClosed()).as("the channel closed its completion queue first").isTrue();
            assertThatThrownBy(() -> channel.await(Duration.ZERO)).isInstanceOf(IllegalStateException.class);
        }
    }
}
