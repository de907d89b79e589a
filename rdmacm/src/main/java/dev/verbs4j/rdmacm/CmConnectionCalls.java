package dev.verbs4j.rdmacm;

import dev.verbs4j.bindings.rdma_conn_param;
import dev.verbs4j.rdmacm.internal.Cma;
import dev.verbs4j.verbs.QpType;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The connection calls of a {@link CmId}: connect, accept, reject, disconnect, notify and
 * establish, with the {@code struct rdma_conn_param} they pass. Each call that works on the
 * queue pair holds it ({@link CmQueuePair#reading}). Stateless; owns no native memory: the
 * parameters are written to a confined arena per call.
 */
final class CmConnectionCalls {

    private static final int IBV_EVENT_COMM_EST = 3;

    private CmConnectionCalls() {
    }

    /** {@link CmId#connect}. */
    static void connect(CmId owner, MemorySegment id, ConnectionParameters parameters) {
        owner.outcomes().operate("rdma_connect", owner.describe(), () -> owner.queuePairPart().reading(() -> { // reads id->qp
            try (Arena arena = Arena.ofConfined()) {
                Cma.call(Cma.CONNECT, "rdma_connect", owner.describe(), id, write(arena, parameters));
            }
        }), CmOutcomes.CONNECTED);
    }

    /** {@link CmId#accept}. */
    static void accept(CmId owner, MemorySegment id, ConnectionParameters parameters) {
        // librdmacm waits for no outcome of a UD accept
        boolean ud = owner.qpTypeCode() == QpType.UD.code();
        owner.outcomes().operate("rdma_accept", owner.describe(), () -> owner.queuePairPart().reading(() -> { // to RTR and RTS
            try (Arena arena = Arena.ofConfined()) {
                Cma.call(Cma.ACCEPT, "rdma_accept", owner.describe(), id, write(arena, parameters));
            }
        }), ud ? null : CmOutcomes.ESTABLISHED);
    }

    /** {@link CmId#reject}. */
    static void reject(CmId owner, MemorySegment id, byte[] privateData) {
        byte[] data = privateData == null ? new byte[0] : privateData;
        if (data.length > 255) {
            throw new IllegalArgumentException("reject private data of " + data.length + " bytes: at most 255");
        }
        owner.held(() -> {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment p = data.length == 0 ? MemorySegment.NULL : arena.allocateFrom(ValueLayout.JAVA_BYTE, data);
                Cma.call(Cma.REJECT, "rdma_reject", owner.describe(), id, p, (byte) data.length);
            }
        });
    }

    /** {@link CmId#disconnect}. */
    static void disconnect(CmId owner, MemorySegment id) {
        owner.outcomes().operate("rdma_disconnect", owner.describe(), () -> owner.queuePairPart().reading(() -> // to ERR
                Cma.call(Cma.DISCONNECT, "rdma_disconnect", owner.describe(), id)), CmOutcomes.DISCONNECTED);
    }

    /** {@link CmId#notifyEstablished}. */
    static void notifyEstablished(CmId owner, MemorySegment id) {
        owner.held(() -> Cma.call(Cma.NOTIFY, "rdma_notify", owner.describe(), id, IBV_EVENT_COMM_EST));
    }

    /** {@link CmId#establish}. */
    static void establish(CmId owner, MemorySegment id) {
        // checks id->qp
        owner.held(() -> owner.queuePairPart().reading(() -> Cma.call(Cma.ESTABLISH, "rdma_establish", owner.describe(), id)));
    }

    /** The native {@code struct rdma_conn_param} of {@code p} in {@code arena}, or NULL for none. */
    static MemorySegment write(Arena arena, ConnectionParameters p) {
        if (p == null) {
            return MemorySegment.NULL;
        }
        MemorySegment c = arena.allocate(rdma_conn_param.layout());
        byte[] data = p.privateData();
        if (data.length > 0) {
            rdma_conn_param.private_data(c, arena.allocateFrom(ValueLayout.JAVA_BYTE, data));
            rdma_conn_param.private_data_len(c, (byte) data.length);
        }
        rdma_conn_param.responder_resources(c, (byte) p.responderResources());
        rdma_conn_param.initiator_depth(c, (byte) p.initiatorDepth());
        rdma_conn_param.flow_control(c, (byte) (p.flowControl() ? 1 : 0));
        rdma_conn_param.retry_count(c, (byte) p.retryCount());
        rdma_conn_param.rnr_retry_count(c, (byte) p.rnrRetryCount());
        rdma_conn_param.srq(c, (byte) (p.srq() ? 1 : 0));
        rdma_conn_param.qp_num(c, p.qpNum());
        return c;
    }
}
