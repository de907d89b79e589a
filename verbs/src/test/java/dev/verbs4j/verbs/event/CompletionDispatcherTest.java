package dev.verbs4j.verbs.event;

import dev.verbs4j.verbs.WorkCompletion;
import dev.verbs4j.verbs.WorkCompletions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The dispatcher over a completion queue in memory: routing by queue pair number in poll order,
 * retiring a number (drained before it can be reused), the arming race, handing the polling on,
 * closing, failures, and no allocation per completion.
 */
@Timeout(60)
class CompletionDispatcherTest {

    /** A handler: a name (compared by identity, as the dispatcher does). */
    record Handler(String name) {
    }

    /** What the dispatcher handed out. */
    static final class Recorder implements CompletionDispatcher.Sink<Handler> {
        final Map<Handler, List<Long>> taken = new ConcurrentHashMap<>();
        final List<String> calls = new CopyOnWriteArrayList<>();
        final List<Long> orphans = new CopyOnWriteArrayList<>();
        final List<Boolean> afterPolls = new CopyOnWriteArrayList<>();
        final AtomicInteger polledCount = new AtomicInteger();
        volatile Runnable onTake = () -> { };
        volatile Runnable onAfterPoll = () -> { };

        @Override
        public void polled(WorkCompletions polled, int count) {
            polledCount.addAndGet(count);
        }

        @Override
        public void take(Handler h, WorkCompletions polled, Handler[] owners, int first, int count) {
            assertThat(owners[first]).isSameAs(h);
            calls.add(h.name() + "@" + first);
            List<Long> mine = taken.computeIfAbsent(h, k -> Collections.synchronizedList(new ArrayList<>()));
            for (int i = first; i < count; i++) {
                if (owners[i] == h) {
                    mine.add(polled.get(i).wrId());
                }
            }
            onTake.run();
        }

        @Override
        public void orphan(WorkCompletion completion) {
            orphans.add(completion.wrId());
        }

        @Override
        public void afterPoll(boolean pollingThread) {
            afterPolls.add(pollingThread);
            onAfterPoll.run();
        }

        List<Long> of(Handler h) {
            return taken.getOrDefault(h, List.of());
        }
    }

    private final FakeCompletionSource source = new FakeCompletionSource();
    private final Recorder sink = new Recorder();
    private final Handler a = new Handler("a");
    private final Handler b = new Handler("b");
    private final Handler c = new Handler("c");
    private CompletionDispatcher<Handler> dispatcher;

    private CompletionDispatcher<Handler> started(int pollSize) {
        dispatcher = new CompletionDispatcher<>(source, pollSize, Handler[]::new, 4, sink);
        dispatcher.start();
        return dispatcher;
    }

    /** Started with 4-entry polls, handler a on queue pair {@code qp}, and one completion (work request 1) of it waiting. */
    private void startedWithOneCompletionOfA(int qp) {
        started(4);
        dispatcher.register(qp, a);
        source.add(qp, 1);
    }

    /** Waits for {@code latch} in a callback that cannot throw InterruptedException. */
    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    @AfterEach
    void close() {
        if (dispatcher != null) {
            dispatcher.close();
        }
    }

    @Test
    void eachHandlerGetsItsCompletionsOfAPollAtOnceInPollOrderTheHandlersInTheOrderOfTheirFirst() throws Exception {
        started(8);
        assertThat(source.notifies()).as("start arms the queue").isEqualTo(1);
        assertThat(source.watched()).isTrue();
        dispatcher.register(10, a);
        dispatcher.register(20, b);
        dispatcher.register(30, c);
        int[] qps = {20, 10, 20, 30, 10, 10, 20, 30};
        for (int i = 0; i < qps.length; i++) {
            source.add(qps[i], i);
        }
        source.fireAndJoin();
        assertThat(sink.calls).containsExactly("b@0", "a@1", "c@3");
        assertThat(sink.of(a)).containsExactly(1L, 4L, 5L);
        assertThat(sink.of(b)).containsExactly(0L, 2L, 6L);
        assertThat(sink.of(c)).containsExactly(3L, 7L);
        assertThat(sink.orphans).isEmpty();
        assertThat(sink.afterPolls).containsExactly(true);
        assertThat(dispatcher.completionsPolled()).isEqualTo(8);
        assertThat(sink.polledCount).hasValue(8);
        assertThat(source.eventTakes()).isEqualTo(1);
        assertThat(source.notifies()).as("armed again in the round").isEqualTo(2);
        assertThat(source.watched()).as("watched again after the round").isTrue();
    }

