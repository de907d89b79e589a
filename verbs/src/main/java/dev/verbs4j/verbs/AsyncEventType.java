package dev.verbs4j.verbs;

/**
 * The kind of an asynchronous event ({@code enum ibv_event_type}) with the text {@code
 * ibv_event_type_str()} gives it. Pure value; the C value is the ordinal.
 */
public enum AsyncEventType {
    /** CQ error (overrun). */
    CQ_ERR("CQ error"),
    /** Local work queue catastrophic error. */
    QP_FATAL("local work queue catastrophic error"),
    /** Invalid request local work queue error. */
    QP_REQ_ERR("invalid request local work queue error"),
    /** Local access violation work queue error. */
    QP_ACCESS_ERR("local access violation work queue error"),
    /** Communication established. */
    COMM_EST("communication established"),
    /** Send queue drained. */
    SQ_DRAINED("send queue drained"),
    /** Path migrated. */
    PATH_MIG("path migrated"),
    /** Path migration request error. */
    PATH_MIG_ERR("path migration request error"),
    /** Local catastrophic error. */
    DEVICE_FATAL("local catastrophic error"),
    /** Port active. */
    PORT_ACTIVE("port active"),
    /** Port error. */
    PORT_ERR("port error"),
    /** LID change. */
    LID_CHANGE("LID change"),
    /** P_Key change. */
    PKEY_CHANGE("P_Key change"),
    /** SM change. */
    SM_CHANGE("SM change"),
    /** SRQ catastrophic error. */
    SRQ_ERR("SRQ catastrophic error"),
    /** SRQ limit reached. */
    SRQ_LIMIT_REACHED("SRQ limit reached"),
    /** Last WQE reached. */
    QP_LAST_WQE_REACHED("last WQE reached"),
    /** Client reregistration. */
    CLIENT_REREGISTER("client reregistration"),
    /** GID table change. */
    GID_CHANGE("GID table change"),
    /** WQ fatal. */
    WQ_FATAL("WQ fatal"),
    /** A value this version does not know. */
    UNKNOWN("unknown");

    private static final AsyncEventType[] VALUES = values();

    private final String description;

    AsyncEventType(String description) {
        this.description = description;
    }

    /** The text {@code ibv_event_type_str()} returns. */
    public String description() {
        return description;
    }

    /** The type with C value {@code code}, or {@link #UNKNOWN}. */
    public static AsyncEventType of(int code) {
        return code >= 0 && code < VALUES.length - 1 ? VALUES[code] : UNKNOWN;
    }

    /** Whether the event concerns a queue pair. */
    boolean aboutQueuePair() {
        return switch (this) {
            case QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR, COMM_EST, SQ_DRAINED, PATH_MIG, PATH_MIG_ERR, QP_LAST_WQE_REACHED -> true;
            default -> false;
        };
    }

    /** Whether the event concerns a port. */
    boolean aboutPort() {
        return switch (this) {
            case PORT_ACTIVE, PORT_ERR, LID_CHANGE, PKEY_CHANGE, SM_CHANGE, CLIENT_REREGISTER, GID_CHANGE -> true;
            default -> false;
        };
    }
}
