package dev.verbs4j.rdmacm;

/**
 * The kinds of connection manager events ({@code enum rdma_cm_event_type}), in the C order.
 * {@link #toString()} gives the name {@code rdma_event_str()} prints.
 */
public enum CmEventType {
    /** The address was resolved ({@code rdma_resolve_addr}); the id is bound to a device. */
    ADDR_RESOLVED,
    /** Address resolution failed. */
    ADDR_ERROR,
    /** The route was resolved ({@code rdma_resolve_route}). */
    ROUTE_RESOLVED,
    /** Route resolution failed. */
    ROUTE_ERROR,
    /** A connection request arrived on a listener; the event carries the new id. */
    CONNECT_REQUEST,
    /** The peer answered a connect on an id without a queue pair. */
    CONNECT_RESPONSE,
    /** Connection establishment failed. */
    CONNECT_ERROR,
    /** The remote side is unreachable or did not answer. */
    UNREACHABLE,
    /** The peer rejected the connection; the status carries the reason. */
    REJECTED,
    /** The connection is established. */
    ESTABLISHED,
    /** The connection was disconnected; its queue pair is in the error state. */
    DISCONNECTED,
    /** The device was removed: the id must be destroyed. */
    DEVICE_REMOVAL,
    /** A multicast join completed. */
    MULTICAST_JOIN,
    /** A multicast group failed. */
    MULTICAST_ERROR,
    /** The address of the id's network device changed. */
    ADDR_CHANGE,
    /** The connection left the time-wait state: its queue pair may be reused. */
    TIMEWAIT_EXIT;

    private static final CmEventType[] VALUES = values();

    /** The type with C value {@code code}. */
    public static CmEventType of(int code) {
        if (code < 0 || code >= VALUES.length) {
            throw new IllegalArgumentException("unknown rdma_cm_event_type " + code);
        }
        return VALUES[code];
    }

    /** The C value. */
    public int code() {
        return ordinal();
    }

    /** Whether this event reports a failure of what the id was doing. */
    public boolean isError() {
        return switch (this) {
            case ADDR_ERROR, ROUTE_ERROR, CONNECT_ERROR, UNREACHABLE, REJECTED, DEVICE_REMOVAL, MULTICAST_ERROR -> true;
            default -> false;
        };
    }

    @Override
    public String toString() {
        return "RDMA_CM_EVENT_" + name();
    }
}
