package dev.verbs4j.vipl;

import dev.verbs4j.verbs.CompletionChannel;
import dev.verbs4j.verbs.CompletionQueue;

import java.util.concurrent.locks.Condition;

/**
 * How the Wait functions of one completion channel (a work queue's hidden one, or a {@link VipCq}'s)
 * learn that something changed, without polling: they sleep on a condition of the NIC lock, which
 * a descriptor completed locally signals, and so does the channel's watch: the first wait arms
 * the completion queue and has the channel run {@link #readable} when its next event comes (or it
 * closes), which takes the event, arms the queue again, signals, and watches again; no thread
 * waits on the channel. The waiters then poll the queue themselves (so an asynchronous error is
 * still delivered on the thread that detects it). The watch ends at the first event that finds
 * nobody waiting, or when the channel is closed. Owns no native object.
 */
final class CompletionWatch {

    private final VipNic nic;
    private final CompletionChannel channel;
    private final CompletionQueue cq;
    /** Signalled (under the NIC lock) whenever the waiters should look at their queue again. */
    private final Condition changed;
    /** Under the NIC lock: the threads in {@link #await}, and whether the channel is watched. */
    private int waiters;
    private boolean watching;
    /**
     * The times the queue was armed: a waiter that polled before an arming may have missed a
     * completion that came just before it (which signals no event), so it polls again instead of
     * sleeping when this changed since it started looking.
     */
    private volatile int rounds;

    CompletionWatch(VipNic nic, CompletionChannel channel, CompletionQueue cq) {
        this.nic = nic;
        this.channel = channel;
        this.cq = cq;
        this.changed = nic.lock.newCondition();
    }

    /**
     * Sleeps until {@link #signal} or the deadline ({@link System#nanoTime()}, {@code
     * Long.MAX_VALUE} for none); under the NIC lock, which it lets go meanwhile. The first wait
     * arms the queue and returns at once (the caller polls again before it sleeps). Interrupts
     * do not end it (the Wait functions ignore them); the caller keeps the status.
     *
     * @return false when the deadline has passed
     * @throws InterruptedException when interrupted (the caller carries on and sets the status again)
     */
    boolean await(long deadline) throws InterruptedException {
        long left = deadline == Long.MAX_VALUE ? Long.MAX_VALUE : deadline - System.nanoTime();
        if (left <= 0) {
            return false;
        }
        if (!watching) {
            watching = true;
            waiters++;
            try {
                arm();
            } finally {
                waiters--;
            }
            return true;
        }
        waiters++;
        try {
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

    /**
     * Arms the queue, signals (a completion that came before the arming is found by the waiters
     * now; one after it signals the channel) and watches the channel; ends the watch when nobody
     * waits or the queue or channel is closed. Under the NIC lock.
     */
    private void arm() {
        if (waiters == 0) {
            watching = false;
            return;
        }
        try {
            cq.requestNotify(false);
            rounds++;
            changed.signalAll();
            channel.whenReadable(this::readable);
        } catch (IllegalStateException closed) {
            watching = false;
            changed.signalAll(); // the waiters find it closed
        }
    }

    /** The channel has an event, or was closed: takes the event, then arms again (or ends). */
    private void readable() {
        CompletionQueue signalled = null;
        boolean open = true;
        try {
            signalled = channel.tryGetEvent();
        } catch (IllegalStateException closed) {
            open = false;
        }
        if (signalled != null) {
            try {
                signalled.ackEvents();
            } catch (IllegalStateException ignored) {
                // closed meanwhile: the arming ends the watch
            }
        }
        nic.lock.lock();
        try {
            if (open) {
                arm();
            } else {
                watching = false;
                changed.signalAll();
            }
        } finally {
            nic.lock.unlock();
        }
    }
}
