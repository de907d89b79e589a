package dev.verbs4j.vipl;

/**
 * The bits of a descriptor's 32-bit {@code Status} field (§10.4), written by the provider when the
 * descriptor completes, Done last: bit 0 Done, bits 1–8 the errors, bits 18:16 the completed
 * operation, bit 19 immediate data present. Constants and decoding helpers only.
 */
public final class VipStatus {

    /** {@code VIP_STATUS_DONE}: the descriptor completed (successfully if no error bit is set). */
    public static final int DONE = 0x1;
    /** {@code VIP_STATUS_FORMAT_ERROR}: bad opcode, reserved bits, RDMA on the receive queue, … */
    public static final int FORMAT_ERROR = 0x2;
    /** {@code VIP_STATUS_PROTECTION_ERROR}: a data segment not valid for the VI (handle, address, Ptag, rights). */
    public static final int PROTECTION_ERROR = 0x4;
    /** {@code VIP_STATUS_LENGTH_ERROR}: Length ≠ Σ segments, above MaxTransferSize, or a receive too small. */
    public static final int LENGTH_ERROR = 0x8;
    /** {@code VIP_STATUS_PARTIAL_ERROR}: part of the data went out before another error. */
    public static final int PARTIAL_ERROR = 0x10;
    /** {@code VIP_STATUS_DESC_FLUSHED_ERROR}: flushed because the VI was disconnected or not connected. */
    public static final int DESC_FLUSHED_ERROR = 0x20;
    /** {@code VIP_STATUS_TRANSPORT_ERROR}: an unrecoverable transport error; the VI is in the Error state. */
    public static final int TRANSPORT_ERROR = 0x40;
    /** {@code VIP_STATUS_RDMA_PROT_ERROR}: a protection error at the remote end of an RDMA operation. */
    public static final int RDMA_PROT_ERROR = 0x80;
    /** {@code VIP_STATUS_REMOTE_DESC_ERROR}: the remote receive descriptor failed or was missing (RR only). */
    public static final int REMOTE_DESC_ERROR = 0x100;
    /** {@code VIP_STATUS_ERROR_MASK}: bits 1–8. */
    public static final int ERROR_MASK = 0x1FE;
    /** {@code VIP_STATUS_OP_MASK}: the completed operation. */
    public static final int OP_MASK = 0x70000;
    /** {@code VIP_STATUS_OP_SEND}. */
    public static final int OP_SEND = 0x00000;
    /** {@code VIP_STATUS_OP_RECEIVE}. */
    public static final int OP_RECEIVE = 0x10000;
    /** {@code VIP_STATUS_OP_RDMA_WRITE}. */
    public static final int OP_RDMA_WRITE = 0x20000;
    /** {@code VIP_STATUS_OP_REMOTE_RDMA_WRITE}: a receive consumed by a remote RDMA Write with immediate data. */
    public static final int OP_REMOTE_RDMA_WRITE = 0x30000;
    /** {@code VIP_STATUS_OP_RDMA_READ}. */
    public static final int OP_RDMA_READ = 0x40000;
    /** {@code VIP_STATUS_IMMEDIATE}: ImmediateData is valid (receive queue descriptors). */
    public static final int IMMEDIATE = 0x80000;
    /** {@code VIP_STATUS_RESERVED}: bits that are always zero. */
    public static final int RESERVED = 0xFFF0FE00;

    private VipStatus() {
    }

    /** Whether {@code status} has the Done bit. */
    public static boolean isDone(int status) {
        return (status & DONE) != 0;
    }

    /** Whether {@code status} is Done without any error bit. */
    public static boolean isSuccess(int status) {
        return (status & DONE) != 0 && (status & ERROR_MASK) == 0;
    }

    /** A readable form, e.g. {@code DONE|OP_RECEIVE|IMMEDIATE}. */
    public static String describe(int status) {
        StringBuilder b = new StringBuilder((status & DONE) != 0 ? "DONE" : "NOT_DONE");
        String[] errors = {"FORMAT_ERROR", "PROTECTION_ERROR", "LENGTH_ERROR", "PARTIAL_ERROR", "DESC_FLUSHED_ERROR",
                "TRANSPORT_ERROR", "RDMA_PROT_ERROR", "REMOTE_DESC_ERROR"};
        for (int i = 0; i < errors.length; i++) {
            if ((status & (2 << i)) != 0) {
                b.append('|').append(errors[i]);
            }
        }
        b.append(switch (status & OP_MASK) {
            case OP_SEND -> "|OP_SEND";
            case OP_RECEIVE -> "|OP_RECEIVE";
            case OP_RDMA_WRITE -> "|OP_RDMA_WRITE";
            case OP_REMOTE_RDMA_WRITE -> "|OP_REMOTE_RDMA_WRITE";
            case OP_RDMA_READ -> "|OP_RDMA_READ";
            default -> "|OP_0x" + Integer.toHexString(status & OP_MASK);
        });
        if ((status & IMMEDIATE) != 0) {
            b.append("|IMMEDIATE");
        }
        return b.toString();
    }
}
