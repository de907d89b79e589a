package dev.verbs4j.naaice;

/**
 * The states of a NAAICE communication context, with the numeric values the NAAICE C library
 * uses. A plain value: owns nothing. The numbers do not follow the order of a connection's life
 * (the NAA passes MRSP_RECEIVING 11 before MRSP_SENDING 10), so code must compare states for
 * identity, never with {@code <}; {@link StateMachine} holds the legal transitions.
 */
public enum NaaState {
    /** Created, nothing done yet. */
    INIT(0),
    /** The address is resolved and the verbs resources exist; the connection is being made. */
    READY(1),
    /** The connection is established. */
    CONNECTED(2),
    /** The connection was closed. */
    DISCONNECTED(3),
    /** A memory-region-setup message is being sent. */
    MRSP_SENDING(10),
    /** Waiting for (client) or processing (NAA) the peer's memory-region-setup message. */
    MRSP_RECEIVING(11),
    /** Memory region setup is complete: RPCs may start. */
    MRSP_DONE(12),
    /** The RPC's data is being written to the peer. */
    DATA_SENDING(20),
    /** The NAA runs the kernel. */
    CALCULATING(21),
    /** Waiting for the peer's data (the client: the NAA's write-back). */
    DATA_RECEIVING(22),
    /** The RPC finished; another may start. */
    FINISHED(30),
    /** A failure; the context's failure tells which. */
    ERROR(40);

    private final int code;

    NaaState(int code) {
        this.code = code;
    }

    /** The numeric value of the C library. */
    public int code() {
        return code;
    }

    /** The state with the C library's value {@code code}. */
    public static NaaState of(int code) {
        for (NaaState s : values()) {
            if (s.code == code) {
                return s;
            }
        }
        throw new IllegalArgumentException("no NAAICE state has the value " + code);
    }
}
