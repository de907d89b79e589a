package dev.verbs4j.verbs;

/**
 * A path MTU ({@code enum ibv_mtu}). Pure value; owns no native memory.
 */
public enum Mtu implements IntCoded {
    /** {@code 256}. */
    MTU_256(1, "256"),
    /** {@code 512}. */
    MTU_512(2, "512"),
    /** {@code 1024}. */
    MTU_1024(3, "1024"),
    /** {@code 2048}. */
    MTU_2048(4, "2048"),
    /** {@code 4096}. */
    MTU_4096(5, "4096"),
    /** A value this version of verbs4j does not know. */
    UNKNOWN(Integer.MIN_VALUE, "unknown");

    Mtu(int code, String label) {
        IntCoded.define(this, code, label);
    }

    /** The constant for the C value {@code code}, or {@link #UNKNOWN}. */
    public static Mtu of(int code) {
        return IntCoded.of(Mtu.class, code, UNKNOWN);
    }
}
