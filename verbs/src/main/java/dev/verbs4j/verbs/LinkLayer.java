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

    private final int code;
    private final String label;

    LinkLayer(int code, String label) {
        this.code = code;
        this.label = label;
    }

    /** The C value. */
    @Override
    public int code() {
        return code;
    }

    /** The name the rdma-core tools print for it. */
    @Override
    public String label() {
        return label;
    }

    /** The constant for the C value {@code code}, or {@link #UNKNOWN}. */
    public static LinkLayer of(int code) {
        return IntCoded.of(LinkLayer.class, code, UNKNOWN);
    }
}
