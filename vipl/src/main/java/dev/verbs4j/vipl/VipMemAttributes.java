package dev.verbs4j.vipl;

/**
 * The attributes of a registered region ({@code VIP_MEM_ATTRIBUTES}, §9.10.6). A value; owns no memory.
 *
 * @param ptag            the region's protection tag: only VIs with the same tag may use it
 * @param enableRdmaWrite whether remote VIs may RDMA-write into the region
 * @param enableRdmaRead  whether remote VIs may RDMA-read from the region
 */
public record VipMemAttributes(VipPtag ptag, boolean enableRdmaWrite, boolean enableRdmaRead) {

    /** Local use only (no RDMA) under {@code ptag}. */
    public static VipMemAttributes of(VipPtag ptag) {
        return new VipMemAttributes(ptag, false, false);
    }
}
