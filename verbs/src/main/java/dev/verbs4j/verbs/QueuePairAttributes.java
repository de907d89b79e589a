package dev.verbs4j.verbs;

import dev.verbs4j.bindings.ibv_qp_attr;

import java.lang.foreign.MemorySegment;

/**
 * The attributes of one {@code ibv_modify_qp()} call ({@code struct ibv_qp_attr} plus its
 * attribute mask): each setter sets a value and its mask bit. A mutable builder on the Java heap;
 * owns no native memory. {@link QueuePair}'s typed transitions fill it for the usual cases.
 */
public final class QueuePairAttributes {

    /** {@code IBV_QP_*} attribute mask bits. */
    static final int STATE = 1;
    static final int ACCESS_FLAGS = 1 << 3;
    static final int PKEY_INDEX = 1 << 4;
    static final int PORT = 1 << 5;
    static final int QKEY = 1 << 6;
    static final int AV = 1 << 7;
    static final int PATH_MTU = 1 << 8;
    static final int TIMEOUT = 1 << 9;
    static final int RETRY_CNT = 1 << 10;
    static final int RNR_RETRY = 1 << 11;
    static final int RQ_PSN = 1 << 12;
    static final int MAX_QP_RD_ATOMIC = 1 << 13;
    static final int MIN_RNR_TIMER = 1 << 15;
    static final int SQ_PSN = 1 << 16;
    static final int MAX_DEST_RD_ATOMIC = 1 << 17;
    static final int DEST_QPN = 1 << 20;

    private int mask;
    private QpState state;
    private int accessFlags;
    private int pkeyIndex;
    private int port;
    private int qkey;
    private AddressVector av;
    private Mtu pathMtu;
    private int timeout;
    private int retryCount;
    private int rnrRetry;
    private int rqPsn;
    private int maxRdAtomic;
    private int minRnrTimer;
    private int sqPsn;
    private int maxDestRdAtomic;
    private int destQpn;

    /** The state to move to. */
    public QueuePairAttributes state(QpState s) {
        state = s;
        mask |= STATE;
        return this;
    }

    /** Remote access the QP allows ({@link Access} REMOTE_* flags). */
    public QueuePairAttributes accessFlags(int flags) {
        accessFlags = flags;
        mask |= ACCESS_FLAGS;
        return this;
    }

    /** The P_Key index. */
    public QueuePairAttributes pkeyIndex(int index) {
        pkeyIndex = index;
        mask |= PKEY_INDEX;
        return this;
    }

    /** The local port (from 1). */
    public QueuePairAttributes port(int p) {
        port = p;
        mask |= PORT;
        return this;
    }

    /** The Q_Key of a UD QP. */
    public QueuePairAttributes qkey(int key) {
        qkey = key;
        mask |= QKEY;
        return this;
    }

    /** The primary path (connected QPs, RTR). */
    public QueuePairAttributes addressVector(AddressVector v) {
        av = v;
        mask |= AV;
        return this;
    }

    /** The path MTU (connected QPs, RTR). */
    public QueuePairAttributes pathMtu(Mtu mtu) {
        pathMtu = mtu;
        mask |= PATH_MTU;
        return this;
    }

    /** Local ACK timeout, 4.096 µs × 2^timeout (RC, RTS). */
    public QueuePairAttributes timeout(int t) {
        timeout = t;
        mask |= TIMEOUT;
        return this;
    }

    /** Transport retries (RC, RTS). */
    public QueuePairAttributes retryCount(int n) {
        retryCount = n;
        mask |= RETRY_CNT;
        return this;
    }

    /** RNR retries, 7 meaning infinite (RC, RTS). */
    public QueuePairAttributes rnrRetry(int n) {
        rnrRetry = n;
        mask |= RNR_RETRY;
        return this;
    }

    /** The first receive PSN (connected QPs, RTR). */
    public QueuePairAttributes rqPsn(int psn) {
        rqPsn = psn;
        mask |= RQ_PSN;
        return this;
    }

