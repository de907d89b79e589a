package dev.verbs4j.verbs;

import java.util.Objects;

/**
 * What a new queue pair needs ({@code struct ibv_qp_init_attr}): its type, completion queues and
 * capacities. A mutable builder on the Java heap; owns no native memory.
 */
public final class QueuePairInit {

    private final QpType type;
    private final CompletionQueue sendCq;
    private final CompletionQueue recvCq;
    private int maxSendWr = 16;
    private int maxRecvWr = 16;
    private int maxSendSge = 1;
    private int maxRecvSge = 1;
    private int maxInlineData;
    private boolean signalAll;
    private SharedReceiveQueue srq;
    private long sendOps;

    private QueuePairInit(QpType type, CompletionQueue sendCq, CompletionQueue recvCq) {
        this.type = Objects.requireNonNull(type, "type");
        if (type == QpType.XRC_RECV) {
            throw new IllegalArgumentException("XRC receive queue pairs have no completion queues and belong to an XRC"
                    + " domain: create them with XrcDomain.createReceiveQueuePair()");
        }
        this.sendCq = Objects.requireNonNull(sendCq, "sendCq");
        this.recvCq = Objects.requireNonNull(recvCq, "recvCq");
    }

    /**
     * A queue pair of {@code type} completing sends on {@code sendCq} and receives on {@code
     * recvCq}. An {@link QpType#XRC_SEND} queue pair has no receive side: {@code recvCq} and the
     * receive capacities are not used.
     *
     * @throws IllegalArgumentException for {@link QpType#XRC_RECV}, which {@link
     *                                  XrcDomain#createReceiveQueuePair()} creates
     */
    public static QueuePairInit of(QpType type, CompletionQueue sendCq, CompletionQueue recvCq) {
        return new QueuePairInit(type, sendCq, recvCq);
    }

    /**
     * A queue pair of {@code type} with one completion queue for both directions.
     *
     * @throws IllegalArgumentException for {@link QpType#XRC_RECV}, which {@link
     *                                  XrcDomain#createReceiveQueuePair()} creates
     */
    public static QueuePairInit of(QpType type, CompletionQueue cq) {
        return new QueuePairInit(type, cq, cq);
    }

    /** Outstanding send work requests (default 16). */
    public QueuePairInit maxSendWr(int n) {
        this.maxSendWr = positive(n, "maxSendWr");
        return this;
    }

    /** Outstanding receive work requests (default 16). */
    public QueuePairInit maxRecvWr(int n) {
        this.maxRecvWr = positive(n, "maxRecvWr");
        return this;
    }

    /** Scatter/gather entries per send (default 1). */
    public QueuePairInit maxSendSge(int n) {
        this.maxSendSge = positive(n, "maxSendSge");
        return this;
    }

    /** Scatter entries per receive (default 1). */
    public QueuePairInit maxRecvSge(int n) {
        this.maxRecvSge = positive(n, "maxRecvSge");
        return this;
    }

    /** Bytes that can be sent INLINE (default 0). */
    public QueuePairInit maxInlineData(int n) {
        if (n < 0) {
            throw new IllegalArgumentException("maxInlineData must not be negative, got " + n);
        }
        this.maxInlineData = n;
        return this;
    }

    /** Whether every send completes with a work completion, SIGNALED or not (default false). */
    public QueuePairInit signalAll(boolean all) {
        this.signalAll = all;
        return this;
    }

    /** Takes receive buffers from {@code queue} instead of the QP's own receive queue. */
    public QueuePairInit sharedReceiveQueue(SharedReceiveQueue queue) {
        this.srq = queue;
        return this;
    }

    /**
     * Creates the queue pair for the extended send API ({@code ibv_create_qp_ex()} with these
     * {@link SendOps}), reached through {@link QueuePair#extended()}.
     */
    public QueuePairInit sendOps(long ops) {
        this.sendOps = ops;
        return this;
    }

    private static int positive(int n, String what) {
        if (n < 1) {
            throw new IllegalArgumentException(what + " must be at least 1, got " + n);
        }
        return n;
    }

    QpType type() {
        return type;
    }

    CompletionQueue sendCq() {
        return sendCq;
    }

    CompletionQueue recvCq() {
        return recvCq;
    }

    int maxSendWr() {
        return maxSendWr;
    }

    int maxRecvWr() {
        return maxRecvWr;
    }

    int maxSendSge() {
        return maxSendSge;
    }

    int maxRecvSge() {
        return maxRecvSge;
    }

    int maxInlineData() {
        return maxInlineData;
    }

    SharedReceiveQueue srq() {
        return srq;
    }

    long sendOps() {
        return sendOps;
    }

    boolean signalAll() {
        return signalAll;
    }
}
