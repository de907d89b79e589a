package dev.verbs4j.verbs;

/**
 * The operations a queue pair created for the extended send API may use ({@code enum
 * ibv_qp_create_send_ops_flags}), combined with {@code |}; see {@link QueuePairInit#sendOps}.
 * Constants only.
 */
public final class SendOps {
    /** RDMA write. */
    public static final long RDMA_WRITE = 1;
    /** RDMA write with immediate. */
    public static final long RDMA_WRITE_WITH_IMM = 1 << 1;
    /** Send. */
    public static final long SEND = 1 << 2;
    /** Send with immediate. */
    public static final long SEND_WITH_IMM = 1 << 3;
    /** RDMA read. */
    public static final long RDMA_READ = 1 << 4;
    /** Atomic compare and swap. */
    public static final long ATOMIC_CMP_AND_SWP = 1 << 5;
    /** Atomic fetch and add. */
    public static final long ATOMIC_FETCH_AND_ADD = 1 << 6;
    /** Local invalidate. */
    public static final long LOCAL_INV = 1 << 7;
    /** Memory window bind. */
    public static final long BIND_MW = 1 << 8;
    /** Send with invalidate. */
    public static final long SEND_WITH_INV = 1 << 9;

    private SendOps() {
    }
}