    /** Outstanding RDMA reads and atomics this QP initiates (RC, RTS). */
    public QueuePairAttributes maxRdAtomic(int n) {
        maxRdAtomic = n;
        mask |= MAX_QP_RD_ATOMIC;
        return this;
    }

    /** Minimum RNR NAK timer (RC, RTR). */
    public QueuePairAttributes minRnrTimer(int t) {
        minRnrTimer = t;
        mask |= MIN_RNR_TIMER;
        return this;
    }

    /** The first send PSN (RTS). */
    public QueuePairAttributes sqPsn(int psn) {
        sqPsn = psn;
        mask |= SQ_PSN;
        return this;
    }

    /** Outstanding RDMA reads and atomics this QP serves (RC, RTR). */
    public QueuePairAttributes maxDestRdAtomic(int n) {
        maxDestRdAtomic = n;
        mask |= MAX_DEST_RD_ATOMIC;
        return this;
    }

    /** The remote QP number (connected QPs, RTR). */
    public QueuePairAttributes destQpn(int qpn) {
        destQpn = qpn;
        mask |= DEST_QPN;
        return this;
    }

    /**
     * Drops the attributes a queue pair of {@code type} does not take in a transition (the IB
     * specification's modify-QP table): a UC queue pair has no timeout, retries, RNR timer or
     * RDMA read/atomic depths; a UD one has no path, remote QPN, RQ PSN or access flags either.
     * For attributes written for an RC queue pair (as {@code rdma_init_qp_attr} gives them) used
     * on a queue pair of another type. Returns this.
     */
    public QueuePairAttributes restrictTo(QpType type) {
        int reliable = TIMEOUT | RETRY_CNT | RNR_RETRY | MAX_QP_RD_ATOMIC | MIN_RNR_TIMER | MAX_DEST_RD_ATOMIC;
        switch (type) {
            case UC -> mask &= ~reliable;
            case UD -> mask &= ~(reliable | AV | PATH_MTU | DEST_QPN | RQ_PSN | ACCESS_FLAGS);
            default -> {
                // RC and the others: as given
            }
        }
        return this;
    }

    /** The {@code IBV_QP_*} mask of the attributes set. */
    public int mask() {
        return mask;
    }

    QpState targetState() {
        return (mask & STATE) != 0 ? state : null;
    }

    void writeTo(MemorySegment attr) {
        if (state != null) {
            ibv_qp_attr.qp_state(attr, state.code());
        }
        ibv_qp_attr.qp_access_flags(attr, accessFlags);
        ibv_qp_attr.pkey_index(attr, (short) pkeyIndex);
        ibv_qp_attr.port_num(attr, (byte) port);
        ibv_qp_attr.qkey(attr, qkey);
        if (av != null) {
            av.writeTo(ibv_qp_attr.ah_attr(attr));
        }
        if (pathMtu != null) {
            ibv_qp_attr.path_mtu(attr, pathMtu.code());
        }
        ibv_qp_attr.timeout(attr, (byte) timeout);
        ibv_qp_attr.retry_cnt(attr, (byte) retryCount);
        ibv_qp_attr.rnr_retry(attr, (byte) rnrRetry);
        ibv_qp_attr.rq_psn(attr, rqPsn);
        ibv_qp_attr.max_rd_atomic(attr, (byte) maxRdAtomic);
        ibv_qp_attr.min_rnr_timer(attr, (byte) minRnrTimer);
        ibv_qp_attr.sq_psn(attr, sqPsn);
        ibv_qp_attr.max_dest_rd_atomic(attr, (byte) maxDestRdAtomic);
        ibv_qp_attr.dest_qp_num(attr, destQpn);
    }

    @Override
    public String toString() {
        return "QueuePairAttributes[mask=0x" + Integer.toHexString(mask) + (state != null ? ", state=" + state : "") + "]";
    }
}
