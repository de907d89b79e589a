package dev.verbs4j.vipl;

import dev.verbs4j.verbs.WcStatus;

/**
 * How a verbs completion status becomes the Status error bits of a descriptor (§10.4) for a
 * reliable VI on an RC queue pair, by reliability level, queue and operation; and which
 * asynchronous error goes with it under Reliable Delivery (§2.5.2, §9.9.1).
 */
final class CompletionMapping {

    private CompletionMapping() {
    }

    /** The Status op bits of a completed descriptor. */
    static int opBits(boolean receive, int op, boolean remoteWrite) {
        if (receive) {
            return remoteWrite ? VipStatus.OP_REMOTE_RDMA_WRITE : VipStatus.OP_RECEIVE;
        }
        return switch (op) {
            case VipControl.OP_RDMAWRITE -> VipStatus.OP_RDMA_WRITE;
            case VipControl.OP_RDMAREAD -> VipStatus.OP_RDMA_READ;
            default -> VipStatus.OP_SEND;
        };
    }

    /** The error bits for {@code status} (0 for success). */
    static int errorBits(WcStatus status, VipReliabilityLevel level, boolean receive, int op) {
        boolean rr = level == VipReliabilityLevel.RELIABLE_RECEPTION;
        return switch (status) {
            case SUCCESS -> 0;
            case LOC_LEN_ERR -> VipStatus.LENGTH_ERROR;
            case LOC_QP_OP_ERR -> VipStatus.FORMAT_ERROR;
            case LOC_PROT_ERR, MW_BIND_ERR, LOC_ACCESS_ERR -> VipStatus.PROTECTION_ERROR;
            case WR_FLUSH_ERR -> VipStatus.DESC_FLUSHED_ERROR;
            // A remote access error, or (as rxe reports an RDMA operation the target queue pair does
            // not enable) an invalid request on an RDMA operation: a remote protection error.
            case REM_INV_REQ_ERR -> !receive && op != VipControl.OP_SENDRECV ? errorBits(WcStatus.REM_ACCESS_ERR, level, false, op)
                    : rr && !receive ? VipStatus.REMOTE_DESC_ERROR : VipStatus.TRANSPORT_ERROR;
            case REM_ACCESS_ERR -> receive ? VipStatus.TRANSPORT_ERROR
                    : op == VipControl.OP_RDMAREAD || (rr && op == VipControl.OP_RDMAWRITE) ? VipStatus.RDMA_PROT_ERROR
                    : rr ? VipStatus.REMOTE_DESC_ERROR : VipStatus.TRANSPORT_ERROR;
            case REM_OP_ERR, RNR_RETRY_EXC_ERR ->
                    rr && !receive ? VipStatus.REMOTE_DESC_ERROR : VipStatus.TRANSPORT_ERROR;
            default -> VipStatus.TRANSPORT_ERROR;
        };
    }

    /** The asynchronous error that accompanies {@code status} under Reliable Delivery, or null. */
    static VipErrorCode asyncError(WcStatus status, VipReliabilityLevel level, boolean receive, int op) {
        if (receive || level != VipReliabilityLevel.RELIABLE_DELIVERY) {
            return null;
        }
        return switch (status) {
            case REM_ACCESS_ERR, REM_INV_REQ_ERR -> op == VipControl.OP_RDMAWRITE ? VipErrorCode.RDMAW_PROT
                    : op == VipControl.OP_RDMAREAD ? null : VipErrorCode.CONN_LOST;
            case RNR_RETRY_EXC_ERR -> VipErrorCode.RECVQ_EMPTY;
            case REM_OP_ERR -> op == VipControl.OP_RDMAWRITE ? VipErrorCode.RDMAW_DATA : VipErrorCode.CONN_LOST;
            case RETRY_EXC_ERR, RESP_TIMEOUT_ERR, FATAL_ERR, GENERAL_ERR -> VipErrorCode.CONN_LOST;
            default -> null;
        };
    }
}
