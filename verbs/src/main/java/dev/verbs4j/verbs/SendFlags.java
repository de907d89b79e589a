package dev.verbs4j.verbs;

/** Send work request flags ({@code enum ibv_send_flags}), combined with {@code |}. Constants only. */
public final class SendFlags {
    /** Wait for earlier RDMA reads and atomics to complete first. */
    public static final int FENCE = 1;
    /** Generate a completion for this work request. */
    public static final int SIGNALED = 1 << 1;
    /** Set the solicited-event indicator at the receiver. */
    public static final int SOLICITED = 1 << 2;
    /** Copy the payload into the work request: the buffers need no memory region. */
    public static final int INLINE = 1 << 3;
    /** Offload the IP checksum. */
    public static final int IP_CSUM = 1 << 4;

    private SendFlags() {
    }
}
