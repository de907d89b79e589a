package dev.verbs4j.rdmacm;

import java.util.Objects;

/**
 * One side of an RDMA CM connection's setup, {@link CmConnector} or {@link CmAcceptor}: the id it
 * drives, its {@link CmTimeouts} and the {@link CmProgress} that times its phases, with what both
 * sides read the same way (phase, deadline, failure) and the blocking wait for the connection.
 * Holds no native memory; the id stays the caller's.
 */
abstract sealed class CmHandshake permits CmConnector, CmAcceptor {

    final CmId id;
    final CmTimeouts timeouts;
    final CmProgress progress;

    /**
     * @param what  what is being done, as failures name it ("connect to /10.0.0.2:7471")
     * @param role  "connector" or "acceptor", as misuse names it
     * @param first the resting phase it starts in
     */
    CmHandshake(CmId id, CmTimeouts timeouts, String what, String role, CmPhase first) {
        this.id = id;
        this.timeouts = Objects.requireNonNull(timeouts, "timeouts");
        this.progress = new CmProgress(what, role, timeouts.whole());
        progress.rest(first);
    }

    /**
     * Takes the next event of the id and moves on.
     *
     * @return the phase now
     * @throws IllegalArgumentException when {@code event} is not for the id
     * @throws IllegalStateException    when it failed or is done
     */
    public abstract CmPhase advance(CmEvent event) throws RdmaConnectionException;

    /** The event that established the connection, or null before it. */
    public abstract CmEvent established();

    /**
     * Drives it with the events of the id's channel until the connection is established. The
     * channel must carry only this id's events (an acceptor's request id: migrate it to a channel
     * of its own before accepting, or drive it with {@link #advance} from the listener's loop).
     *
     * @throws IllegalStateException when it rests (a connector's step returned nothing) or an event of another id arrives
     */
    public CmEvent awaitEstablished() throws RdmaConnectionException {
        while (phase() != CmPhase.ESTABLISHED) {
            advance(progress.next(id));
        }
        return established();
    }

    /**
     * Fails it when its waiting phase ran out of time; for an event loop that woke without an
     * event. Nothing in a resting or final phase, or once failed.
     *
     * @throws RdmaTimeoutException naming the phase and the event it waited for ("accept from …:
     *                              acceptance (no RDMA_CM_EVENT_ESTABLISHED within … ms)")
     */
    public void checkTimeout() throws RdmaTimeoutException {
        progress.checkLocked();
    }

    /** Nanoseconds the current phase has left (Long.MAX_VALUE in a resting or final phase). */
    public long remainingNanos() {
        return progress.remainingNanosLocked();
    }

    /** The phase it is in (after a failure: the one it failed in). */
    public CmPhase phase() {
        return progress.locked(progress::phase);
    }

    /** The id: the caller's (an acceptor's request id once accepted). */
    public CmId id() {
        return id;
    }

    /** What ended it (the exception it threw), or null while it goes on or once established. */
    public Throwable failure() {
        return progress.locked(progress::failure);
    }

    /** What it does ("connect to /10.0.0.2:7471", "accept from …") and its phase. */
    @Override
    public String toString() {
        return progress.describeLocked();
    }

    /** Starts waiting phase {@code phase} with its limit from the timeouts. */
    void enter(CmPhase phase) throws RdmaTimeoutException {
        progress.start(phase, timeouts.limit(phase));
    }
}
