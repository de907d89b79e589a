package dev.verbs4j.vipl;

/**
 * The state of a VI ({@code VIP_VI_STATE}, §5, §9.10.7), in the specification's enum order (which
 * is not the order of the prose): IDLE 0, CONNECTED 1, CONNECT_PENDING 2, ERROR 3.
 */
public enum VipViState {
    /** Created or disconnected: receives may be posted, sends complete in error. */
    IDLE,
    /** Connected to exactly one remote VI; both queues are processed. */
    CONNECTED,
    /** A ConnectRequest or ConnectAccept is under way. */
    CONNECT_PENDING,
    /** A reliable VI after an error: the connection is broken, every posted descriptor completes in error. */
    ERROR;

    /** The C value. */
    public int code() {
        return ordinal();
    }
}
