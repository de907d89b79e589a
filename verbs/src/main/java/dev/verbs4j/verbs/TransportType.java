package dev.verbs4j.verbs;

/**
 * The transport a device implements ({@code enum ibv_transport_type}). Pure value; owns no native memory.
 */
public enum TransportType implements IntCoded {
    /** {@code InfiniBand}. */
    IB(0, "InfiniBand"),
    /** {@code iWARP}. */
    IWARP(1, "iWARP"),
    /** {@code usNIC}. */
    USNIC(2, "usNIC"),
    /** {@code usNIC UDP}. */
    USNIC_UDP(3, "usNIC UDP"),
    /** {@code unspecified}. */
    UNSPECIFIED(4, "unspecified"),
    /** A value this version of verbs4j does not know. */
    UNKNOWN(Integer.MIN_VALUE, "unknown");

    TransportType(int code, String label) {
        IntCoded.define(this, code, label);
    }

    /** The constant for the C value {@code code}, or {@link #UNKNOWN}. */
    public static TransportType of(int code) {
        return IntCoded.of(TransportType.class, code, UNKNOWN);
    }
}
