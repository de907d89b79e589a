package dev.verbs4j.vipl;

/**
 * The bits of a descriptor's 16-bit {@code Control} field (§10.2): the operation in bits 1:0, the
 * immediate-data and queue-fence flags; bits 15:4 are reserved and must be zero (else a format
 * error). Constants only.
 */
public final class VipControl {

    /** {@code VIP_CONTROL_OP_SENDRECV}: a Send on the send queue, a Receive on the receive queue. */
    public static final int OP_SENDRECV = 0x0;
    /** {@code VIP_CONTROL_OP_RDMAWRITE}: an RDMA Write (send queue only). */
    public static final int OP_RDMAWRITE = 0x1;
    /** {@code VIP_CONTROL_OP_RDMAREAD}: an RDMA Read (send queue only; reliable VIs only). */
    public static final int OP_RDMAREAD = 0x2;
    /** {@code VIP_CONTROL_OP_MASK}: the operation bits; 11b is undefined (a format error). */
    public static final int OP_MASK = 0x3;
    /** {@code VIP_CONTROL_IMMEDIATE}: ImmediateData is valid (Send, RDMA Write; ignored on Read and Receive). */
    public static final int IMMEDIATE = 0x4;
    /** {@code VIP_CONTROL_QFENCE}: start only after the earlier RDMA Reads of the queue completed (D4). */
    public static final int QFENCE = 0x8;
    /** {@code VIP_CONTROL_RESERVED}: bits that must be zero. */
    public static final int RESERVED = 0xFFF0;

    private VipControl() {
    }
}
