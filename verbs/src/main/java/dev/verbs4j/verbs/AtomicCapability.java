package dev.verbs4j.verbs;

/**
 * How far a device guarantees atomicity of atomic operations ({@code enum ibv_atomic_cap}). Pure value; owns no native memory.
 */
public enum AtomicCapability implements IntCoded {
    /** {@code ATOMIC_NONE}. */
    NONE(0, "ATOMIC_NONE"),
    /** {@code ATOMIC_HCA}. */
    HCA(1, "ATOMIC_HCA"),
    /** {@code ATOMIC_GLOB}. */
    GLOB(2, "ATOMIC_GLOB"),
    /** A value this version of verbs4j does not know. */
    UNKNOWN(Integer.MIN_VALUE, "unknown");

    AtomicCapability(int code, String label) {
        IntCoded.define(this, code, label);
    }

    /** The constant for the C value {@code code}, or {@link #UNKNOWN}. */
    public static AtomicCapability of(int code) {
        return IntCoded.of(AtomicCapability.class, code, UNKNOWN);
    }
}
