package dev.verbs4j.verbs.event;

import dev.verbs4j.verbs.PolledCompletions;
import dev.verbs4j.verbs.WorkCompletions;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A completion queue and channel in memory: completions are added by queue pair number and work
 * request id, polled in that order; the channel's watch runs only when {@link #fire} says so (on a
 * new virtual thread, as the readiness poller runs it). Allocates nothing per poll.
 */
final class FakeCompletionSource implements CompletionSource {

    private final ReentrantLock lock = new ReentrantLock();
    private long[] wrIds = new long[1 << 16];
    private int[] qpNums = new int[1 << 16];
    private int head;
    private int tail;
    private Runnable task;
    private final AtomicInteger notifies = new AtomicInteger();
    private final AtomicInteger eventTakes = new AtomicInteger();
    private final AtomicInteger watches = new AtomicInteger();
    /** Completions that "arrive" when the queue is armed next (just before the arming, raising no event). */
    private final List<long[]> onNotify = new ArrayList<>();

    void add(int qpNum, long wrId) {
        lock.lock();
        try {
            if (tail == wrIds.length) {
                wrIds = java.util.Arrays.copyOf(wrIds, 2 * tail);
                qpNums = java.util.Arrays.copyOf(qpNums, 2 * tail);
            }
            wrIds[tail] = wrId;
            qpNums[tail] = qpNum;
            tail++;
        } finally {
            lock.unlock();
        }
    }

    /** Adds a completion at the next arming, before it takes effect. */
    void addAtNextNotify(int qpNum, long wrId) {
        lock.lock();
        try {
            onNotify.add(new long[]{qpNum, wrId});
        } finally {
            lock.unlock();
        }
    }

    int pending() {
        lock.lock();
        try {
            return tail - head;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public int poll(WorkCompletions into) {
        lock.lock();
        try {
            int n = Math.min(into.capacity(), tail - head);
            PolledCompletions.fill(into, wrIds, qpNums, head, n);
            head += n;
            return n;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void requestNotify() {
        lock.lock();
        try {
            notifies.incrementAndGet();
            for (long[] c : onNotify) {
                add((int) c[0], c[1]);
            }
            onNotify.clear();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void takeEvents() {
        eventTakes.incrementAndGet();
    }

    @Override
    public Readiness.Watch whenReadable(Runnable task) {
        lock.lock();
        try {
            if (this.task != null) {
                throw new AssertionError("a second watch while one is pending");
            }
            this.task = task;
            watches.incrementAndGet();
            return () -> {
                lock.lock();
                try {
                    if (this.task != task) {
                        return false;
                    }
                    this.task = null;
                    return true;
                } finally {
                    lock.unlock();
                }
            };
        } finally {
            lock.unlock();
        }
    }

    /** Whether a watch is pending. */
    boolean watched() {
        lock.lock();
        try {
            return task != null;
        } finally {
            lock.unlock();
        }
    }

    /** The channel becomes readable: the pending task starts on a new virtual thread, which is returned. */
    Thread fire() {
        Runnable t;
        lock.lock();
        try {
            t = task;
            task = null;
        } finally {
            lock.unlock();
        }
        if (t == null) {
            throw new AssertionError("no watch is pending");
        }
        return Thread.ofVirtual().start(t);
    }

    /** Fires and waits for the round to end. */
    void fireAndJoin() throws InterruptedException {
        fire().join();
    }

    int notifies() {
        return notifies.get();
    }

    int eventTakes() {
        return eventTakes.get();
    }

    int watches() {
        return watches.get();
    }
}
