package dev.verbs4j.tools.rdmacm;

import dev.verbs4j.rdmacm.CmConnector;
import dev.verbs4j.rdmacm.CmEvent;
import dev.verbs4j.rdmacm.CmId;
import dev.verbs4j.rdmacm.EventChannel;
import dev.verbs4j.rdmacm.RdmaConnectionException;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * rping's connection manager thread: takes each event, moves the state of the connection it is
 * for and wakes that connection's waiter; on a fatal event every waiter wakes and gives up.
 */
final class RPingEvents {

    private final RPing rping;
    private final EventChannel channel;
    private final RPingConnection first;
    private final Map<CmId, RPingConnection> children = new ConcurrentHashMap<>();
    private volatile boolean stopping;
    private Thread thread;

    private RPingEvents(RPing rping, EventChannel channel, RPingConnection first) {
        this.rping = rping;
        this.channel = channel;
        this.first = first;
    }

    /** Starts the thread for the events of {@code channel}; {@code first} takes those of no other connection. */
    static RPingEvents start(RPing rping, EventChannel channel, RPingConnection first) {
        RPingEvents events = new RPingEvents(rping, channel, first);
        events.thread = Thread.ofPlatform().name("rping-cm").daemon().start(events::loop);
        return events;
    }

    /** Routes the events of {@code connection}'s child id to it (the persistent server's connections). */
    void add(RPingConnection connection) {
        children.put(connection.childId, connection);
    }

    /** Stops routing the events of {@code child}. */
    void remove(CmId child) {
        children.remove(child);
    }

    /** Ends the thread. */
    void stop() {
        stopping = true;
        thread.interrupt();
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void loop() {
        while (!stopping) {
            CmEvent event;
            try {
                event = channel.getEvent(RPing.POLL_SLICE);
            } catch (RuntimeException e) {
                if (!stopping) {
                    rping.err.print("rdma_get_cm_event: " + e.getMessage() + "\n");
                    fail(1);
                }
                return;
            }
            if (event == null) {
                continue;
            }
            RPingConnection c = event.listener() != null ? first : children.getOrDefault(event.id(), first);
            try {
                handle(c, event);
            } catch (RPingException e) {
                e.report(rping.err);
                fail(e.status());
                return;
            }
        }
    }

    /** What the C program's exit() from the event thread does here: every waiter wakes and gives up. */
    private void fail(int status) {
        rping.fail(status);
        first.enter(PingState.ERROR);
        for (RPingConnection c : children.values()) {
            c.enter(PingState.ERROR);
        }
    }

    /** Hands {@code event} to the client's connector while it waits for one (a server has none). */
    private static void advance(RPingConnection c, CmEvent event) throws RdmaConnectionException {
        CmConnector connector = c.connector;
        if (connector != null && event.id() == connector.id() && connector.phase().awaited() != null) {
            connector.advance(event);
        }
    }

    /** {@link #advance} with an event whose step calls nothing: the phase awaits it, so it cannot fail. */
    private static void advanceResolved(RPingConnection c, CmEvent event) {
        try {
            advance(c, event);
        } catch (RdmaConnectionException e) {
            throw new IllegalStateException(event + " is what the connector awaits", e);
        }
    }

    /** What rping prints of a failed call: the librdmacm call's own message, not the connector's. */
    static String message(Exception e) {
        return e instanceof RdmaConnectionException && e.getCause() != null ? e.getCause().getMessage() : e.getMessage();
    }

    private void handle(RPingConnection c, CmEvent event) {
        CmId id = event.id();
        rping.debug("cma_event type %s cma_id %s (%s)\n", event.type(), id, id == first.cmId ? "parent" : "child");
        switch (event.type()) {
            case ADDR_RESOLVED -> {
                c.state = PingState.ADDR_RESOLVED;
                try {
                    advance(c, event); // resolves the route
                } catch (RdmaConnectionException | RuntimeException e) {
                    c.state = PingState.ERROR;
                    rping.err.print("rdma_resolve_route: " + message(e) + "\n");
                    c.wake();
                }
            }
            case ROUTE_RESOLVED -> {
                advanceResolved(c, event);
                c.enter(PingState.ROUTE_RESOLVED);
            }
            case CONNECT_REQUEST -> {
                c.state = PingState.CONNECT_REQUEST;
                c.childId = id;
                rping.debug("child cma %s\n", id);
                c.wake();
            }
            case CONNECT_RESPONSE -> {
                rping.debug("CONNECT_RESPONSE\n");
                advanceResolved(c, event);
                c.enter(PingState.CONNECTED);
            }
            case ESTABLISHED -> {
                rping.debug("ESTABLISHED\n");
                advanceResolved(c, event);
                // the server wakes when the first receive completes
                if (!c.server) {
                    c.state = PingState.CONNECTED;
                }
                c.wake();
            }
            case ADDR_ERROR, ROUTE_ERROR, CONNECT_ERROR, UNREACHABLE, REJECTED -> {
                rping.err.printf("cma event %s, error %d\n", event.type(), event.status());
                c.wake();
                throw RPingException.reported(-1);
            }
            case DISCONNECTED -> {
                rping.err.printf("%s DISCONNECT EVENT...\n", c.server ? "server" : "client");
                c.enter(PingState.DISCONNECTED);
            }
            case DEVICE_REMOVAL -> {
                rping.err.print("cma detected device removal!!!!\n");
                c.enter(PingState.ERROR);
                throw RPingException.reported(-1);
            }
            default -> rping.err.printf("unhandled event: %s, ignoring\n", event.type());
        }
    }
}
