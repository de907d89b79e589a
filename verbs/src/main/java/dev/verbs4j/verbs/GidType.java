package dev.verbs4j.verbs;

/**
 * The type of a GID table entry ({@code enum ibv_gid_type}). Pure value; owns no native memory.
 */
public enum GidType implements IntCoded {
    /** {@code IB}. */
    IB(0, "IB"),
    /** {@code RoCE v1}. */
    ROCE_V1(1, "RoCE v1"),
    /** {@code RoCE v2}. */
    ROCE_V2(2, "RoCE v2"),
    /** A value this version of verbs4j does not know. */
    UNKNOWN(Integer.MIN_VALUE, "unknown");

    GidType(int code, String label) {
        IntCoded.define(this, code, label);
    }

    /** The constant for the C value {@code code}, or {@link #UNKNOWN}. */
    public static GidType of(int code) {
        return IntCoded.of(GidType.class, code, UNKNOWN);
    }
}
