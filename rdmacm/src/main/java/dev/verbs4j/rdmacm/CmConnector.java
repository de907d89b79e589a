package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.VerbsException;

import java.net.InetSocketAddress;
import java.util.Objects;

/**
 * The active side of an RDMA CM connection on one asynchronous {@link CmId}: resolve the address,
 * resolve the route, connect, established ({@link CmPhase}), each waiting phase within its
 * {@link CmTimeouts} limit. The caller's {@link Steps} run between the phases: set options once
 * the device is known, create the queue pair and give the connection parameters once the route
 * is, ready a queue pair of its own when the peer answered.
 *
 * <p>Drivable two ways. Blocking: {@link #connect} returns once the connection is established, or
 * throws. One event at a time, for an event loop that takes the channel's events itself: {@link
 * #start} (or {@link #of} and {@link #resolve}, when the connector must be known to the loop
 * before its first event can arrive), then {@link #advance} with each event of the id, and {@link #checkTimeout} when the
 * loop wakes without one ({@link #remainingNanos} says how long it may sleep). A step that
 * returns nothing ({@link Steps#routeResolved} null, {@link Steps#connectResponse} false) rests
 * the connector until the caller goes on with {@link #connectWith} or {@link #establish}.
 *
 * <p>A failure event (ADDR_ERROR, ROUTE_ERROR, REJECTED, UNREACHABLE, CONNECT_ERROR,
 * DEVICE_REMOVAL, DISCONNECTED...) throws an {@link RdmaConnectionException} of kind EVENT; a
 * REJECTED one carries the rejecter's private data, whose {@link RejectionReason} {@link
 * #rejectionReason()} gives. A librdmacm call that fails throws one of kind VERBS_ERROR with the
 * {@link VerbsException} as its cause; a timeout an {@link RdmaTimeoutException} naming the phase
 * and the event it waited for. A failed connector stays in the phase it failed in.
 *
 * <p>The connector owns nothing: the id, its channel and what the steps create stay the caller's
 * (to close on failure as on success). One thread (or event loop) drives it at a time; its
 * methods take one lock, so that a thread taking the events and one connecting may hand it
 * to each other (as rping's do).
 */
public final class CmConnector extends CmHandshake {

    /**
     * What the caller does between the phases; runs on the thread that drives the connector. An
     * exception it throws fails the connector and is thrown on as it is.
     */
    @FunctionalInterface
    public interface Steps {

        /** The address is resolved and the id bound to a device: before the route (e.g. set the type of service). */
        default void addressResolved(CmId id) {
        }

        /**
         * The route is resolved: create the queue pair (or not) and return the parameters to
         * connect with, or null to rest in {@link CmPhase#READY_TO_CONNECT} until {@link
         * #connectWith}.
         */
        ConnectionParameters routeResolved(CmId id);

        /**
         * The peer answered a connect of an id without a queue pair of the connection manager's
         * (CONNECT_RESPONSE): move the own queue pair to RTR and RTS and return true to establish
         * now, or false to rest in {@link CmPhase#READY_TO_ESTABLISH} until {@link #establish}.
         */
        default boolean connectResponse(CmId id, CmEvent response) {
            return true;
        }

        /** Steps that only connect with {@code parameters}. */
        static Steps connectWith(ConnectionParameters parameters) {
            return id -> parameters;
        }
    }

    private final InetSocketAddress destination;
    private final Steps steps;
    private CmEvent last;

    private CmConnector(CmId id, InetSocketAddress destination, CmTimeouts timeouts, Steps steps) {
        super(Objects.requireNonNull(id, "id"), timeouts, "connect to " + Objects.requireNonNull(destination, "destination"),
                "connector", CmPhase.IDLE);
        this.destination = destination;
        this.steps = Objects.requireNonNull(steps, "steps");
        if (id.channel() == null) {
            throw new IllegalArgumentException(id + " is synchronous: a connector drives an id on an event channel");
        }
    }

    /** A connector of {@code id} to {@code destination}, {@link CmPhase#IDLE} until {@link #resolve}. */
    public static CmConnector of(CmId id, InetSocketAddress destination, CmTimeouts timeouts, Steps steps) {
        return new CmConnector(id, destination, timeouts, steps);
    }

    /**
     * Starts: resolves the address ({@code rdma_resolve_addr}, {@link CmPhase#ADDRESS_RESOLUTION}).
     * The whole limit of the timeouts counts from here.
     *
     * @param source the local address to connect from, or null to let the routing table choose
     */
    public void resolve(InetSocketAddress source) throws RdmaConnectionException {
        progress.lock.lock();
        try {
            progress.expect(CmPhase.IDLE, "resolve the address");
            progress.restart();
            enter(CmPhase.ADDRESS_RESOLUTION);
            progress.call(() -> id.resolveAddress(source, destination, progress.remainingForCall()));
        } finally {
            progress.lock.unlock();
        }
    }