    @Test
    void manyCompletionsArePolledInBatchesAndEveryHandlerKeepsItsOrder() throws Exception {
        started(5);
        Handler[] hs = new Handler[7];
        for (int h = 0; h < hs.length; h++) {
            hs[h] = new Handler("h" + h);
            dispatcher.register(1000 + h, hs[h]);
        }
        SplittableRandom random = new SplittableRandom(25);
        Map<Handler, List<Long>> expected = new ConcurrentHashMap<>();
        for (long id = 0; id < 1000; id++) {
            int h = random.nextInt(hs.length);
            source.add(1000 + h, id);
            expected.computeIfAbsent(hs[h], k -> new ArrayList<>()).add(id);
        }
        source.fireAndJoin();
        for (Handler h : hs) {
            assertThat(sink.of(h)).as(h.name()).isEqualTo(expected.getOrDefault(h, List.of()));
        }
        assertThat(dispatcher.completionsPolled()).isEqualTo(1000);
        assertThat(source.pending()).isZero();
    }

    @Test
    void aCompletionWithoutAHandlerIsAnOrphan() throws Exception {
        started(4);
        dispatcher.register(1, a);
        source.add(2, 100);
        source.add(1, 101);
        source.add(3, 102);
        source.fireAndJoin();
        assertThat(sink.orphans).containsExactly(100L, 102L);
        assertThat(sink.of(a)).containsExactly(101L);
        assertThat(sink.polledCount).hasValue(3);
    }

    @Test
    void aCompletionThatCameJustBeforeTheArmingIsTakenInTheSameRound() throws Exception {
        startedWithOneCompletionOfA(1);
        source.addAtNextNotify(1, 2);
        source.fireAndJoin();
        assertThat(sink.of(a)).containsExactly(1L, 2L);
        assertThat(source.watched()).isTrue();
        // it found one after the arming, so it went round once more (and armed again) before watching
        assertThat(source.notifies()).isEqualTo(3);
        assertThat(sink.afterPolls).containsExactly(true, true);
    }

    @Test
    void retiringDestroysUnderTheQueuePairLockDrainsTheRetiredOnesAsOrphansAndHandsOutTheOthers() {
        started(4);
        dispatcher.register(7, a);
        dispatcher.register(8, b);
        source.add(7, 1);
        source.add(8, 2);
        source.add(7, 3);
        AtomicBoolean lockedWhileDestroyed = new AtomicBoolean();
        dispatcher.retire(7, a, () -> {
            lockedWhileDestroyed.set(dispatcher.queuePairLock().isHeldByCurrentThread());
            source.add(7, 4); // the device's last completion of it, before it is gone
        });
        assertThat(lockedWhileDestroyed).isTrue();
        assertThat(sink.orphans).containsExactly(1L, 3L, 4L);
        assertThat(sink.of(b)).containsExactly(2L);
        assertThat(sink.of(a)).isEmpty();
        assertThat(sink.afterPolls).containsExactly(false);
        assertThat(dispatcher.queuePairLock().isLocked()).isFalse();
        // the number is free: a new queue pair that gets it gets only its own completions
        dispatcher.register(7, c);
        source.add(7, 5);
        dispatcher.retire(-1, c, () -> { });
        assertThat(sink.of(c)).containsExactly(5L);
    }

