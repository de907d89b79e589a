package dev.verbs4j.vipl;

/** Which kind of object an asynchronous error concerns ({@code VIP_RESOURCE_CODE}, §9.10.3). */
public enum VipResourceCode {
    /** {@code VIP_RESOURCE_NIC}. */
    NIC,
    /** {@code VIP_RESOURCE_VI}. */
    VI,
    /** {@code VIP_RESOURCE_CQ}. */
    CQ,
    /** {@code VIP_RESOURCE_DESCRIPTOR}. */
    DESCRIPTOR
}
