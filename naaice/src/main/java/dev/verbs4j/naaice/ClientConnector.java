package dev.verbs4j.naaice;

import dev.verbs4j.rdmacm.CmEvent;
import dev.verbs4j.rdmacm.CmEventType;
import dev.verbs4j.rdmacm.CmId;
import dev.verbs4j.rdmacm.ConnectionParameters;
import dev.verbs4j.rdmacm.EventChannel;
import dev.verbs4j.rdmacm.PortSpace;
import dev.verbs4j.verbs.Closeables;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The RDMA CM active side of a {@link NaaClient}: its event channel and connection id, and the
 * steps from resolving the NAA's address to the established connection (address, route,
 * connect with the C library's parameters, established), driven one event at a time by {@link
 * #handle}. What the client needs of the connection goes through this narrow interface: {@link
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

    private final InetSocketAddress naa;
    private final InetSocketAddress local;
    private final Duration addressTimeout;
    private final Duration routeTimeout;
    private final ClientState state;
    private final EventChannel events;
    private final CmId id;
    private Link link = Link.NONE;

    ClientConnector(InetSocketAddress naa, InetSocketAddress local, Duration addressTimeout, Duration routeTimeout,
                    ClientState state) {
        this.naa = naa;
        this.local = local;
        this.addressTimeout = addressTimeout;
        this.routeTimeout = routeTimeout;
        this.state = state;
        EventChannel ch = EventChannel.create();
        try {
            this.id = ch.createId(PortSpace.TCP);
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
            id.resolveAddress(local, naa, addressTimeout);
        } catch (RuntimeException e) {
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
        CmEvent ev;
        while ((ev = events.tryGetEvent()) != null) {
            handle(ev, addressResolved);
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

    private void handle(CmEvent ev, Runnable addressResolved) {
        CmEventType t = ev.type();
        NaaState s = state.state();
        switch (t) {
            case ADDR_RESOLVED -> {
                if (s != NaaState.INIT) {
                    return;
                }
                addressResolved.run();
                id.resolveRoute(routeTimeout);
                state.moveTo(NaaState.READY);
            }
            case ROUTE_RESOLVED -> {
                if (s == NaaState.READY) {
                    id.connect(C_PARAMETERS);
                }
            }
            case ESTABLISHED -> {
                if (s == NaaState.READY) {
                    link = Link.ESTABLISHED;
                    state.moveTo(NaaState.CONNECTED);
                }
            }
            case DISCONNECTED -> {
                if (link == Link.ESTABLISHED) {
                    link = Link.PEER_DISCONNECTED;
                }
                try {
                    id.disconnect();
                } catch (RuntimeException e) {
                    // already disconnected
                }
                throw state.fail(NaaiceException.Reason.CM_EVENT, ev.status(), "the NAA disconnected (" + t + ") in state " + s,
                        null);
            }
            case REJECTED -> {
                String why = new String(ev.privateDataTrimmed(), StandardCharsets.ISO_8859_1);
                throw state.fail(NaaiceException.Reason.CM_EVENT, ev.status(), "the NAA rejected the connection"
                        + (why.isEmpty() ? "" : ": " + why), null);
            }
            case TIMEWAIT_EXIT, CONNECT_RESPONSE, ADDR_CHANGE -> {
            }
            default -> throw state.fail(NaaiceException.Reason.CM_EVENT, ev.status(), t + " in state " + s, null);
        }
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
