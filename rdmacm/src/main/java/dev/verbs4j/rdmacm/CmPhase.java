package dev.verbs4j.rdmacm;

/**
 * The phases of an RDMA CM connection as {@link CmConnector} (the active side) and {@link
 * CmAcceptor} (the passive side) drive it. A waiting phase awaits one event ({@link #awaited()})
 * within its timeout; a resting phase waits for the caller (to connect, establish, accept or
 * reject); {@link #ESTABLISHED} and {@link #REJECTED} end it. Pure data.
 */
public enum CmPhase {
    /** Active, resting: the connector is made, its address resolution not started yet. */
    IDLE("idle", null),
    /** Active: {@code rdma_resolve_addr} was called; awaits ADDR_RESOLVED. */
    ADDRESS_RESOLUTION("address resolution", CmEventType.ADDR_RESOLVED),
    /** Active: {@code rdma_resolve_route} was called; awaits ROUTE_RESOLVED. */
    ROUTE_RESOLUTION("route resolution", CmEventType.ROUTE_RESOLVED),
    /** Active, resting: the route is resolved; the caller creates its queue pair and connects. */
    READY_TO_CONNECT("ready to connect", null),
    /**
     * Active: {@code rdma_connect} was called; awaits ESTABLISHED (or CONNECT_RESPONSE when the
     * id has no queue pair of the connection manager's).
     */
    CONNECTION("connection", CmEventType.ESTABLISHED),
    /** Active, resting: the peer answered; the caller readies its own queue pair and establishes. */
    READY_TO_ESTABLISH("ready to establish", null),
    /** Passive: a listener awaits a CONNECT_REQUEST. */
    REQUEST("connection request", CmEventType.CONNECT_REQUEST),
    /** Passive, resting: a request arrived; the caller accepts or rejects it. */
    DECISION("decision on the request", null),
    /** Passive: {@code rdma_accept} was called; awaits ESTABLISHED. */
    ACCEPTANCE("acceptance", CmEventType.ESTABLISHED),
    /** The end: the connection is established. */
    ESTABLISHED("established", null),
    /** The end, passive: the request was rejected and its id freed. */
    REJECTED("rejected", null);

    private final String description;
    private final CmEventType awaited;

    CmPhase(String description, CmEventType awaited) {
        this.description = description;
        this.awaited = awaited;
    }

    /** The event this phase waits for, or null for a resting or final phase. */
    public CmEventType awaited() {
        return awaited;
    }

    /** Whether the connection is established or the request rejected: nothing more happens. */
    public boolean isFinal() {
        return this == ESTABLISHED || this == REJECTED;
    }

    /** What the phase does, as timeouts name it ("address resolution"). */
    @Override
    public String toString() {
        return description;
    }
}
