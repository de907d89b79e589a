package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_wc;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A view of one {@code struct ibv_wc} inside {@link WorkCompletions}: a flyweight that reads the
 * native fields in place. Owns no memory; valid until the next poll into the same array.
 */
public final class WorkCompletion {

    private static final long SIZE = ibv_wc.sizeof();
    private static final long WR_ID = ibv_wc.wr_id$offset();
    private static final long STATUS = ibv_wc.status$offset();
    private static final long OPCODE = ibv_wc.opcode$offset();
    private static final long VENDOR_ERR = ibv_wc.vendor_err$offset();
    private static final long BYTE_LEN = ibv_wc.byte_len$offset();
    private static final long IMM_DATA = ibv_wc.imm_data$offset();
    private static final long QP_NUM = ibv_wc.qp_num$offset();
    private static final long SRC_QP = ibv_wc.src_qp$offset();
    private static final long WC_FLAGS = ibv_wc.wc_flags$offset();
    private static final long PKEY_INDEX = ibv_wc.pkey_index$offset();
    private static final long SLID = ibv_wc.slid$offset();
    private static final long SL = ibv_wc.sl$offset();

    /** {@code IBV_WC_GRH}: a GRH is in the first 40 bytes of the receive buffer. */
    public static final int FLAG_GRH = 1;
    /** {@code IBV_WC_WITH_IMM}: immediate data is valid. */
    public static final int FLAG_WITH_IMM = 1 << 1;
    /** {@code IBV_WC_IP_CSUM_OK}. */
    public static final int FLAG_IP_CSUM_OK = 1 << 2;
    /** {@code IBV_WC_WITH_INV}: a remote key was invalidated. */
    public static final int FLAG_WITH_INV = 1 << 3;

    private final MemorySegment array;
    private long base;

    WorkCompletion(MemorySegment array) {
        this.array = array;
    }

    WorkCompletion moveTo(int index) {
        base = index * SIZE;
        return this;
    }

    /** The work request id the application gave the work request. */
    public long wrId() {
        return array.get(ValueLayout.JAVA_LONG, base + WR_ID);
    }

    /** The status. */
    public WcStatus status() {
        return WcStatus.of(statusCode());
    }

    /** The status as the C value. */
    public int statusCode() {
        return array.get(ValueLayout.JAVA_INT, base + STATUS);
    }

    /** Whether the work request succeeded. */
    public boolean isSuccess() {
        return statusCode() == 0;
    }

    /** The operation (valid only when successful, as in C). */
    public WcOpcode opcode() {
        return WcOpcode.of(array.get(ValueLayout.JAVA_INT, base + OPCODE));
    }

    /** The vendor's error syndrome. */
    public int vendorError() {
        return array.get(ValueLayout.JAVA_INT, base + VENDOR_ERR);
    }

    /** Bytes transferred (receives, RDMA reads, atomics). */
    public int byteLength() {
        return array.get(ValueLayout.JAVA_INT, base + BYTE_LEN);
    }

    /** Immediate data in host byte order (valid with {@link #FLAG_WITH_IMM}). */
    public int immediateData() {
        return Integer.reverseBytes(array.get(ValueLayout.JAVA_INT, base + IMM_DATA));
    }

    /** The invalidated remote key (valid with {@link #FLAG_WITH_INV}). */
    public int invalidatedRkey() {
        return array.get(ValueLayout.JAVA_INT, base + IMM_DATA);
    }

    /** The local QP number that completed. */
    public int qpNum() {
        return array.get(ValueLayout.JAVA_INT, base + QP_NUM);
    }

    /** The remote QP number (UD receives). */
    public int srcQp() {
        return array.get(ValueLayout.JAVA_INT, base + SRC_QP);
    }

    /** {@code IBV_WC_*} flags. */
    public int flags() {
        return array.get(ValueLayout.JAVA_INT, base + WC_FLAGS);
    }

    /** The P_Key index (GSI QPs). */
    public int pkeyIndex() {
        return Short.toUnsignedInt(array.get(ValueLayout.JAVA_SHORT, base + PKEY_INDEX));
    }

    /** The source LID (UD receives). */
    public int slid() {
        return Short.toUnsignedInt(array.get(ValueLayout.JAVA_SHORT, base + SLID));
    }

    /** The service level (UD receives). */
    public int serviceLevel() {
        return Byte.toUnsignedInt(array.get(ValueLayout.JAVA_BYTE, base + SL));
    }

    MemorySegment nativeEntry() {
        return array.asSlice(base, SIZE);
    }

    @Override
    public String toString() {
        return "WorkCompletion[wrId=" + wrId() + ", status=" + status() + ", opcode=" + opcode()
                + ", byteLength=" + byteLength() + ", qpNum=" + qpNum() + "]";
    }
}
