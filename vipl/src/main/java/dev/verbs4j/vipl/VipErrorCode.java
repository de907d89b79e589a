package dev.verbs4j.vipl;

/** The asynchronous error codes ({@code VIP_ERROR_CODE}, §9.10.3), ordinals as the C enum. */
public enum VipErrorCode {
    /** {@code VIP_ERROR_POST_DESC}: the descriptor's address or memory handle was invalid when posted. */
    POST_DESC,
    /** {@code VIP_ERROR_CONN_LOST}: the connection was lost; the VI is in the Error state. */
    CONN_LOST,
    /** {@code VIP_ERROR_RECVQ_EMPTY}: a message found no posted receive. */
    RECVQ_EMPTY,
    /** {@code VIP_ERROR_VI_OVERRUN}: more descriptors were posted than the work queue holds. */
    VI_OVERRUN,
    /** {@code VIP_ERROR_RDMAW_PROT}: a protection error at the remote end of an RDMA Write. */
    RDMAW_PROT,
    /** {@code VIP_ERROR_RDMAW_DATA}: data corruption at the remote end of an RDMA Write. */
    RDMAW_DATA,
    /** {@code VIP_ERROR_RDMAW_ABORT}: a partial packet at the remote end of an RDMA Write. */
    RDMAW_ABORT,
    /** {@code VIP_ERROR_RDMAR_PROT}: a protection error at the remote end of an RDMA Read. */
    RDMAR_PROT,
    /** {@code VIP_ERROR_COMP_PROT}: the descriptor's memory was deregistered before its status was written. */
    COMP_PROT
}
