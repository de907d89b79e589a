package dev.verbs4j.verbs;

/** The operation of a send work request ({@code enum ibv_wr_opcode}). Pure value. */
public enum Opcode {
    /** RDMA write. */
    RDMA_WRITE(0),
    /** RDMA write that also consumes a receive at the peer with immediate data. */
    RDMA_WRITE_WITH_IMM(1),
    /** Send. */
    SEND(2),
    /** Send with immediate data. */
    SEND_WITH_IMM(3),
    /** RDMA read. */
    RDMA_READ(4),
    /** Atomic compare and swap of 8 bytes. */
    ATOMIC_CMP_AND_SWP(5),
    /** Atomic fetch and add of 8 bytes. */
    ATOMIC_FETCH_AND_ADD(6),
    /** Local invalidate of a memory window or region key. */
    LOCAL_INV(7),
    /** Bind a type 2 memory window. */
    BIND_MW(8),
    /** Send that invalidates a remote key at the receiver. */
    SEND_WITH_INV(9),
    /** TCP segmentation offload. */
    TSO(10),
    /** Atomic write of 8 bytes. */
    ATOMIC_WRITE(15);

    private static final Opcode[] BY_CODE = new Opcode[16];

    static {
        for (Opcode o : values()) {
            BY_CODE[o.code] = o;
        }
    }

    private final int code;

    Opcode(int code) {
        this.code = code;
    }

    /** The C value. */
    public int code() {
        return code;
    }

    /** The opcode with C value {@code code}, or null when there is none. */
    public static Opcode of(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }
}
