package dev.verbs4j.vipl;

/**
 * The attributes of a VI ({@code VIP_VI_ATTRIBUTES}, §9.10.5): given to VipCreateVi and
 * VipSetViAttributes, returned by VipQueryVi and exchanged while connecting. A value; owns no memory.
 *
 * @param reliabilityLevel the class of service; both ends of a connection must have the same
 * @param maxTransferSize  the largest payload of one descriptor in bytes (≥ 32 KiB, ≤ the NIC's)
 * @param qos              the quality of service: {@code VIP_QOS} is undefined by the specification,
 *                         so only 0 (best effort) is accepted (D9)
 * @param ptag             the VI's protection tag (null in the remote attributes a peer sends)
 * @param enableRdmaWrite  whether the remote end may RDMA-write through this VI
 * @param enableRdmaRead   whether the remote end may RDMA-read through this VI
 */
public record VipViAttributes(VipReliabilityLevel reliabilityLevel, long maxTransferSize, long qos, VipPtag ptag,
                              boolean enableRdmaWrite, boolean enableRdmaRead) {

    /** Reliable Delivery, 32 KiB transfers, best effort, no RDMA enabled, on {@code ptag}. */
    public static VipViAttributes of(VipPtag ptag) {
        return new VipViAttributes(VipReliabilityLevel.RELIABLE_DELIVERY, 32 * 1024, 0, ptag, false, false);
    }

    /** A copy with another reliability level. */
    public VipViAttributes withReliabilityLevel(VipReliabilityLevel level) {
        return new VipViAttributes(level, maxTransferSize, qos, ptag, enableRdmaWrite, enableRdmaRead);
    }

    /** A copy with another maximum transfer size. */
    public VipViAttributes withMaxTransferSize(long size) {
        return new VipViAttributes(reliabilityLevel, size, qos, ptag, enableRdmaWrite, enableRdmaRead);
    }

    /** A copy with another quality of service value. */
    public VipViAttributes withQos(long value) {
        return new VipViAttributes(reliabilityLevel, maxTransferSize, value, ptag, enableRdmaWrite, enableRdmaRead);
    }

    /** A copy with another protection tag. */
    public VipViAttributes withPtag(VipPtag tag) {
        return new VipViAttributes(reliabilityLevel, maxTransferSize, qos, tag, enableRdmaWrite, enableRdmaRead);
    }

    /** A copy with other RDMA enables. */
    public VipViAttributes withRdma(boolean write, boolean read) {
        return new VipViAttributes(reliabilityLevel, maxTransferSize, qos, ptag, write, read);
    }
}
