package dev.verbs4j.verbs;

import dev.verbs4j.verbs.event.DescriptorWaiter;
import dev.verbs4j.verbs.event.Readiness;
import dev.verbs4j.verbs.internal.Libc;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The descriptor wait behind the completion channel, the async events and the CM event channel, on an eventfd. */
@Timeout(30)
class DescriptorWaiterTest {

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
    void anAttemptThatNeverSucceedsEndsInNullAfterTheTimeout() {
        AtomicInteger attempts = new AtomicInteger();
        long start = System.nanoTime();
        assertThat(waiter.<String>await(Duration.ofMillis(100), () -> {
            attempts.incrementAndGet();
            return null;
        })).isNull();
        assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(Duration.ofMillis(100).toNanos());
        assertThat(attempts).hasValueGreaterThanOrEqualTo(1);
    }

    @Test
    void aReadableDescriptorEndsTheSleepAndTheNextAttemptSucceeds() throws Exception {
        AtomicInteger attempts = new AtomicInteger();
        AtomicBoolean signalled = new AtomicBoolean();
        CompletableFuture<String> result = new CompletableFuture<>();
        Thread sleeper = Thread.ofPlatform().start(() -> result.complete(waiter.await(Duration.ofMinutes(1), () -> {
            attempts.incrementAndGet();
            return signalled.get() ? "event" : null;
        })));
        // a platform thread sleeps in poll(2) before its first attempt: nothing is tried until the descriptor is readable
        while (!inPoll(sleeper)) {
            Thread.onSpinWait();
        }
        assertThat(result).isNotDone();
        assertThat(attempts).hasValue(0);
        signalled.set(true);
        Libc.signal(fd);
        assertThat(result.join()).isEqualTo("event");
        assertThat(attempts).hasValue(1);
    }

    /** Whether {@code thread} is inside the poll(2) downcall of {@code Libc}. */
    private static boolean inPoll(Thread thread) {
        for (StackTraceElement frame : thread.getStackTrace()) {
            if (frame.getClassName().equals(Libc.class.getName()) && frame.getMethodName().equals("poll")) {
                return true;
            }
        }
        return false;
    }

    @Test
    void anInterruptEndsAWaitOnlyAfterAnAttemptHasFoundNothing() {
        waiter.interrupt();
        assertThat(waiter.await(Duration.ofMinutes(1), () -> "pending")).isEqualTo("pending");
        // the interrupt is still there for the next wait, which finds nothing and returns at once
        long start = System.nanoTime();
        Object nothing = waiter.await(Duration.ofMinutes(1), () -> null);
        assertThat(nothing).isNull();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(30));
        // taken: a later wait sleeps again until its timeout
        start = System.nanoTime();
        nothing = waiter.await(Duration.ofMillis(300), () -> null);
        assertThat(nothing).isNull();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(250));
    }

    @Test
    void aVirtualThreadTriesFirstAndThenSleepsUntilTheDescriptorIsReadable() throws Exception {
        AtomicInteger attempts = new AtomicInteger();
        AtomicBoolean signalled = new AtomicBoolean();
        CompletableFuture<String> result = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> result.complete(waiter.await(Duration.ofMinutes(1), () -> {
            boolean ready = signalled.get();
            attempts.incrementAndGet();
            return ready ? "event" : null;
        })));
        while (attempts.get() == 0) {
            Thread.onSpinWait();
        }
        signalled.set(true);
        Libc.signal(fd);
        assertThat(result.get(30, TimeUnit.SECONDS)).isEqualTo("event");
        assertThat(attempts).hasValue(2);
    }

    @Test
    void aZeroTimeoutTriesOnceWithoutSleeping() {
        AtomicInteger attempts = new AtomicInteger();
        Object result = waiter.await(Duration.ZERO, () -> {
            attempts.incrementAndGet();
            return null;
        });
        assertThat(result).isNull();
        assertThat(attempts).hasValue(1);
    }

    @Test
    void closeWakesTheSleepersAndWaitsForThem() {
        CompletableFuture<Void> sleeper = CompletableFuture.runAsync(() -> waiter.sleep(-1));
        waiter.close();
        sleeper.join();
        assertThat(sleeper).isDone();
    }

    @Test
    void afterAWakeUpEverySleepReturnsAtOnceAndAWakeUpAfterCloseIsIgnored() {
        waiter.wake();
        waiter.sleep(-1);
        waiter.sleep(-1);
        waiter.close();
        waiter.wake();
        waiter.sleep(-1);
        assertThatThrownBy(() -> waiter.await(Duration.ofMinutes(1), () -> {
            throw new IllegalStateException("closed");
        })).isInstanceOf(IllegalStateException.class);
    }

    // the watch: a task when the descriptor is readable or the waiter closes, never after a cancel

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

    @Test
    void aWaiterOnSeveralDescriptorsWakesWhenAnyIsReadableAndOnClose() throws Exception {
        int second = Libc.eventfd();
        DescriptorWaiter both = new DescriptorWaiter(fd, second);
        try {
            Libc.signal(second);
            long start = System.nanoTime();
            both.sleep(60_000);
            assertThat(System.nanoTime() - start).as("woken by the second descriptor").isLessThan(TimeUnit.SECONDS.toNanos(30));
            Libc.drain(second);
            Thread sleeper = Thread.ofVirtual().start(() -> both.sleep(-1));
            Thread.sleep(50);
            both.close();
            sleeper.join(TimeUnit.SECONDS.toMillis(10));
            assertThat(sleeper.isAlive()).as("a close wakes the sleeper").isFalse();
        } finally {
            both.close();
            Libc.close(second);
        }
    }
}
