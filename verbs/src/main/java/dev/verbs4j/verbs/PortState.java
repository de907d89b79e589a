package dev.verbs4j.verbs;

/**
 * The logical state of a port ({@code enum ibv_port_state}). Pure value; owns no native memory.
 */
public enum PortState implements IntCoded {
    /** {@code PORT_NOP}. */
    NOP(0, "PORT_NOP"),
    /** {@code PORT_DOWN}. */
    DOWN(1, "PORT_DOWN"),
    /** {@code PORT_INIT}. */
    INIT(2, "PORT_INIT"),
    /** {@code PORT_ARMED}. */
    ARMED(3, "PORT_ARMED"),
    /** {@code PORT_ACTIVE}. */
    ACTIVE(4, "PORT_ACTIVE"),
    /** {@code PORT_ACTIVE_DEFER}. */
    ACTIVE_DEFER(5, "PORT_ACTIVE_DEFER"),
    /** A value this version of verbs4j does not know. */
    UNKNOWN(Integer.MIN_VALUE, "unknown");

    PortState(int code, String label) {
        IntCoded.define(this, code, label);
    }

    /** The constant for the C value {@code code}, or {@link #UNKNOWN}. */
    public static PortState of(int code) {
        return IntCoded.of(PortState.class, code, UNKNOWN);
    }
}
