package dev.verbs4j.verbs;

/**
 * The kind of RDMA node a device is ({@code enum ibv_node_type}). Pure value; owns no native memory.
 */
public enum NodeType implements IntCoded {
    /** {@code CA}. */
    CA(1, "CA"),
    /** {@code SWITCH}. */
    SWITCH(2, "SWITCH"),
    /** {@code ROUTER}. */
    ROUTER(3, "ROUTER"),
    /** {@code RNIC}. */
    RNIC(4, "RNIC"),
    /** {@code USNIC}. */
    USNIC(5, "USNIC"),
    /** {@code USNIC_UDP}. */
    USNIC_UDP(6, "USNIC_UDP"),
    /** {@code UNSPECIFIED}. */
    UNSPECIFIED(7, "UNSPECIFIED"),
    /** A value this version of verbs4j does not know. */
    UNKNOWN(Integer.MIN_VALUE, "unknown");

    NodeType(int code, String label) {
        IntCoded.define(this, code, label);
    }

    /** The constant for the C value {@code code}, or {@link #UNKNOWN}. */
    public static NodeType of(int code) {
        return IntCoded.of(NodeType.class, code, UNKNOWN);
    }
}
