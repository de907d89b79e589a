package dev.verbs4j.verbs.event;

import dev.verbs4j.verbs.internal.Libc;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A descriptor waiter's watch: its task runs when the descriptor is readable or the waiter closes, never after a cancel. */
@Timeout(30)
class DescriptorWaiterWatchTest {

    private int fd;
    private DescriptorWaiter waiter;

    @BeforeEach
    void open() {
        fd = Libc.eventfd();
        waiter = new DescriptorWaiter(fd);
    }

    @AfterEach
    void close() {
        waiter.close();
        Libc.close(fd);
    }

    @Test
    void theTaskRunsOnAVirtualThreadOnceTheDescriptorIsReadable() throws Exception {
        CountDownLatch ran = new CountDownLatch(1);
        AtomicInteger virtual = new AtomicInteger();
        waiter.whenReadable(() -> {
            if (Thread.currentThread().isVirtual()) {
                virtual.incrementAndGet();
            }
            ran.countDown();
        });
        assertThat(ran.await(200, TimeUnit.MILLISECONDS)).as("ran before the descriptor was readable").isFalse();
        Libc.signal(fd);
        assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(virtual).hasValue(1);
    }

    @Test
    void closingRunsAPendingTaskBeforeItReturns() throws Exception {
        CountDownLatch ran = new CountDownLatch(1);
        waiter.whenReadable(ran::countDown);
        waiter.close();
        // close returned once the watch had left: the task has started (or is about to)
        assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
        assertThatThrownBy(() -> waiter.whenReadable(() -> { })).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aCancelledWatchNeverRunsAndCloseDoesNotWaitForIt() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        Readiness.Watch watch = waiter.whenReadable(runs::incrementAndGet);
        assertThat(watch.cancel()).isTrue();
        assertThat(watch.cancel()).isFalse();
        Libc.signal(fd);
        Thread.sleep(200);
        assertThat(runs).hasValue(0);
        waiter.close();
        assertThat(runs).hasValue(0);
    }

    @Test
    void aWatchThatRanCannotBeCancelled() throws Exception {
        CountDownLatch ran = new CountDownLatch(1);
        Readiness.Watch watch = waiter.whenReadable(ran::countDown);
        Libc.signal(fd);
        assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(watch.cancel()).isFalse();
    }
}
