package dev.verbs4j.verbs;

/** The state of a queue pair ({@code enum ibv_qp_state}). Pure value; the C value is the ordinal. */
public enum QpState {
    /** Reset: just created, or reset. */
    RESET,
    /** Initialized: receives may be posted. */
    INIT,
    /** Ready to receive. */
    RTR,
    /** Ready to send. */
    RTS,
    /** Send queue drained. */
    SQD,
    /** Send queue error. */
    SQE,
    /** Error: outstanding work requests complete with FLUSH_ERR. */
    ERR,
    /** Unknown. */
    UNKNOWN;

    private static final QpState[] VALUES = values();

    /** The C value. */
    public int code() {
        return ordinal();
    }

    /** The state with C value {@code code}, or {@link #UNKNOWN}. */
    public static QpState of(int code) {
        return code >= 0 && code < VALUES.length ? VALUES[code] : UNKNOWN;
    }
}
