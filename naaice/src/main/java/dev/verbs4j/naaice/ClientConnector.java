package dev.verbs4j.naaice;

import dev.verbs4j.rdmacm.CmConnector;
import dev.verbs4j.rdmacm.CmEvent;
import dev.verbs4j.rdmacm.CmEventType;
import dev.verbs4j.rdmacm.CmId;
import dev.verbs4j.rdmacm.CmPhase;
import dev.verbs4j.rdmacm.CmTimeouts;
import dev.verbs4j.rdmacm.ConnectionParameters;
import dev.verbs4j.rdmacm.EventChannel;
import dev.verbs4j.rdmacm.Failure;
import dev.verbs4j.rdmacm.PortSpace;
import dev.verbs4j.rdmacm.RdmaConnectionException;
import dev.verbs4j.verbs.Closeables;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The RDMA CM active side of a {@link NaaClient}: its event channel and connection id, and the
 * {@link CmConnector} that takes them from resolving the NAA's address to the established
 * connection (address, route, connect with the C library's parameters, established), driven one
 * event at a time by {@link #takeEvents}; then the NAA's disconnect. What the client needs of the connection goes through this narrow interface: {@link
 * #start}, {@link #takeEvents}, {@link #link}, {@link #disconnect}, the id for the verbs
 * resources and the channel's descriptor to sleep on. Owns the channel and the id (closing the
 * channel closes the id); guarded by the client's lock.
 */
final class ClientConnector implements AutoCloseable {

    /** How far the connection got: {@link NaaClient#close()} ends it accordingly. */
    enum Link {
        /** Not established (yet, or never). */
        NONE,
        /** Established, and the NAA has not disconnected. */
        ESTABLISHED,
        /** Established, then the NAA disconnected. */
        PEER_DISCONNECTED
    }

    /** The connection parameters of the C library (responder resources, initiator depth, retries). */
    private static final ConnectionParameters C_PARAMETERS = new ConnectionParameters(new byte[0], 1, 1, false, 7, 6, false, 0);

    /**
     * The establishment's own limit: none to speak of, the client's {@link NaaClient#connect}
     * timeout is the one that counts (the connector is driven by events, never timed out here).
     */
    private static final Duration NO_LIMIT = Duration.ofDays(1);

    private final InetSocketAddress naa;
    private final InetSocketAddress local;
    private final ClientState state;
    private final EventChannel events;
    private final CmId id;
    private final CmConnector connector;
    /** What the client does once the device is known (make its verbs resources); set by {@link #takeEvents}. */
    private Runnable addressResolved = () -> {
    };
    private Link link = Link.NONE;

    ClientConnector(InetSocketAddress naa, InetSocketAddress local, Duration addressTimeout, Duration routeTimeout,
                    ClientState state) {
        this.naa = naa;
        this.local = local;
        this.state = state;
        EventChannel ch = EventChannel.create();
        try {
            this.id = ch.createId(PortSpace.TCP);
            this.connector = CmConnector.of(id, naa, CmTimeouts.of(addressTimeout, routeTimeout, NO_LIMIT),
                    new CmConnector.Steps() {
                        @Override
                        public void addressResolved(CmId resolved) {
                            ClientConnector.this.addressResolved.run();
                            state.moveTo(NaaState.READY);
                        }

                        @Override
                        public ConnectionParameters routeResolved(CmId routed) {
                            return C_PARAMETERS;
                        }
                    });
        } catch (RuntimeException e) {
            throw Closeables.closeAfter(e, ch);
        }
        this.events = ch;
    }

    /** The NAA's address. */
    InetSocketAddress naa() {
        return naa;
    }

    /** The connection id: its device context and queue pair hold the verbs resources. */
    CmId id() {
        return id;
    }

    /** The event channel's descriptor: readable when a connection manager event is pending. */
    int fd() {
        return events.fd();
    }

    Link link() {
        return link;
    }

    /** Whether the connection was ever established (the NAA may have disconnected since). */
    boolean wasEstablished() {
        return link != Link.NONE;
    }

    /** Starts resolving the NAA's address. */
    void start() {
        try {
            connector.resolve(local);
        } catch (RdmaConnectionException | RuntimeException e) {
            throw state.fail(NaaiceException.Reason.LOCAL, 0, "cannot resolve " + naa, e);
        }
    }

    /**
     * Handles the pending events without blocking; {@code addressResolved} makes the verbs
     * resources once the device is known (before the route is resolved).
     *
     * @throws NaaiceException when an event fails the client (it is in ERROR then)
     */
    void takeEvents(Runnable addressResolved) {
        this.addressResolved = addressResolved;
        CmEvent ev;
        while ((ev = events.tryGetEvent()) != null) {
            handle(ev);
        }
    }

    /** Takes the pending events and notes only a disconnect (while closing). */
    void takeDisconnects() {
        CmEvent ev;
        while ((ev = events.tryGetEvent()) != null) {
            if (ev.type() == CmEventType.DISCONNECTED && link == Link.ESTABLISHED) {
                link = Link.PEER_DISCONNECTED;
            }
        }
    }

    private void handle(CmEvent ev) {
        CmEventType t = ev.type();
        NaaState s = state.state();
        if (link == Link.NONE) {
            if (s != NaaState.INIT && s != NaaState.READY) {
                return; // failed meanwhile: the events of the abandoned connect change nothing
            }
            try {
                if (connector.advance(ev) == CmPhase.ESTABLISHED) {
                    link = Link.ESTABLISHED;
                    state.moveTo(NaaState.CONNECTED);
                }
            } catch (RdmaConnectionException e) {
                // a failure event is the NAA's or the network's; a failed librdmacm call is local
                throw e.kind() == Failure.Kind.EVENT
                        ? state.fail(NaaiceException.Reason.CM_EVENT, e.status(), failureText(e, s), e)
                        : state.fail(NaaiceException.Reason.LOCAL, e.errno(), failureText(e, s), e);
            } catch (RuntimeException e) {
                throw state.fail(NaaiceException.Reason.LOCAL, 0, "connect to " + naa + " in state " + s + " failed", e);
            }
            return;
        }
        if (t == CmEventType.DISCONNECTED) {
            if (link == Link.ESTABLISHED) {
                link = Link.PEER_DISCONNECTED;
            }
            try {
                id.disconnect();
            } catch (RuntimeException e) {
                // already disconnected
            }
            throw state.failTransport(NaaiceException.Reason.CM_EVENT, ev.status(), "the NAA disconnected (" + t + ") in state " + s,
                    Failure.peerDisconnected(t));
        }
        if (t != CmEventType.TIMEWAIT_EXIT && t != CmEventType.ADDR_CHANGE) {
            throw state.failTransport(NaaiceException.Reason.CM_EVENT, ev.status(), t + " in state " + s, Failure.event(t, ev.status()));
        }
    }

    /** The message of a connect that an event failed: a rejection with the NAA's text (the C NAA sends a string). */
    private static String failureText(RdmaConnectionException e, NaaState s) {
        if (e.event() == CmEventType.REJECTED) {
            String why = new String(e.privateData(), StandardCharsets.ISO_8859_1).replace("\0", "");
            return "the NAA rejected the connection" + (why.isEmpty() ? "" : ": " + why);
        }
        return e.getMessage() + " in state " + s;
    }

    /**
     * Disconnects and waits until {@code deadline} (System.nanoTime) for the DISCONNECTED event
     * (the C NAA answers none); a failure means it was not connected (any more).
     */
    void disconnect(long deadline) {
        try {
            id.disconnect();
            long left;
            while ((left = deadline - System.nanoTime()) > 0) {
                CmEvent ev = events.getEvent(Duration.ofNanos(left));
                if (ev != null && ev.type() == CmEventType.DISCONNECTED) {
                    break;
                }
            }
        } catch (RuntimeException e) {
            // not connected (any more)
        }
    }

    /** Closes the id and the channel. */
    @Override
    public void close() {
        Closeables.closeAll(id, events);
    }
}
