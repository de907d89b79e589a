package dev.verbs4j.verbs.event;

import dev.verbs4j.verbs.VerbsException;
import dev.verbs4j.verbs.internal.Libc;
import dev.verbs4j.verbs.internal.Native;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Waiting until a file descriptor is readable without holding an OS thread: a platform thread
 * sleeps in {@code poll(2)} as before; a virtual thread registers the descriptors with one epoll
 * instance and parks, and the poller thread (one daemon platform thread, started on first use)
 * unparks it when one of them is readable. Every blocking wait of verbs and rdmacm comes through
 * {@link #awaitReadable}, so a virtual thread waiting for a completion, a connection manager event
 * or an asynchronous event leaves its carrier free. {@link #whenReadable} runs a task instead (on
 * a new virtual thread), for completion-driven code that has no thread waiting at all.
 *
 * <p>Registrations are one-shot ({@code EPOLLONESHOT}) and removed ({@code EPOLL_CTL_DEL}) before
 * the waiter returns, so a descriptor is never in the epoll set once its owner may close it (the
 * owners close a descriptor only after every waiter has left). Several threads waiting on one
 * descriptor share its registration. Owns the epoll descriptor and the event buffer, which live as
 * long as the JVM.
 */
public final class Readiness {

    private static final System.Logger LOG = System.getLogger(Readiness.class.getName());
    private static final int EPOLLIN = 0x001;
    private static final int EPOLLONESHOT = 1 << 30;
    private static final int EPOLL_CTL_ADD = 1;
    private static final int EPOLL_CTL_DEL = 2;
    private static final int ENOENT = 2;
    private static final int EBADF = 9;
    private static final int MAX_EVENTS = 64;

    /** The poller, created with its thread when a virtual thread first waits. */
    private static final class Holder {
        static final Readiness INSTANCE = new Readiness();
    }

    /**
     * A thread waiting on one or more descriptors, or a task to run once one is readable; {@code
     * readyFd} is set by the poller thread.
     */
    private static final class Waiter {
        final Thread thread;
        final Runnable task;
        final int[] fds;
        volatile int readyFd = -1;

        Waiter(int[] fds, Runnable task) {
            this.fds = fds;
            this.task = task;
            this.thread = task == null ? Thread.currentThread() : null;
        }
    }

    /** A pending {@link #whenReadable} task; {@link #cancel} takes it back. */
    public interface Watch {
        /** Takes the task back; true when it had not been started (and now never will be). */
        boolean cancel();
    }

    /** A descriptor's one-shot registration and the threads waiting on it. */
    private static final class Registration {
        final int generation;
        final List<Waiter> waiters = new ArrayList<>(2);

        Registration(int generation) {
            this.generation = generation;
        }
    }

    private final int epfd;
    private final ReentrantLock lock = new ReentrantLock();
    /** Registered descriptors; guarded by {@code lock}. */
    private final Map<Integer, Registration> registrations = new HashMap<>();
    /** Tells a descriptor's registrations apart (a stale event of an earlier one is ignored). */
    private int generations;
    private volatile long wakeUps;

    private Readiness() {
        this.epfd = Libc.epollCreate();
        Thread.ofPlatform().daemon().name("verbs4j-poller").start(this::run);
    }

    /**
     * Waits until one of {@code fds} is readable or {@code timeoutMillis} pass (-1: no limit) and
     * returns the index of a readable descriptor, or -1 on timeout. A platform thread sleeps in
     * {@code poll(2)}; a virtual thread parks until the poller thread sees a descriptor readable
     * (its carrier runs other virtual threads meanwhile). Interrupts do not end the wait (as with
     * {@code poll}); the interrupt status is kept.
     */
    public static int awaitReadable(int[] fds, int timeoutMillis) {
        if (!Thread.currentThread().isVirtual()) {
            return Libc.pollReadable(fds, timeoutMillis);
        }
        return Holder.INSTANCE.park(fds, timeoutMillis);
    }

    /**
     * Waits until one of {@code sources} has an event pending or {@code timeout} passes (null: no
     * limit), as {@link #awaitReadable}; returns the index of a source with an event, or -1 on
     * timeout. The sources must stay open meanwhile; the event is not taken.
     */
    public static int awaitAny(Duration timeout, EventSource... sources) {
        int[] fds = new int[sources.length];
        for (int i = 0; i < fds.length; i++) {
            fds[i] = sources[i].fd();
        }
        int millis = timeout == null ? -1
                : (int) Math.min(Integer.MAX_VALUE, Math.max(0, (timeout.toNanos() + 999_999) / 1_000_000));
        return awaitReadable(fds, millis);
    }

    /** How many times the poller thread has woken waiters since the JVM started (for tests). */
    public static long wakeUps() {
        return Holder.INSTANCE.wakeUps;
    }

    /**
     * Runs {@code task} on a new virtual thread once one of {@code fds} is readable (once, however
     * many become readable), unless {@link Watch#cancel} comes first. The descriptors must stay
     * open until the task has started or the watch was cancelled.
     */
    public static Watch whenReadable(int[] fds, Runnable task) {
        Readiness poller = Holder.INSTANCE;
        Waiter waiter = new Waiter(fds.clone(), task);
        poller.add(waiter);
        return () -> {
            poller.lock.lock();
            try {
                if (waiter.readyFd >= 0) {
                    return false;
                }
                waiter.readyFd = Integer.MAX_VALUE;
                poller.unregister(waiter.fds, waiter.fds.length, waiter);
                return true;
            } finally {
                poller.lock.unlock();
            }
        };
    }

    private void add(Waiter waiter) {
        lock.lock();
        try {
            for (int i = 0; i < waiter.fds.length; i++) {
                try {
                    register(waiter.fds[i], waiter);
                } catch (RuntimeException e) {
                    unregister(waiter.fds, i, waiter);
                    throw e;
                }
            }
        } finally {
            lock.unlock();
        }
    }

    private int park(int[] fds, int timeoutMillis) {
        Waiter waiter = new Waiter(fds, null);
        add(waiter);
        boolean interrupted = false;
        try {
            long deadline = timeoutMillis < 0 ? 0 : System.nanoTime() + timeoutMillis * 1_000_000L;
            while (waiter.readyFd < 0) {
                if (timeoutMillis < 0) {
                    LockSupport.park(this);
                } else {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        break;
                    }
                    LockSupport.parkNanos(this, left);
                }
                if (Thread.interrupted()) {
                    interrupted = true;
                }
            }
        } finally {
            lock.lock();
            try {
                unregister(fds, fds.length, waiter);
            } finally {
                lock.unlock();
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        int ready = waiter.readyFd;
        for (int i = 0; i < fds.length; i++) {
            if (fds[i] == ready) {
                return i;
            }
        }
        return -1;
    }

    /** Adds {@code waiter} to the registration of {@code fd}, registering it first if needed; under lock. */
    private void register(int fd, Waiter waiter) {
        Registration reg = registrations.get(fd);
        if (reg == null) {
            int generation = ++generations & 0x7fff_ffff;
            int errno = Libc.epollCtl(epfd, EPOLL_CTL_ADD, fd, EPOLLIN | EPOLLONESHOT,
                    ((long) generation << 32) | (fd & 0xffff_ffffL));
            if (errno != 0) {
                throw new VerbsException("epoll_ctl", errno, "EPOLL_CTL_ADD of fd " + fd);
            }
            reg = new Registration(generation);
            registrations.put(fd, reg);
        }
        reg.waiters.add(waiter);
    }

    /** Takes {@code waiter} off the first {@code count} of {@code fds}, removing emptied registrations; under lock. */
    private void unregister(int[] fds, int count, Waiter waiter) {
        for (int i = 0; i < count; i++) {
            Registration reg = registrations.get(fds[i]);
            if (reg != null && reg.waiters.remove(waiter) && reg.waiters.isEmpty()) {
                registrations.remove(fds[i]);
                delete(fds[i]);
            }
        }
    }

    private void delete(int fd) {
        int errno = Libc.epollCtl(epfd, EPOLL_CTL_DEL, fd, 0, 0);
        if (errno != 0 && errno != ENOENT && errno != EBADF) {
            LOG.log(System.Logger.Level.WARNING, "epoll_ctl(EPOLL_CTL_DEL) of fd {0}: errno {1}", fd, errno);
        }
    }

    private void run() {
        MemorySegment events = Arena.global().allocate(Libc.EPOLL_EVENT_SIZE * MAX_EVENTS, 8);
        MemorySegment capture = Native.captureSegment(Arena.global());
        while (true) {
            int n;
            try {
                n = Libc.epollWait(epfd, events, MAX_EVENTS, -1, capture);
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.ERROR, "the readiness poller stops", e);
                return;
            }
            List<Runnable> tasks = null;
            lock.lock();
            try {
                for (int i = 0; i < n; i++) {
                    long data = events.get(ValueLayout.JAVA_LONG_UNALIGNED, i * Libc.EPOLL_EVENT_SIZE + Libc.EPOLL_DATA_OFFSET);
                    int fd = (int) data;
                    Registration reg = registrations.get(fd);
                    if (reg == null || reg.generation != (int) (data >>> 32)) {
                        continue; // its waiters left (timeout) before this event was taken
                    }
                    registrations.remove(fd);
                    delete(fd);
                    for (Waiter w : reg.waiters) {
                        if (w.task == null) {
                            if (w.readyFd < 0) {
                                w.readyFd = fd;
                            }
                            LockSupport.unpark(w.thread);
                        } else if (w.readyFd < 0) {
                            w.readyFd = fd;
                            unregister(w.fds, w.fds.length, w);
                            if (tasks == null) {
                                tasks = new ArrayList<>();
                            }
                            tasks.add(w.task);
                        }
                    }
                }
            } finally {
                lock.unlock();
            }
            if (tasks != null) {
                for (Runnable task : tasks) {
                    Thread.ofVirtual().name("verbs4j-readable").start(task);
                }
            }
            wakeUps += n;
        }
    }
}
