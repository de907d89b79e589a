package dev.verbs4j.rdmacm;

import dev.verbs4j.bindings.ibv_qp_attr;
import dev.verbs4j.rdmacm.internal.Cma;
import dev.verbs4j.verbs.Mtu;
import dev.verbs4j.verbs.QpState;
import dev.verbs4j.verbs.QueuePairAttributes;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The attributes {@code rdma_init_qp_attr} gives for a queue pair the application created
 * itself, read from the native {@code struct ibv_qp_attr} and its mask into a verbs {@link
 * QueuePairAttributes}. Stateless; the native attributes live in a confined arena per call.
 */
final class CmQpAttributes {

    /** The mask bits this layer carries; any other set by librdmacm is an error. */
    private static final int KNOWN = 1 | 1 << 3 | 1 << 4 | 1 << 5 | 1 << 6 | 1 << 7 | 1 << 8 | 1 << 9 | 1 << 10 | 1 << 11
            | 1 << 12 | 1 << 13 | 1 << 15 | 1 << 16 | 1 << 17 | 1 << 20;

    private CmQpAttributes() {
    }

    /** {@link CmId#initQueuePairAttributes}: the caller checked {@code target}. */
    static QueuePairAttributes of(CmId owner, MemorySegment id, QpState target) {
        return owner.heldFor(() -> {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment attr = arena.allocate(ibv_qp_attr.layout());
                MemorySegment mask = arena.allocate(ValueLayout.JAVA_INT);
                ibv_qp_attr.qp_state(attr, target.code());
                Cma.call(Cma.INIT_QP_ATTR, "rdma_init_qp_attr", owner.describe() + " for " + target, id, attr, mask);
                return read(attr, mask.get(ValueLayout.JAVA_INT, 0));
            }
        });
    }

    private static QueuePairAttributes read(MemorySegment attr, int mask) {
        QueuePairAttributes a = new QueuePairAttributes();
        if ((mask & 1) != 0) {
            a.state(QpState.of(ibv_qp_attr.qp_state(attr)));
        }
        if ((mask & 1 << 3) != 0) {
            a.accessFlags(ibv_qp_attr.qp_access_flags(attr));
        }
        if ((mask & 1 << 4) != 0) {
            a.pkeyIndex(Short.toUnsignedInt(ibv_qp_attr.pkey_index(attr)));
        }
        if ((mask & 1 << 5) != 0) {
            a.port(Byte.toUnsignedInt(ibv_qp_attr.port_num(attr)));
        }
        if ((mask & 1 << 6) != 0) {
            a.qkey(ibv_qp_attr.qkey(attr));
        }
        if ((mask & 1 << 7) != 0) {
            a.addressVector(EventChannel.addressVector(ibv_qp_attr.ah_attr(attr)));
        }
        if ((mask & 1 << 8) != 0) {
            a.pathMtu(Mtu.of(ibv_qp_attr.path_mtu(attr)));
        }
        if ((mask & 1 << 9) != 0) {
            a.timeout(Byte.toUnsignedInt(ibv_qp_attr.timeout(attr)));
        }
        if ((mask & 1 << 10) != 0) {
            a.retryCount(Byte.toUnsignedInt(ibv_qp_attr.retry_cnt(attr)));
        }
        if ((mask & 1 << 11) != 0) {
            a.rnrRetry(Byte.toUnsignedInt(ibv_qp_attr.rnr_retry(attr)));
        }
        if ((mask & 1 << 12) != 0) {
            a.rqPsn(ibv_qp_attr.rq_psn(attr));
        }
        if ((mask & 1 << 13) != 0) {
            a.maxRdAtomic(Byte.toUnsignedInt(ibv_qp_attr.max_rd_atomic(attr)));
        }
        if ((mask & 1 << 15) != 0) {
            a.minRnrTimer(Byte.toUnsignedInt(ibv_qp_attr.min_rnr_timer(attr)));
        }
        if ((mask & 1 << 16) != 0) {
            a.sqPsn(ibv_qp_attr.sq_psn(attr));
        }
        if ((mask & 1 << 17) != 0) {
            a.maxDestRdAtomic(Byte.toUnsignedInt(ibv_qp_attr.max_dest_rd_atomic(attr)));
        }
        if ((mask & 1 << 20) != 0) {
            a.destQpn(ibv_qp_attr.dest_qp_num(attr));
        }
        if ((mask & ~KNOWN) != 0) {
            throw new IllegalStateException("rdma_init_qp_attr set attributes this layer does not carry: mask 0x"
                    + Integer.toHexString(mask & ~KNOWN));
        }
        return a;
    }
}
