package dev.verbs4j.vipl;

/**
 * The checks a descriptor passes before it is translated into a work request (§6.1, §10): format
 * (reserved bits and words, operation, queue, segment count), length (Σ segments, MaxTransferSize)
 * and protection (every data segment inside a registered region of the VI's tag). Returns Status
 * error bits, 0 when the descriptor may be posted.
 */
final class DescriptorCheck {

    private DescriptorCheck() {
    }

    /** The first data segment's slot: 1 for RDMA (after the address segment), else 0. */
    static int firstData(int op) {
        return op == VipControl.OP_SENDRECV ? 0 : 1;
    }

    /** Format and length checks that need only the descriptor; records op and Σ lengths in {@code p}. */
    static int format(VipDescriptor d, Posted p, boolean receive, VipViAttributes attrs, int maxSge) {
        int control = d.control();
        int op = control & VipControl.OP_MASK;
        p.op = op == 3 ? VipControl.OP_SENDRECV : op;
        if ((control & VipControl.RESERVED) != 0 || op == 3 || d.reserved() != 0) {
            return VipStatus.FORMAT_ERROR;
        }
        if (receive && op != VipControl.OP_SENDRECV) {
            return VipStatus.FORMAT_ERROR;
        }
        if (op == VipControl.OP_RDMAREAD && attrs.reliabilityLevel() == VipReliabilityLevel.UNRELIABLE) {
            return VipStatus.FORMAT_ERROR;
        }
        int segCount = d.segCount();
        int first = firstData(op);
        if (segCount < first || segCount > d.capacity() || segCount - first > maxSge) {
            return VipStatus.FORMAT_ERROR;
        }
        if (op != VipControl.OP_SENDRECV && d.segmentLength(0) != 0) {
            return VipStatus.FORMAT_ERROR;
        }
        long sum = 0;
        for (int i = first; i < segCount; i++) {
            sum += Integer.toUnsignedLong(d.segmentLength(i));
        }
        p.dataLength = sum;
        if (!receive && (sum != Integer.toUnsignedLong(d.length()) || sum > attrs.maxTransferSize())) {
            return VipStatus.LENGTH_ERROR;
        }
        return 0;
    }

    /**
     * Protection: every data segment lies in a live region of {@code nic} under the VI's tag (a
     * region its RdmaArena's close deregistered is not live).
     */
    static int protection(VipDescriptor d, Posted p, VipNic nic, VipPtag ptag) {
        int first = firstData(p.op);
        for (int i = first; i < d.segCount(); i++) {
            VipMemHandle m = nic.regions.get(d.segmentHandle(i));
            long length = Integer.toUnsignedLong(d.segmentLength(i));
            if (m == null || m.invalid() || m.attributes.ptag() != ptag || !m.covers(d.segmentData(i), length)) {
                return VipStatus.PROTECTION_ERROR;
            }
        }
        return 0;
    }
}
