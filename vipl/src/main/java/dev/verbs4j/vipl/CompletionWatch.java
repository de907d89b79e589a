package dev.verbs4j.vipl;

import dev.verbs4j.verbs.CompletionChannel;
import dev.verbs4j.verbs.CompletionQueue;

import java.time.Duration;
import java.util.concurrent.locks.Condition;

/**
 * How the Wait functions of one completion channel (a work queue's hidden one, or a {@link VipCq}'s)
 * learn that something changed, without polling: they sleep on a condition of the NIC lock, which
 * a descriptor completed locally signals, and so does a watcher, one virtual thread (started by
 * the first wait) that arms the completion queue, signals, and sleeps on the channel until its
 * next event. The waiters then poll the queue themselves (so an asynchronous error is still
 * delivered on the thread that detects it). The watcher ends at the first event that finds nobody
 * waiting, or when the channel is closed. Owns no native object.
 */
final class CompletionWatch {

    private final VipNic nic;
    private final CompletionChannel channel;
    private final CompletionQueue cq;
    private final String name;
    /** Signalled (under the NIC lock) whenever the waiters should look at their queue again. */
    private final Condition changed;
    /** Under the NIC lock: the threads in {@link #await}, and whether the watcher runs. */
    private int waiters;
    private boolean watching;
    /**
     * The times the watcher has armed the queue: a waiter that polled before an arming may have
     * missed a completion that came just before it (which signals no event), so it polls again
     * instead of sleeping when this changed since it started looking.
     */
    private volatile int rounds;

    CompletionWatch(VipNic nic, CompletionChannel channel, CompletionQueue cq, String name) {
        this.nic = nic;
        this.channel = channel;
        this.cq = cq;
        this.name = name;
        this.changed = nic.lock.newCondition();
    }

    /**
     * Sleeps until {@link #signal} or the deadline ({@link System#nanoTime()}, {@code
     * Long.MAX_VALUE} for none); under the NIC lock, which it lets go meanwhile. Interrupts do not
     * end it (the Wait functions ignore them); the caller keeps the status.
     *
     * @return false when the deadline has passed
     * @throws InterruptedException when interrupted (the caller carries on and sets the status again)
     */
    boolean await(long deadline) throws InterruptedException {
        long left = deadline == Long.MAX_VALUE ? Long.MAX_VALUE : deadline - System.nanoTime();
        if (left <= 0) {
            return false;
        }
        waiters++;
        try {
            if (!watching) {
                watching = true;
                Thread.ofVirtual().name("VIPL completion watch " + name).start(this::watch);
            }
            if (deadline == Long.MAX_VALUE) {
                changed.await();
            } else {
                changed.awaitNanos(left);
            }
            return true;
        } finally {
            waiters--;
        }
    }

    /** The number of armings so far; read before polling, compared with {@link #await}'s caller under the lock. */
    int rounds() {
        return rounds;
    }

    /** Wakes the waiters: a descriptor completed, an entry was added, or the queue went away. Under the NIC lock. */
    void signal() {
        changed.signalAll();
    }

    private void watch() {
        while (true) {
            nic.lock.lock();
            try {
                if (waiters == 0) {
                    watching = false;
                    return;
                }
                try {
                    cq.requestNotify(false);
                } catch (IllegalStateException closed) {
                    watching = false;
                    changed.signalAll(); // the waiters find it closed
                    return;
                }
                // a completion that came before the queue was armed is found by the waiters now;
                // one after it signals the channel
                rounds++;
                changed.signalAll();
            } finally {
                nic.lock.unlock();
            }
            CompletionQueue signalled;
            try {
                signalled = channel.await(Duration.ofDays(1));
            } catch (IllegalStateException closed) {
                nic.lock.lock();
                try {
                    watching = false;
                    changed.signalAll();
                } finally {
                    nic.lock.unlock();
                }
                return;
            }
            if (signalled != null) {
                try {
                    signalled.ackEvents();
                } catch (IllegalStateException ignored) {
                    // closed meanwhile: the next round ends the watch
                }
            }
        }
    }
}
