package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.VerbsException;

import java.time.Duration;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * How far one {@link CmConnector} or {@link CmAcceptor} got: its {@link CmPhase}, the phase's
 * deadline within the deadline of the whole, and what ended it. It times the phases out with a
 * message that names the phase and the event it waited for, and turns a failed librdmacm call
 * into an {@link RdmaConnectionException}. Its {@link #lock} guards it and its owner's state
 * (an event thread may advance them while another thread connects or accepts); the methods
 * named "Locked" take it themselves. Holds no native memory.
 */
final class CmProgress {

    /** Held by the owner around every use of this progress but the "Locked" methods, which take it. */
    final ReentrantLock lock = new ReentrantLock();

    /** A step of a connector or acceptor: the caller's, a librdmacm call, or the wait for an event. */
    @FunctionalInterface
    interface Step<T> {
        T run() throws RdmaConnectionException;
    }

    /** Far enough for "no limit", near enough that {@code nanoTime() + it} cannot overflow. */
    private static final long FOREVER = Long.MAX_VALUE / 4;

    private final String what;
    private final String role;
    private final long whole;
    private long wholeDeadline;
    private CmPhase phase;
    private long limitNanos;
    /** The phase's own limit, before what was left of the whole cut it. */
    private long givenNanos;
    private long deadline;
    /** What ended it: a failure event, a call's failure, a timeout or a step's exception; null while it goes on. */
    private Throwable failure;

    /**
     * @param what  what is being done, as failures name it ("connect to /10.0.0.2:7471")
     * @param role  "connector" or "acceptor", as misuse names it
     * @param whole the limit of all phases together, counted from now (or from {@link #restart})
     */
    CmProgress(String what, String role, Duration whole) {
        this.what = what;
        this.role = role;
        this.whole = nanos(whole);
        restart();
    }

    /** Counts the whole from now. */
    void restart() {
        this.wholeDeadline = System.nanoTime() + whole;
    }

    String what() {
        return what;
    }

    CmPhase phase() {
        return phase;
    }

    Throwable failure() {
        return failure;
    }

    /**
     * Starts waiting phase {@code phase} with {@code limit} (cut to what is left of the whole).
     *
     * @throws RdmaTimeoutException when less than a millisecond is left: it would time out at once
     */
    void start(CmPhase phase, Duration limit) throws RdmaTimeoutException {
        long now = System.nanoTime();
        this.phase = phase;
        this.givenNanos = nanos(limit);
        this.limitNanos = Math.min(givenNanos, wholeDeadline - now);
        this.deadline = now + limitNanos;
        if (limitNanos < 1_000_000) {
            throw fail(timedOut());
        }
    }

    /** Enters resting or final phase {@code phase}: no event awaited, no deadline. */
    void rest(CmPhase phase) {
        this.phase = phase;
        this.limitNanos = 0;
        this.deadline = Long.MAX_VALUE;
    }

    /** Nanoseconds left of a waiting phase (negative once it is over); Long.MAX_VALUE in a resting one. */
    long remainingNanos() {
        return phase.awaited() == null ? Long.MAX_VALUE : deadline - System.nanoTime();
    }

    /** What is left of the phase, as a librdmacm timeout argument: 1 ms .. 24 days. */
    Duration remainingForCall() {
        return Duration.ofMillis(Math.max(1, Math.min(Integer.MAX_VALUE, remainingNanos() / 1_000_000)));
    }

    /**
     * The phase's timeout: "connect to X: timed out in phase address resolution (no
     * RDMA_CM_EVENT_ADDR_RESOLVED within 2000 ms)"; when what was left of the whole cut the phase
     * short, "… within 4948 ms, what was left of the whole 5000 ms)", so that the figure the
     * caller gave appears.
     */
    RdmaTimeoutException timedOut() {
        // to the nearest millisecond: a whole that started a moment before the phase leaves it 299.99 ms of 300
        long ms = millis(limitNanos);
        String cut = ms < millis(givenNanos) ? ", what was left of the whole " + millis(whole) + " ms" : "";
        return new RdmaTimeoutException(what + ": timed out in phase " + phase + " (no " + phase.awaited() + " within "
                + ms + " ms" + cut + ")");
    }

    private static long millis(long nanos) {
        return Math.max(0, (nanos + 500_000) / 1_000_000);
    }

    /**
     * Fails a waiting phase that ran out of time; for an event loop that woke without an event.
     * Nothing once ended.
     */
    void check() throws RdmaTimeoutException {
        if (failure == null && phase.awaited() != null && remainingNanos() <= 0) {
            throw fail(timedOut());
        }
    }

    /**
     * The next event of {@code id} (or, for a listener, a request for it) on its channel,
     * waiting until the phase's deadline.
     *
     * @throws RdmaTimeoutException  when none arrived in time
     * @throws IllegalStateException when an event of another id arrived: the channel must carry only this id's
     */
    CmEvent next(CmId id) throws RdmaConnectionException {
        if (phase.awaited() == null) {
            throw new IllegalStateException(what + ": the " + role + " rests in phase " + phase + ", nothing to wait for");
        }
        EventChannel channel = id.channel();
        CmEvent ev = run(() -> {
            long left = remainingNanos();
            CmEvent e = left <= 0 ? channel.tryGetEvent() : channel.getEvent(Duration.ofNanos(left));
            if (e == null) {
                throw timedOut();
            }
            return e;
        });
        if (ev.id() != id && ev.listener() != id) {
            throw fail(new IllegalStateException(what + ": " + ev + " is not for " + id + ": its channel must carry only its events"));
        }
        return ev;
    }

    /**
     * Whether {@code event} moves {@code id}'s progress on: false for ADDR_CHANGE, which is
     * passed over.
     *
     * @throws IllegalArgumentException when {@code event} is not for {@code id}
     * @throws IllegalStateException    when a failure ended the progress or its phase is final
     */
    boolean takes(CmId id, CmEvent event) {
        if (event.id() != id) {
            throw new IllegalArgumentException(event + " is not for " + id);
        }
        ensureActive();
        return event.type() != CmEventType.ADDR_CHANGE;
    }

    /** Fails with the exception of {@code event}, which is not what the phase awaits. */
    RdmaConnectionException unexpected(CmEvent event) {
        return fail(RdmaConnectionException.of(event, what));
    }

    /** Throws unless the {@link CmPhase} is {@code expected} and nothing ended it. */
    void expect(CmPhase expected, String action) {
        ensureActive();
        if (phase != expected) {
            throw new IllegalStateException(what + ": cannot " + action + " in phase " + phase + ", only in " + expected);
        }
    }

    /** Throws when a failure ended it or its phase is final. */
    void ensureActive() {
        if (failure != null) {
            throw new IllegalStateException(what + ": the " + role + " failed in phase " + phase, failure);
        }
        if (phase.isFinal()) {
            throw new IllegalStateException(what + ": " + phase + " already");
        }
    }

    /** Runs a librdmacm call; a {@link VerbsException} fails it as VERBS_ERROR, anything else as it is. */
    void call(Runnable call) throws RdmaConnectionException {
        run(() -> {
            try {
                call.run();
            } catch (VerbsException e) {
                throw RdmaConnectionException.of(e, what);
            }
            return null;
        });
    }

    /** Runs {@code step}; what it throws ends the progress and goes on as it is. */
    <T> T run(Step<T> step) throws RdmaConnectionException {
        try {
            return step.run();
        } catch (RdmaConnectionException | RuntimeException | Error e) {
            fail(e);
            throw e;
        }
    }

    /** {@link #check} under the lock. */
    void checkLocked() throws RdmaTimeoutException {
        lock.lock();
        try {
            check();
        } finally {
            lock.unlock();
        }
    }

    /** What {@code read} returns, read under the lock. */
    <T> T locked(Supplier<T> read) {
        lock.lock();
        try {
            return read.get();
        } finally {
            lock.unlock();
        }
    }

    /** Nanoseconds the current phase has left, at least 0 (Long.MAX_VALUE in a resting or final phase); under the lock. */
    long remainingNanosLocked() {
        return locked(() -> Math.max(0, remainingNanos()));
    }

    /** What it does and its phase ("connect to /10.0.0.2:7471 (route resolution)"), under the lock. */
    String describeLocked() {
        return locked(() -> what + " (" + phase + ")");
    }

    private <E extends Throwable> E fail(E e) {
        if (failure == null) {
            failure = e;
        }
        return e;
    }

    private static long nanos(Duration d) {
        return d.compareTo(Duration.ofNanos(FOREVER)) >= 0 ? FOREVER : d.toNanos();
    }
}
