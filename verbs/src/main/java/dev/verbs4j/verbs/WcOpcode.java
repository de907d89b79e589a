package dev.verbs4j.verbs;

/** The operation a work completion reports ({@code enum ibv_wc_opcode}). Pure value. */
public enum WcOpcode {
    /** A send completed. */
    SEND(0),
    /** An RDMA write completed. */
    RDMA_WRITE(1),
    /** An RDMA read completed. */
    RDMA_READ(2),
    /** A compare and swap completed. */
    COMP_SWAP(3),
    /** A fetch and add completed. */
    FETCH_ADD(4),
    /** A memory window bind completed. */
    BIND_MW(5),
    /** A local invalidate completed. */
    LOCAL_INV(6),
    /** A TSO send completed. */
    TSO(7),
    /** An atomic write completed. */
    ATOMIC_WRITE(9),
    /** A receive completed. */
    RECV(128),
    /** A receive consumed by an RDMA write with immediate completed. */
    RECV_RDMA_WITH_IMM(129),
    /** A value this version does not know. */
    UNKNOWN(-1);

    private static final WcOpcode[] LOW = new WcOpcode[10];

    static {
        for (WcOpcode o : values()) {
            if (o.code >= 0 && o.code < LOW.length) {
                LOW[o.code] = o;
            }
        }
    }

    private final int code;

    WcOpcode(int code) {
        this.code = code;
    }

    /** The C value. */
    public int code() {
        return code;
    }

    /** The opcode with C value {@code code}, or {@link #UNKNOWN}. */
    public static WcOpcode of(int code) {
        if (code >= 0 && code < LOW.length && LOW[code] != null) {
            return LOW[code];
        }
        return code == 128 ? RECV : code == 129 ? RECV_RDMA_WITH_IMM : UNKNOWN;
    }
}
