package dev.verbs4j.verbs.event;

import dev.verbs4j.verbs.Errno;
import dev.verbs4j.verbs.VerbsException;
import dev.verbs4j.verbs.internal.Libc;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * Sleeping until a non-blocking file descriptor (a completion channel's, a context's async event
 * descriptor, a connection manager channel's) is readable, with a timeout, and waking every
 * sleeper when its owner closes: the descriptor and an eventfd of its own, watched through {@link
 * Readiness#awaitReadable} ({@code poll(2)} on a platform thread; a virtual thread parks).
 * Sleepers are counted, so that {@link #close} returns only once every one has left and no
 * thread polls a descriptor that is being closed. Owns the eventfd, which {@link #close} closes;
 * the watched descriptor belongs to the caller.
 */
public final class DescriptorWaiter {

    private final int wakeFd;
    private final int[] pollFds;
    private final ReentrantLock lock = new ReentrantLock();
    /** Signalled when the last sleeper has left. */
    private final Condition idle = lock.newCondition();
    private int sleepers;
    /** Set by {@link #wake}: every later sleep returns at once (the eventfd stays readable). */
    private volatile boolean woken;
    /** Set by {@link #interrupt}: the next {@link #await} to look returns null at once (written under {@link #lock}). */
    private volatile boolean interrupted;
    private boolean closed;

    /**
     * A waiter on {@code fds} (one or more: a sleep ends when any is readable), which the caller
     * keeps open until {@link #close} has returned.
     */
    public DescriptorWaiter(int... fds) {
        if (fds.length == 0) {
            throw new IllegalArgumentException("a waiter watches at least one descriptor");
        }
        this.pollFds = Arrays.copyOf(fds, fds.length + 1);
        this.wakeFd = Libc.eventfd();
        pollFds[fds.length] = wakeFd;
    }

    /**
     * Calls {@code attempt} until it returns a result, sleeping in between until the descriptor is
     * readable; null once {@code timeout} has passed. {@code attempt} throws when the owner is
     * closed: a close wakes the sleeper, whose next attempt throws.
     */
    public <T> T await(Duration timeout, Supplier<T> attempt) {
        long timeoutNanos = timeout.toNanos();
        long start = System.nanoTime();
        // a platform thread sleeps first: poll(2) returns at once when an event is pending, and a
        // caller that found its queue empty usually has none yet, so this saves an empty attempt;
        // a virtual thread tries first, since its sleep registers with the poller
        boolean tried = Thread.currentThread().isVirtual() || timeoutNanos <= 0;
        if (tried) {
            T result = attempt.get();
            if (result != null) {
                return result;
            }
        }
        long left = timeoutNanos;
        while (true) {
            // an interrupt ends the wait only after an attempt has found nothing
            if (tried && takeInterrupt() || left <= 0) {
                return null;
            }
            sleep((int) Math.min(Integer.MAX_VALUE, (left + 999_999) / 1_000_000));
            T result = attempt.get();
            if (result != null) {
                return result;
            }
            tried = true;
            left = start + timeoutNanos - System.nanoTime();
        }
    }

    /**
     * Sleeps until the descriptor is readable, {@link #wake} is called (now or before), or
     * {@code timeoutMillis} have passed (-1: no limit).
     */
    public void sleep(int timeoutMillis) {
        lock.lock();
        try {
            sleepers++;
        } finally {
            lock.unlock();
        }
        try {
            // a wake-up that came before the count went up is seen here; one after it is seen by poll
            if (!woken) {
                Readiness.awaitReadable(pollFds, timeoutMillis);
            }
        } finally {
            left();
        }
    }

    /**
     * Runs {@code task} (on a new virtual thread) once the descriptor is readable or the waiter is
     * woken or interrupted, unless the returned watch is cancelled first: a sleeper that holds no
     * thread. A pending watch counts as a sleeper, so {@link #close} (which wakes it) returns only
     * once its task has started or it was cancelled, and the descriptor is never closed while
     * watched. The task runs after the waiter may have closed: it looks before it acts.
     *
     * @throws IllegalStateException when the waiter is closed
     */
    public Readiness.Watch whenReadable(Runnable task) {
        lock.lock();
        try {
            if (closed) {
                throw new IllegalStateException("the descriptor waiter is closed");
            }
            sleepers++;
        } finally {
            lock.unlock();
        }
        Readiness.Watch watch;
        try {
            watch = Readiness.whenReadable(pollFds, () -> {
                left();
                task.run();
            });
        } catch (RuntimeException e) {
            left();
            throw e;
        }
        return () -> {
            if (!watch.cancel()) {
                return false;
            }
            left();
            return true;
        };
    }

    /** A sleeper or a watch has left. */
    private void left() {
        lock.lock();
        try {
            if (--sleepers == 0) {
                idle.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * The outcome of a failed non-blocking take of an event: true when {@code errno} says that
     * none is pending (EAGAIN), else a {@link VerbsException} naming {@code function}.
     */
    public static boolean nonePending(int errno, String function, String detail) {
        if (errno == Errno.EAGAIN) {
            return true;
        }
        throw new VerbsException(function, errno, detail);
    }

    /**
     * Has one {@link #await}, the one sleeping now or else the next one, return null at once (as
     * on a timeout) once it has found nothing: for a thread that waits with a long timeout and
     * must look at something else (a stop flag). Unlike {@link #wake}, later calls wait again.
     */
    public void interrupt() {
        lock.lock();
        try {
            if (!closed && !woken && !interrupted) {
                interrupted = true;
                Libc.signal(wakeFd);
            }
        } finally {
            lock.unlock();
        }
    }

    /** Takes an {@link #interrupt}: true (and the eventfd read empty) when there was one. */
    private boolean takeInterrupt() {
        if (!interrupted) {
            return false;
        }
        lock.lock();
        try {
            if (!interrupted) {
                return false;
            }
            interrupted = false;
            if (!woken && !closed) {
                Libc.drain(wakeFd);
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Wakes the sleepers, now and in every later {@link #sleep}. */
    public void wake() {
        lock.lock();
        try {
            if (!closed && !woken) {
                woken = true;
                Libc.signal(wakeFd);
            }
        } finally {
            lock.unlock();
        }
    }

    /** Wakes the sleepers, waits until they have left and closes the eventfd; idempotent. */
    public void close() {
        wake();
        lock.lock();
        try {
            while (sleepers > 0) {
                idle.awaitUninterruptibly();
            }
            if (!closed) {
                closed = true;
                Libc.close(wakeFd);
            }
        } finally {
            lock.unlock();
        }
    }
}
