package dev.verbs4j.vipl;

/**
 * The reliability level of a VI ({@code VIP_RELIABILITY_LEVEL}, §2.5, §9.10.5). Decision D6: the
 * specification's enum (ordinals 0, 1, 2) is the value; {@link #mask()} gives the bit of the later
 * VIPL headers (1, 2, 4) for code that speaks that encoding.
 */
public enum VipReliabilityLevel {
    /** {@code VIP_SERVICE_UNRELIABLE}: at most once, no error state (a UC queue pair, D18). */
    UNRELIABLE,
    /** {@code VIP_SERVICE_RELIABLE_DELIVERY}: exactly once, in order; a send completes once transmitted (RC). */
    RELIABLE_DELIVERY,
    /** {@code VIP_SERVICE_RELIABLE_RECEPTION}: a send completes once in target memory (RC). */
    RELIABLE_RECEPTION;

    /** The specification's value (the ordinal). */
    public int code() {
        return ordinal();
    }

    /** The bit of later VIPL headers: 1, 2 or 4. */
    public int mask() {
        return 1 << ordinal();
    }

    /** The level for the specification's value, or null when there is none. */
    static VipReliabilityLevel ofCode(int code) {
        return code >= 0 && code < 3 ? values()[code] : null;
    }
}