    @Test
    void aQueuePairCannotBeCreatedWhileANumberIsRetiredUntilItsCompletionsAreDrained() throws Exception {
        startedWithOneCompletionOfA(7);
        CountDownLatch destroying = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Thread retirer = Thread.ofVirtual().start(() -> dispatcher.retire(7, a, () -> {
            destroying.countDown();
            awaitQuietly(release);
        }));
        assertThat(destroying.await(10, TimeUnit.SECONDS)).isTrue();
        AtomicReference<List<Long>> orphansWhenCreated = new AtomicReference<>();
        Thread creator = Thread.ofVirtual().start(() -> {
            ReentrantLock creating = dispatcher.queuePairLock();
            creating.lock();
            try {
                orphansWhenCreated.set(List.copyOf(sink.orphans));
                dispatcher.register(7, b); // the device gave the new queue pair the same number
            } finally {
                creating.unlock();
            }
        });
        Thread.sleep(100);
        assertThat(orphansWhenCreated.get()).as("created while the number was being retired").isNull();
        release.countDown();
        retirer.join();
        creator.join();
        assertThat(orphansWhenCreated.get()).containsExactly(1L);
        source.add(7, 2);
        source.fireAndJoin();
        assertThat(sink.of(b)).containsExactly(2L);
        assertThat(sink.of(a)).isEmpty();
    }

    @Test
    void aDestroyThatThrowsStillUnregistersAndDrainsAndThenPassesTheFailureOn() {
        startedWithOneCompletionOfA(7);
        assertThatThrownBy(() -> dispatcher.retire(7, a, () -> {
            throw new IllegalStateException("destroy failed");
        })).hasMessage("destroy failed");
        assertThat(sink.orphans).containsExactly(1L);
        assertThat(sink.afterPolls).containsExactly(false);
        assertThat(dispatcher.queuePairLock().isLocked()).isFalse();
    }

    @Test
    void retiringAnotherHandlersNumberLeavesItRegistered() throws Exception {
        started(4);
        dispatcher.register(7, a);
        dispatcher.retire(7, b, () -> { });
        source.add(7, 1);
        source.fireAndJoin();
        assertThat(sink.of(a)).containsExactly(1L);
    }

