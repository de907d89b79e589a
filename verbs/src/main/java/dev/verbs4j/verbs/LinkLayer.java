package dev.verbs4j.verbs;

/**
 * The link layer under a port ({@code IBV_LINK_LAYER_*}). Pure value; owns no native memory.
 */
public enum LinkLayer implements IntCoded {
    /** {@code Unspecified}. */
    UNSPECIFIED(0, "Unspecified"),
    /** {@code InfiniBand}. */
    INFINIBAND(1, "InfiniBand"),
    /** {@code Ethernet}. */
    ETHERNET(2, "Ethernet"),
    /** A value this version of verbs4j does not know. */
    UNKNOWN(Integer.MIN_VALUE, "unknown");

    LinkLayer(int code, String label) {
        IntCoded.define(this, code, label);
    }

    /** The constant for the C value {@code code}, or {@link #UNKNOWN}. */
    public static LinkLayer of(int code) {
        return IntCoded.of(LinkLayer.class, code, UNKNOWN);
    }
}