    /**
     * Starts connecting {@code id} to {@code destination}: resolves the address ({@link
     * CmPhase#ADDRESS_RESOLUTION}); the events of the id then go to {@link #advance}.
     *
     * @param source the local address to connect from, or null to let the routing table choose
     */
    public static CmConnector start(CmId id, InetSocketAddress source, InetSocketAddress destination, CmTimeouts timeouts,
                                    Steps steps) throws RdmaConnectionException {
        CmConnector c = of(id, destination, timeouts, steps);
        c.resolve(source);
        return c;
    }

    /**
     * Connects {@code id} to {@code destination} and returns once the connection is established.
     * The id's channel must carry only this id's events while it waits, and {@code steps} must
     * not rest.
     *
     * @return the established connector ({@link #established()} has the event)
     * @throws RdmaTimeoutException    when a phase ran out of time (the message names it)
     * @throws RdmaConnectionException for a failure event or a failed call (see the class)
     */
    public static CmConnector connect(CmId id, InetSocketAddress source, InetSocketAddress destination, CmTimeouts timeouts,
                                      Steps steps) throws RdmaConnectionException {
        CmConnector c = start(id, source, destination, timeouts, steps);
        c.awaitEstablished();
        return c;
    }

    /**
     * Takes the next event of the id and moves on: runs the next step and the next librdmacm call
     * when it is the one the phase awaits; passes over ADDR_CHANGE; fails on any other.
     *
     * @return the phase now
     * @throws IllegalArgumentException when {@code event} is not for this connector's id
     * @throws IllegalStateException    when the connector failed or is established
     */
    @Override
    public CmPhase advance(CmEvent event) throws RdmaConnectionException {
        progress.lock.lock();
        try {
            CmPhase phase = progress.phase();
            if (!progress.takes(id, event)) {
                return phase;
            }
            CmEventType type = event.type();
            if (type != phase.awaited() && !(phase == CmPhase.CONNECTION && type == CmEventType.CONNECT_RESPONSE)) {
                throw progress.unexpected(event);
            }
            last = event;
            switch (phase) {
                case ADDRESS_RESOLUTION -> {
                    progress.run(() -> {
                        steps.addressResolved(id);
                        return null;
                    });
                    enter(CmPhase.ROUTE_RESOLUTION);
                    progress.call(() -> id.resolveRoute(progress.remainingForCall()));
                }
                case ROUTE_RESOLUTION -> {
                    ConnectionParameters p = progress.run(() -> steps.routeResolved(id));
                    progress.rest(CmPhase.READY_TO_CONNECT);
                    if (p != null) {
                        connectWith(p);
                    }
                }
                default -> { // CONNECTION
                    if (type == CmEventType.ESTABLISHED) {
                        progress.rest(CmPhase.ESTABLISHED);
                    } else {
                        boolean now = progress.run(() -> steps.connectResponse(id, event));
                        progress.rest(CmPhase.READY_TO_ESTABLISH);
                        if (now) {
                            establish();
                        }
                    }
                }
            }
            return progress.phase();
        } finally {
            progress.lock.unlock();
        }
    }

    /** Connects with {@code parameters} ({@code rdma_connect}) from {@link CmPhase#READY_TO_CONNECT}. */
    public void connectWith(ConnectionParameters parameters) throws RdmaConnectionException {
        progress.lock.lock();
        try {
            progress.expect(CmPhase.READY_TO_CONNECT, "connect");
            enter(CmPhase.CONNECTION);
            progress.call(() -> id.connect(parameters));
        } finally {
            progress.lock.unlock();
        }
    }

    /** Completes the connection ({@code rdma_establish}) from {@link CmPhase#READY_TO_ESTABLISH}. */
    public void establish() throws RdmaConnectionException {
        progress.lock.lock();
        try {
            progress.expect(CmPhase.READY_TO_ESTABLISH, "establish");
            progress.call(id::establish);
            progress.rest(CmPhase.ESTABLISHED);
        } finally {
            progress.lock.unlock();
        }
    }

    /** The event that established the connection (ESTABLISHED, or CONNECT_RESPONSE for an own queue pair), or null. */
    @Override
    public CmEvent established() {
        return progress.locked(() -> progress.phase() == CmPhase.ESTABLISHED ? last : null);
    }

    /** The reason the peer gave when it rejected the connection, or null (not rejected, or no reason given). */
    public RejectionReason rejectionReason() {
        return progress.locked(() -> progress.failure() instanceof RdmaConnectionException e && e.event() == CmEventType.REJECTED
                ? RejectionReason.decode(e.privateData()).orElse(null) : null);
    }
}
