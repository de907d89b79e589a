package dev.verbs4j.verbs;

import dev.verbs4j.verbs.event.DescriptorWaiter;
import dev.verbs4j.verbs.internal.Libc;
import dev.verbs4j.verbs.event.Readiness;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Virtual threads waiting on descriptors (eventfds here; completion and event channels on the
 * device) park without holding a carrier and are woken by the poller thread.
 */
@Timeout(60)
class ReadinessTest {

    /** Runs {@code body} on a new virtual thread and returns its result. */
    private static <T> CompletableFuture<T> virtual(java.util.concurrent.Callable<T> body) {
        CompletableFuture<T> f = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> {
            try {
                f.complete(body.call());
            } catch (Throwable t) {
                f.completeExceptionally(t);
            }
        });
        return f;
    }

    /** Waits until {@code thread} is parked (WAITING or TIMED_WAITING). */
    private static void awaitParked(List<Thread> threads, int count) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            if (threads.size() >= count && threads.stream().allMatch(t ->
                    t.getState() == Thread.State.WAITING || t.getState() == Thread.State.TIMED_WAITING)) {
                return;
            }
            Thread.sleep(5);
        }
        throw new AssertionError("the virtual threads did not park");
    }

    @Test
    void aVirtualThreadIsWokenWhenItsDescriptorBecomesReadableAndLearnsWhichOne() throws Exception {
        int a = Libc.eventfd(), b = Libc.eventfd();
        try {
            List<Thread> waiting = new CopyOnWriteArrayList<>();
            CompletableFuture<Integer> index = virtual(() -> {
                waiting.add(Thread.currentThread());
                return Readiness.awaitReadable(new int[]{a, b}, -1);
            });
            awaitParked(waiting, 1);
            assertThat(index).isNotDone();
            Libc.signal(b);
            assertThat(index.get(10, TimeUnit.SECONDS)).isEqualTo(1);
        } finally {
            Libc.close(a);
            Libc.close(b);
        }
    }

    @Test
    void aVirtualThreadsWaitEndsAfterItsTimeoutWithMinusOne() throws Exception {
        int fd = Libc.eventfd();
        try {
            long start = System.nanoTime();
            assertThat(virtual(() -> Readiness.awaitReadable(new int[]{fd}, 150)).get(10, TimeUnit.SECONDS))
                    .isEqualTo(-1);
            assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(150));
            // the registration is gone: the descriptor can be registered again and fires
            Libc.signal(fd);
            assertThat(virtual(() -> Readiness.awaitReadable(new int[]{fd}, 10_000)).get(10, TimeUnit.SECONDS))
                    .isZero();
        } finally {
            Libc.close(fd);
        }
    }

    @Test
    void severalVirtualThreadsOnOneDescriptorAreAllWoken() throws Exception {
        int fd = Libc.eventfd();
        try {
            List<Thread> waiting = new CopyOnWriteArrayList<>();
            List<CompletableFuture<Integer>> results = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                results.add(virtual(() -> {
                    waiting.add(Thread.currentThread());
                    return Readiness.awaitReadable(new int[]{fd}, 30_000);
                }));
            }
            awaitParked(waiting, 5);
            Libc.signal(fd);
            for (CompletableFuture<Integer> r : results) {
                assertThat(r.get(10, TimeUnit.SECONDS)).isZero();
            }
        } finally {
            Libc.close(fd);
        }
    }

    @Test
    void anInterruptDoesNotEndTheWaitButIsKept() throws Exception {
        int fd = Libc.eventfd();
        try {
            List<Thread> waiting = new CopyOnWriteArrayList<>();
            CompletableFuture<Boolean> interrupted = virtual(() -> {
                waiting.add(Thread.currentThread());
                int ready = Readiness.awaitReadable(new int[]{fd}, 30_000);
                assertThat(ready).isZero();
                return Thread.currentThread().isInterrupted();
            });
            awaitParked(waiting, 1);
            waiting.get(0).interrupt();
            Thread.sleep(100);
            assertThat(interrupted).isNotDone();
            Libc.signal(fd);
            assertThat(interrupted.get(10, TimeUnit.SECONDS)).isTrue();
        } finally {
            Libc.close(fd);
        }
    }

    @Test
    void aTaskRunsOnceWhenOneOfItsDescriptorsIsReadableAndNotAfterCancel() throws Exception {
        int a = Libc.eventfd(), b = Libc.eventfd();
        try {
            CompletableFuture<Boolean> ran = new CompletableFuture<>();
            AtomicInteger runs = new AtomicInteger();
            Readiness.Watch watch = Readiness.whenReadable(new int[]{a, b}, () -> {
                runs.incrementAndGet();
                ran.complete(Thread.currentThread().isVirtual());
            });
            Libc.signal(a);
            Libc.signal(b);
            assertThat(ran.get(10, TimeUnit.SECONDS)).as("run on a virtual thread").isTrue();
            assertThat(watch.cancel()).as("cancel after the start").isFalse();

            AtomicInteger cancelledRuns = new AtomicInteger();
            int c = Libc.eventfd();
            try {
                Readiness.Watch cancelled = Readiness.whenReadable(new int[]{c}, cancelledRuns::incrementAndGet);
                assertThat(cancelled.cancel()).isTrue();
                Libc.signal(c);
                // the descriptor is out of the set: a thread waiting on it now is woken, the task is not run
                assertThat(virtual(() -> Readiness.awaitReadable(new int[]{c}, 10_000)).get(10, TimeUnit.SECONDS))
                        .isZero();
            } finally {
                Libc.close(c);
            }
            Thread.sleep(100);
            assertThat(runs).hasValue(1);
            assertThat(cancelledRuns).hasValue(0);
        } finally {
            Libc.close(a);
            Libc.close(b);
        }
    }

    /**
     * A thousand virtual threads wait in DescriptorWaiter (the completion and event channels' wait) at
     * once: no carrier is pinned (JFR reports no jdk.VirtualThreadPinned), the JVM's thread count
     * does not grow with them; half are woken by their descriptor, half by closing their waiter
     * (whose owner then refuses the next attempt, as a closed channel does).
     */
    @Test
    void aThousandVirtualThreadsWaitWithoutPinningAndAreWokenByTheirDescriptorOrByClose() throws Exception {
        int n = 1000;
        int[] fds = new int[n];
        DescriptorWaiter[] waiters = new DescriptorWaiter[n];
        AtomicIntegerArray state = new AtomicIntegerArray(n); // 1: readable, 2: closed
        List<RecordedEvent> pinned = new CopyOnWriteArrayList<>();
        AtomicInteger events = new AtomicInteger();
        AtomicInteger refused = new AtomicInteger();
        try (RecordingStream jfr = new RecordingStream()) {
            jfr.enable("jdk.VirtualThreadPinned").withThreshold(Duration.ZERO).withStackTrace();
            jfr.onEvent("jdk.VirtualThreadPinned", pinned::add);
            jfr.startAsync();
            // the JDK initialises its throwable tracing when the first exception is made under JFR,
            // pinning a virtual thread that makes one meanwhile (seen once): make it here, on this
            // platform thread, before the virtual threads throw theirs
            assertThat(new IllegalStateException("warm-up")).hasMessage("warm-up");
            int threadsBefore = ManagementFactory.getThreadMXBean().getThreadCount();
            List<Thread> waiting = new CopyOnWriteArrayList<>();
            CountDownLatch done = new CountDownLatch(n);
            for (int i = 0; i < n; i++) {
                int k = i;
                fds[k] = Libc.eventfd();
                waiters[k] = new DescriptorWaiter(fds[k]);
                Thread.ofVirtual().start(() -> {
                    waiting.add(Thread.currentThread());
                    try {
                        if ("event".equals(waiters[k].await(Duration.ofMinutes(1), () -> {
                            if (state.get(k) == 2) {
                                throw new IllegalStateException("closed");
                            }
                            return state.get(k) == 1 ? "event" : null;
                        }))) {
                            events.incrementAndGet();
                        }
                    } catch (IllegalStateException e) {
                        refused.incrementAndGet();
                    } finally {
                        done.countDown();
                    }
                });
            }
            awaitParked(waiting, n);
            assertThat(ManagementFactory.getThreadMXBean().getThreadCount() - threadsBefore)
                    .as("OS threads added while %d virtual threads wait", n).isLessThan(16);
            for (int i = 0; i < n; i++) {
                if (i % 2 == 0) {
                    state.set(i, 1);
                    Libc.signal(fds[i]);
                } else {
                    state.set(i, 2);
                    waiters[i].close();
                }
            }
            assertThat(done.await(30, TimeUnit.SECONDS)).as("every thread woken").isTrue();
            jfr.stop();
        } finally {
            for (int i = 0; i < n; i++) {
                if (waiters[i] != null) {
                    waiters[i].close();
                    Libc.close(fds[i]);
                }
            }
        }
        assertThat(events).hasValue(n / 2);
        assertThat(refused).hasValue(n / 2);
        assertThat(pinned).as("pinned virtual threads").isEmpty();
    }
}
