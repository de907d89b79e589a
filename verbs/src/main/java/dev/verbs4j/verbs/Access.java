package dev.verbs4j.verbs;

/**
 * Memory access flags ({@code enum ibv_access_flags}) for memory regions, memory windows and queue
 * pairs, combined with {@code |}. Constants only.
 */
public final class Access {
    /** Local write access ({@code IBV_ACCESS_LOCAL_WRITE}); needed by every remote write or atomic. */
    public static final int LOCAL_WRITE = 1;
    /** Remote write access. */
    public static final int REMOTE_WRITE = 1 << 1;
    /** Remote read access. */
    public static final int REMOTE_READ = 1 << 2;
    /** Remote atomic access. */
    public static final int REMOTE_ATOMIC = 1 << 3;
    /** Memory windows may be bound to the region. */
    public static final int MW_BIND = 1 << 4;
    /** Zero-based addressing: remote addresses are offsets into the region. */
    public static final int ZERO_BASED = 1 << 5;
    /** On-demand paging. */
    public static final int ON_DEMAND = 1 << 6;
    /** The memory is backed by huge pages. */
    public static final int HUGETLB = 1 << 7;
    /** Relaxed ordering may be used (an optional flag: ignored where unsupported). */
    public static final int RELAXED_ORDERING = 1 << 20;
    /** The range of optional flags ({@code IBV_ACCESS_OPTIONAL_RANGE}). */
    public static final int OPTIONAL_RANGE = 0x3ff00000;

    private Access() {
    }
}
