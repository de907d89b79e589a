package dev.verbs4j.rdmacm;

import java.time.Duration;

/**
 * The deadline of the phase a connector or acceptor is in, within the deadline of the whole, and
 * the timeout that names the phase and the event it waited for. Confined to its connector's
 * caller; holds only numbers.
 */
final class PhaseClock {

    /** Far enough for "no limit", near enough that {@code nanoTime() + it} cannot overflow. */
    private static final long FOREVER = Long.MAX_VALUE / 4;

    private final long whole;
    private long wholeDeadline;
    private CmPhase phase;
    private long limitNanos;
    private long deadline;

    PhaseClock(Duration whole) {
        this.whole = nanos(whole);
        restart();
    }

    /** Counts the whole from now. */
    void restart() {
        this.wholeDeadline = System.nanoTime() + whole;
    }

    /**
     * Starts {@code phase} with {@code limit} (cut to what is left of the whole).
     *
     * @throws RdmaTimeoutException when less than a millisecond is left: the phase would time out at once
     */
    void start(CmPhase phase, Duration limit, String what) throws RdmaTimeoutException {
        long now = System.nanoTime();
        this.phase = phase;
        this.limitNanos = Math.min(nanos(limit), wholeDeadline - now);
        this.deadline = now + limitNanos;
        if (limitNanos < 1_000_000) {
            throw timedOut(what);
        }
    }

    /** Enters resting or final phase {@code phase}: no event awaited, no deadline. */
    void rest(CmPhase phase) {
        this.phase = phase;
        this.limitNanos = 0;
        this.deadline = Long.MAX_VALUE;
    }

    CmPhase phase() {
        return phase;
    }

    /** Nanoseconds left of a waiting phase (negative once it is over); Long.MAX_VALUE in a resting one. */
    long remainingNanos() {
        return phase.awaited() == null ? Long.MAX_VALUE : deadline - System.nanoTime();
    }

    /**
     * Fails a waiting phase that ran out of time; for an event loop that woke without an event.
     *
     * @throws RdmaTimeoutException naming the phase and the event it waited for
     */
    void check(String what) throws RdmaTimeoutException {
        if (phase.awaited() != null && remainingNanos() <= 0) {
            throw timedOut(what);
        }
    }

    /** What is left of the phase, as a librdmacm timeout argument: 1 ms .. 24 days. */
    Duration remainingForCall() {
        long ms = Math.max(1, Math.min(Integer.MAX_VALUE, remainingNanos() / 1_000_000));
        return Duration.ofMillis(ms);
    }

    /** The timeout of the phase: "connect to X: address resolution (no RDMA_CM_EVENT_ADDR_RESOLVED within 2000 ms)". */
    RdmaTimeoutException timedOut(String what) {
        return new RdmaTimeoutException(what + ": " + phase + " (no " + phase.awaited() + " within "
                + Math.max(0, limitNanos / 1_000_000) + " ms)");
    }

    /**
     * The next event on {@code channel}, waiting until the phase's deadline.
     *
     * @throws RdmaTimeoutException when none arrived in time
     */
    CmEvent next(EventChannel channel, String what) throws RdmaTimeoutException {
        long left = remainingNanos();
        CmEvent ev = left <= 0 ? channel.tryGetEvent() : channel.getEvent(Duration.ofNanos(left));
        if (ev == null) {
            throw timedOut(what);
        }
        return ev;
    }

    private static long nanos(Duration d) {
        return d.compareTo(Duration.ofNanos(FOREVER)) >= 0 ? FOREVER : d.toNanos();
    }
}