    @Test
    void handingOffWatchesAgainAtOnceAndTheNextRoundRunsWhileThePreviousThreadFinishes() throws Exception {
        startedWithOneCompletionOfA(1);
        CountDownLatch handedOff = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        AtomicReference<Boolean> pollingBefore = new AtomicReference<>();
        AtomicReference<Boolean> pollingAfter = new AtomicReference<>();
        sink.onAfterPoll = () -> {
            if (pollingBefore.get() != null) {
                return;
            }
            pollingBefore.set(dispatcher.polling());
            dispatcher.handOff(); // a long kernel is about to run here
            pollingAfter.set(dispatcher.polling());
            handedOff.countDown();
            awaitQuietly(finish);
        };
        Thread first = source.fire();
        assertThat(handedOff.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(pollingBefore.get()).isTrue();
        assertThat(pollingAfter.get()).isFalse();
        assertThat(source.watched()).as("watched again while the kernel runs").isTrue();
        source.add(1, 2);
        source.fireAndJoin(); // the next round, on a new thread
        assertThat(sink.of(a)).containsExactly(1L, 2L);
        finish.countDown();
        first.join();
        assertThat(source.watches()).as("the thread that handed off does not watch again").isEqualTo(3);
        assertThat(source.watched()).isTrue();
        assertThat(dispatcher.polling()).isFalse();
        dispatcher.handOff(); // elsewhere: nothing
        assertThat(source.watches()).isEqualTo(3);
    }

    @Test
    void aFailingHandlerIsLoggedAndTheNextRoundStillRuns() throws Exception {
        started(4);
        dispatcher.register(1, a);
        sink.onTake = () -> {
            throw new IllegalStateException("handler failed");
        };
        source.add(1, 1);
        source.fireAndJoin();
        assertThat(source.watched()).isTrue();
        sink.onTake = () -> { };
        source.add(1, 2);
        source.fireAndJoin();
        assertThat(sink.of(a)).containsExactly(1L, 2L);
    }

    @Test
    void closingCancelsTheWatchAndAfterItRetiringOnlyUnregisters() throws Exception {
        startedWithOneCompletionOfA(1);
        dispatcher.close();
        assertThat(source.watched()).isFalse();
        dispatcher.retire(1, a, () -> { });
        assertThat(sink.orphans).isEmpty();
        assertThat(source.pending()).as("nothing polled after the close").isEqualTo(1);
        assertThatThrownBy(() -> dispatcher.register(2, b)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(dispatcher::start).isInstanceOf(IllegalStateException.class);
        dispatcher.close(); // idempotent
    }

    @Test
    void aRoundThatStartsAfterTheCloseDoesNothing() throws Exception {
        startedWithOneCompletionOfA(1);
        Runnable[] late = new Runnable[1];
        // the watch fired just before the close took it back
        Thread t = Thread.ofVirtual().unstarted(() -> late[0].run());
        CompletionDispatcher<Handler> d = dispatcher;
        CompletionSource capturing = new CompletionSource() {
            @Override
            public int poll(WorkCompletions into) {
                return source.poll(into);
            }

            @Override
            public void requestNotify() {
            }

            @Override
            public void takeEvents() {
            }

            @Override
            public Readiness.Watch whenReadable(Runnable task) {
                late[0] = task;
                return () -> false; // already started
            }
        };
        d.close();
        dispatcher = new CompletionDispatcher<>(capturing, 4, Handler[]::new, 4, sink);
        dispatcher.start();
        dispatcher.register(1, a);
        dispatcher.close();
        t.start();
        t.join();
        assertThat(sink.of(a)).isEmpty();
        assertThat(sink.afterPolls).isEmpty();
    }

    @Test
    void closeWaitsForAPollInProgress() throws Exception {
        startedWithOneCompletionOfA(1);
        CountDownLatch inTake = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        sink.onTake = () -> {
            inTake.countDown();
            awaitQuietly(release);
        };
        Thread round = source.fire();
        assertThat(inTake.await(10, TimeUnit.SECONDS)).isTrue();
        Thread closer = Thread.ofVirtual().start(dispatcher::close);
        closer.join(200);
        assertThat(closer.isAlive()).as("close waits for the poll").isTrue();
        release.countDown();
        closer.join();
        round.join();
        assertThat(source.watched()).as("not watched again after the close").isFalse();
    }

    @Test
    void drainingAllocatesNothingPerCompletion() {
        started(64);
        Handler[] hs = new Handler[16];
        for (int h = 0; h < hs.length; h++) {
            hs[h] = new Handler("h" + h);
            dispatcher.register(h, hs[h]);
        }
        CompletionDispatcher.Sink<Handler> quiet = new CompletionDispatcher.Sink<>() {
            long sum;

            @Override
            public void take(Handler h, WorkCompletions polled, Handler[] owners, int first, int count) {
                for (int i = first; i < count; i++) {
                    if (owners[i] == h) {
                        sum += polled.get(i).wrId();
                    }
                }
            }
        };
        dispatcher.close();
        dispatcher = new CompletionDispatcher<>(source, 64, Handler[]::new, 16, quiet);
        for (int h = 0; h < hs.length; h++) {
            dispatcher.register(h, hs[h]);
        }
        Runnable destroy = () -> { };
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long id = Thread.currentThread().threadId();
        long[] bytes = new long[2];
        int[] sizes = {640, 64_000};
        for (int round = 0; round < 3; round++) { // the last round counts (the first ones warm up)
            for (int k = 0; k < 2; k++) {
                for (int i = 0; i < sizes[k]; i++) {
                    source.add(i % hs.length, i);
                }
                long before = threads.getThreadAllocatedBytes(id);
                dispatcher.retire(-1, hs[0], destroy);
                bytes[k] = threads.getThreadAllocatedBytes(id) - before;
            }
        }
        assertThat(source.pending()).isZero();
        assertThat(bytes[1]).as("bytes for 64,000 completions vs %d for 640", bytes[0]).isLessThan(bytes[0] + 4096);
    }
}
