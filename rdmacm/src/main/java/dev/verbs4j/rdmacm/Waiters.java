package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.WcOpcode;
import dev.verbs4j.verbs.WcStatus;
import dev.verbs4j.verbs.WorkCompletion;
import dev.verbs4j.verbs.event.Readiness;
import dev.verbs4j.verbs.internal.Libc;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The waiting of one {@link RdmaConnection}: its lock, the callers blocked on it, the futures
 * waiting for it, and the taking of its news (CM events, completion events, work completions, or
 * the completions its {@link RdmaEndpointGroup} hands over). Blocked callers share the waiting:
 * one sleeps on the connection's descriptors ({@link Readiness}: poll, or a parked virtual
 * thread), the others on a condition; while only futures wait, {@link Readiness#whenReadable}
 * watches the descriptors and no thread waits. Futures decided under the lock are completed after
 * it is released, on a virtual thread. What the news mean is the {@link Progress}'s. Owns no
 * memory (the descriptors are the {@link ConnectionResources}').
 */
final class Waiters {

    private static final System.Logger LOG = System.getLogger(RdmaConnection.class.getName());

    /** What the connection does with its news and its waiting futures (all under the lock). */
    interface Progress {
        void onEvent(CmEvent ev);

        void onCompletion(long wrId, WcStatus status, WcOpcode opcode, int byteLength, int immediate, int flags);

        /** Sends a credit update if one is due. */
        void returnCredits();

        /** Serves the waiting futures as far as the connection allows. */
        void serveFutures();

        boolean futuresWait();
    }

    /** Who takes the news: anyone, or the one caller that waits on the descriptors (then no one else, see {@link #takeNews}). */
    private enum Poller { NONE, AWAKE, SLEEPING }

    final ReentrantLock lock = new ReentrantLock();
    private final Condition progressed = lock.newCondition();
    private final ConnectionResources res;
    private final Lifecycle life;
    private Progress progress;
    /** Completions of futures decided under the lock, run after it is released. */
    private List<Runnable> deliveries = new ArrayList<>();
    private EventChannel events;
    /** The descriptors a caller or the watch waits on: completion channel (own queue only), event channel, wake-up fd. */
    private int[] fds;
    /** Completions the group handed over, not yet taken. */
    private final ArrayDeque<Completion> inbox = new ArrayDeque<>();
    /** The wake-up fd was signalled for a sleeping caller and is still readable. */
    private boolean wakePending;
    private Poller poller = Poller.NONE;
    private int callers;
    /** The readiness watch on the descriptors while futures wait and no caller sleeps on them. */
    private Readiness.Watch watch;
    /** {@link #serveAsync} is running (it is reached again from what it calls). */
    private boolean serving;

    Waiters(ConnectionResources res, Lifecycle life, EventChannel events) {
        this.res = res;
        this.life = life;
        this.events = events;
    }

    /** Sets what the news mean (once, before any news). */
    void progressBy(Progress p) {
        this.progress = p;
    }

    /** Once established: the connection's own event channel, and the descriptors to wait on. */
    void established(EventChannel channel) {
        this.events = channel;
        this.fds = res.group == null ? new int[]{res.completionChannel.fd(), channel.fd(), res.wakeFd}
                : new int[]{channel.fd(), res.wakeFd};
    }

    EventChannel events() {
        return events;
    }

    static long deadline(Duration timeout) {
        long nanos = Math.max(0, timeout.toNanos());
        long now = System.nanoTime();
        return now + nanos < now ? Long.MAX_VALUE : now + nanos;
    }

    /** A blocking call of {@code timeout} begins (see {@link #enter()}); returns its deadline. */
    long enter(Duration timeout) throws RdmaConnectionException {
        long deadline = deadline(timeout);
        enter();
        return deadline;
    }

    /** A blocking call begins: takes the lock and counts the caller; throws when closed. */
    void enter() throws RdmaConnectionException {
        lock.lock();
        if (life.closing()) {
            lock.unlock();
            throw RdmaConnectionException.closed("connection");
        }
        callers++;
    }

    void leave() {
        callers--;
        progressed.signalAll();
        serveAsync();
        unlockAndDeliver();
    }

    /** A caller that is not a call (close's linger) counts as one, so that close waits for it. */
    void join() {
        callers++;
    }

    void part() {
        callers--;
    }

    /**
     * Takes pending CM events, completion events and completions; returns how many there were.
     * Does nothing while another caller sleeps on the descriptors: taking the event or the
     * completions it waits for would leave it asleep with the news already taken (a lost
     * wake-up); it wakes on them and signals the others.
     */
    private int takeNews() {
        if (life.released() || poller == Poller.SLEEPING) {
            return 0;
        }
        int n = 0;
        EventChannel ch = events;
        if (ch != null) {
            CmEvent ev;
            while ((ev = ch.tryGetEvent()) != null) {
                progress.onEvent(ev);
                n++;
            }
        }
        if (res.group != null) {
            if (wakePending) {
                Libc.drain(res.wakeFd);
                wakePending = false;
            }
            Completion c;
            while ((c = inbox.pollFirst()) != null) {
                n++;
                progress.onCompletion(c.wrId(), c.status(), c.opcode(), c.byteLength(), c.immediate(), c.flags());
            }
        } else {
            while (res.completionChannel.tryGetEvent() != null) {
                n++;
            }
            int got;
            while ((got = res.cq.poll(res.completions)) > 0) {
                n += got;
                for (int i = 0; i < got; i++) {
                    WorkCompletion wc = res.completions.get(i);
                    progress.onCompletion(wc.wrId(), wc.status(), wc.opcode(), wc.byteLength(), wc.immediateData(),
                            wc.flags());
                }
            }
        }
        if (n > 0) {
            progress.returnCredits();
        }
        return n;
    }

    /** {@link #takeNews}, then serves the waiting futures when there was news. */
    int progress() {
        int n = takeNews();
        if (n > 0) {
            serveAsync();
        }
        return n;
    }

    /**
     * Serves the waiting futures as far as the connection allows (messages that arrived, free
     * slots and credits, the end of the stream, a failure or close); while some still wait and no
     * caller sleeps on the connection's fds, arms the completion queue and has the readiness
     * poller watch the fds ({@link #onReadable}): no thread waits for them.
     */
    void serveAsync() {
        if (serving || life.released() || fds == null) {
            return;
        }
        serving = true;
        try {
            while (true) {
                progress.serveFutures();
                if (!progress.futuresWait() || poller == Poller.SLEEPING || life.closing()) {
                    return;
                }
                // armed again even while a watch is registered: a caller may have taken the
                // completion event the watch waits for, and with it the queue's arming
                if (res.group == null) {
                    res.cq.requestNotify(false);
                }
                if (takeNews() == 0) {
                    if (watch == null) {
                        watch = Readiness.whenReadable(fds, this::onReadable);
                    }
                    return;
                }
            }
        } finally {
            serving = false;
        }
    }

    /** The poller saw one of the fds readable: takes the news and serves the futures (on a new virtual thread). */
    private void onReadable() {
        List<Runnable> batch;
        lock.lock();
        try {
            watch = null;
            if (!life.released()) {
                if (!life.closing()) {
                    progress();
                }
                serveAsync();
            }
            batch = takeDeliveries();
        } finally {
            lock.unlock();
        }
        runAll(batch);
    }

    /** Under the lock: {@code completion} (of a future) runs once the lock is released. */
    void deliverLater(Runnable completion) {
        deliveries.add(completion);
    }

    private List<Runnable> takeDeliveries() {
        if (deliveries.isEmpty()) {
            return null;
        }
        List<Runnable> batch = deliveries;
        deliveries = new ArrayList<>();
        return batch;
    }

    /** Releases the lock and completes the futures decided under it on a new virtual thread. */
    void unlockAndDeliver() {
        List<Runnable> batch = takeDeliveries();
        lock.unlock();
        if (batch != null) {
            Thread.ofVirtual().name("verbs4j-rdma-futures").start(() -> runAll(batch));
        }
    }

    private static void runAll(List<Runnable> batch) {
        if (batch != null) {
            for (Runnable r : batch) {
                try {
                    r.run();
                } catch (RuntimeException | Error e) {
                    LOG.log(System.Logger.Level.WARNING, "a future's callback failed", e);
                }
            }
        }
    }

    /**
     * Completions the group's poller took for this connection: taken at once, or by the caller
     * sleeping on the connection's fds, which is woken for them.
     */
    void deliver(List<Completion> batch) {
        lock.lock();
        try {
            if (life.released()) {
                res.group.recycle(batch);
                return;
            }
            inbox.addAll(batch);
            if (poller == Poller.SLEEPING) {
                if (!wakePending) {
                    wakePending = true;
                    Libc.signal(res.wakeFd);
                }
            } else {
                progress();
            }
            progressed.signalAll();
        } finally {
            unlockAndDeliver();
        }
    }

    /** On release in a group: the completions handed over and not taken go back to it. */
    void recycleInbox() {
        res.group.recycle(new ArrayList<>(inbox));
        inbox.clear();
    }

    /**
     * Waits until something may have changed or {@code deadline} passes (false). One caller
     * arms the completion queue, takes what is already there, and sleeps (Readiness: poll, or a
     * parked virtual thread) on the completion channel, the event channel and the wake-up fd; the
     * others wait on the condition until it is done (and meanwhile do not take events or
     * completions, see {@link #takeNews}).
     */
    boolean await(long deadline) throws RdmaConnectionException {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
            return false;
        }
        try {
            if (poller != Poller.NONE) {
                progressed.awaitNanos(left);
                return true;
            }
            poller = Poller.AWAKE;
            try {
                if (res.group == null) {
                    res.cq.requestNotify(false);
                }
                if (progress() > 0) {
                    return true;
                }
                int[] watched = fds;
                poller = Poller.SLEEPING;
                unlockAndDeliver();
                try {
                    Readiness.awaitReadable(watched, (int) Math.min(Integer.MAX_VALUE, (left + 999_999) / 1_000_000));
                } finally {
                    lock.lock();
                    poller = Poller.AWAKE;
                }
            } finally {
                poller = Poller.NONE;
                progressed.signalAll();
            }
            return true;
        } catch (InterruptedException e) {
            throw RdmaConnectionException.interrupted("wait on the connection");
        }
    }

    /** On close: serves the waiting futures at once (they fail CLOSED). */
    void drainFutures() {
        progress.serveFutures();
    }

    /** On close: wakes the caller sleeping on the descriptors and those on the condition. */
    void wakeAll() {
        Libc.signal(res.wakeFd);
        progressed.signalAll();
    }

    /** On close: the watch is cancelled (false when its task has started: it finds the connection released). */
    void cancelWatch() {
        if (watch != null) {
            watch.cancel();
            watch = null;
        }
    }

    /** On close: waits up to {@code nanos} for the callers still in a call to leave. */
    void awaitCallers(long nanos) {
        long until = System.nanoTime() + nanos;
        while (callers > 0 && System.nanoTime() < until) {
            try {
                progressed.awaitNanos(until - System.nanoTime());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
    }

    @Override
    public String toString() {
        return (poller == Poller.SLEEPING ? ", a caller sleeps" : "") + (watch != null ? ", watched" : "");
    }
}
