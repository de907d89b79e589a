package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.Errno;
import dev.verbs4j.verbs.VerbsException;

import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The operations of one {@link CmId} that may wait for an outcome: one at a time, and on a
 * synchronous id the wait for the event that ends each, judged as librdmacm's synchronous mode
 * would (the outcome, a failure with its errno, or an event that is no outcome and is passed
 * over). Owns no native memory.
 */
final class CmOutcomes {

    /** The events that end a synchronous operation as a failure (when not its outcome). */
    private static final Set<CmEventType> FAILURES = EnumSet.of(CmEventType.ADDR_ERROR, CmEventType.ROUTE_ERROR,
            CmEventType.CONNECT_ERROR, CmEventType.UNREACHABLE, CmEventType.REJECTED, CmEventType.DEVICE_REMOVAL,
            CmEventType.MULTICAST_ERROR, CmEventType.DISCONNECTED);
    static final Set<CmEventType> ADDR = EnumSet.of(CmEventType.ADDR_RESOLVED);
    static final Set<CmEventType> ROUTE = EnumSet.of(CmEventType.ROUTE_RESOLVED);
    /** CONNECT_RESPONSE: the id has no queue pair; the application completes with {@link CmId#establish}. */
    static final Set<CmEventType> CONNECTED = EnumSet.of(CmEventType.ESTABLISHED, CmEventType.CONNECT_RESPONSE);
    static final Set<CmEventType> ESTABLISHED = EnumSet.of(CmEventType.ESTABLISHED);
    static final Set<CmEventType> DISCONNECTED = EnumSet.of(CmEventType.DISCONNECTED);
    static final Set<CmEventType> JOINED = EnumSet.of(CmEventType.MULTICAST_JOIN);
    static final Set<CmEventType> REQUEST = EnumSet.of(CmEventType.CONNECT_REQUEST);

    private final CmId owner;
    /** Operations that may wait for an outcome, and migration: one at a time. */
    private final ReentrantLock operation = new ReentrantLock();

    CmOutcomes(CmId owner) {
        this.owner = owner;
    }

    /** The lock of one operation at a time (taken by a migration, too). */
    ReentrantLock operation() {
        return operation;
    }

    /**
     * Runs {@code call}, a librdmacm function on the id, holding the id and its channel; on a
     * synchronous id then waits for the outcome among {@code outcome} and returns its event (null
     * on an asynchronous id, or when {@code outcome} is null: the call has none to wait for).
     */
    CmEvent operate(String function, String what, Runnable call, Set<CmEventType> outcome) {
        operation.lock();
        try {
            boolean sync = owner.heldFor(() -> {
                boolean waits = owner.isSynchronous() && outcome != null;
                call.run();
                return waits;
            });
            return sync ? awaitOutcome(function, what, outcome) : null;
        } finally {
            operation.unlock();
        }
    }

    /** The next connection request of a synchronous listener ({@code rdma_get_request}). */
    CmEvent awaitRequest() {
        operation.lock();
        try {
            return awaitOutcome("rdma_get_request", owner.describe(), REQUEST);
        } finally {
            operation.unlock();
        }
    }

    /**
     * Waits on the id's own channel for the event that ends a synchronous operation: returns it
     * when it is one of {@code outcome} with status 0, throws a {@link VerbsException} naming
     * {@code function} when the operation failed. Holds the id only while taking an event and
     * sleeps on the descriptors between, so that a close from another thread wakes it.
     */
    private CmEvent awaitOutcome(String function, String what, Set<CmEventType> outcome) {
        EventChannel own = owner.eventChannel();
        while (true) {
            CmEvent[] taken = new CmEvent[1];
            try {
                CmEvent end = owner.heldIdFor(() -> {
                    taken[0] = own.tryGetEvent();
                    return taken[0] == null ? null : judge(taken[0], function, what, outcome);
                });
                if (end != null) {
                    return end;
                }
                if (taken[0] != null) {
                    continue; // not an outcome: the next event may be
                }
            } catch (IllegalStateException e) {
                if (owner.isClosed()) {
                    throw new IllegalStateException(owner.describe() + " was closed while " + function + " waited for its outcome", e);
                }
                throw e;
            }
            own.awaitReadable(-1);
        }
    }

    /** The outcome {@code ev} is, or null when it is not one; throws when it is a failure. */
    private CmEvent judge(CmEvent ev, String function, String what, Set<CmEventType> outcome) {
        if (ev.type() == CmEventType.CONNECT_REQUEST) {
            CmId child = ev.id();
            if (ev.listener() == owner && outcome.contains(CmEventType.CONNECT_REQUEST)) {
                try {
                    child.makeSynchronous();
                } catch (RuntimeException e) {
                    refuse(child, e);
                    throw e;
                }
                child.recordPrivateData(ev.privateData());
                return ev;
            }
            refuse(child, null); // not asked for: getRequest takes the requests
            return null;
        }
        if (ev.id() != owner) {
            return null; // an event of a request's id before it moved to its own channel
        }
        boolean expected = outcome.contains(ev.type());
        if (expected && ev.status() == 0) {
            owner.recordPrivateData(ev.privateData());
            return ev;
        }
        if (expected || FAILURES.contains(ev.type())) {
            owner.recordPrivateData(ev.privateData());
            throw new VerbsException(function, errno(ev), what + ": " + ev.type()
                    + (ev.status() != 0 ? " (status " + ev.status() + ")" : ""));
        }
        return null; // TIMEWAIT_EXIT, ADDR_CHANGE, ...: not an outcome
    }

    /** The errno librdmacm's synchronous calls report for {@code ev}. */
    static int errno(CmEvent ev) {
        if (ev.type() == CmEventType.REJECTED) {
            return Errno.ECONNREFUSED;
        }
        if (ev.status() != 0) {
            return Math.abs(ev.status());
        }
        return switch (ev.type()) {
            case DISCONNECTED -> Errno.ECONNRESET;
            case DEVICE_REMOVAL -> Errno.ENODEV;
            case UNREACHABLE -> Errno.ETIMEDOUT;
            default -> Errno.EIO;
        };
    }

    /**
     * Rejects and frees a connection request nobody takes; the failures of both are added to
     * {@code cause}, or dropped when there is none: the request is refused all the same.
     */
    private static void refuse(CmId child, RuntimeException cause) {
        try {
            child.reject(new byte[0]);
        } catch (RuntimeException e) {
            if (cause != null) {
                cause.addSuppressed(e);
            }
        }
        try {
            child.close();
        } catch (RuntimeException e) {
            if (cause != null) {
                cause.addSuppressed(e);
            }
        }
    }
}
