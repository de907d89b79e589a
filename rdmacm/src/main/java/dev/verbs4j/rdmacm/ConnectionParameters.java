package dev.verbs4j.rdmacm;

import java.util.Arrays;

/**
 * The parameters of a connect or accept ({@code struct rdma_conn_param}), and the ones a
 * connection event reports. An immutable value: the {@code with…} methods return a changed copy.
 *
 * @param privateData        bytes carried to the peer with the request or reply (at most 56 on
 *                           a connect and 196 on an accept over RoCE/IB)
 * @param responderResources RDMA reads / atomics this side accepts in flight
 * @param initiatorDepth     RDMA reads / atomics this side issues in flight
 * @param flowControl        whether the hardware flow control is on (InfiniBand)
 * @param retryCount         transport retries (0–7)
 * @param rnrRetryCount      receiver-not-ready retries (0–7, 7 = forever)
 * @param srq                whether the queue pair uses a shared receive queue
 * @param qpNum              the queue pair number (used only when the id has no queue pair)
 */
public record ConnectionParameters(byte[] privateData, int responderResources, int initiatorDepth, boolean flowControl,
                                   int retryCount, int rnrRetryCount, boolean srq, int qpNum) {

    /**
     * The parameters C programs commonly pass: one RDMA read in each direction, 7 retries of
     * either kind, no private data.
     */
    public static final ConnectionParameters DEFAULT = new ConnectionParameters(new byte[0], 1, 1, false, 7, 7, false, 0);

    public ConnectionParameters {
        privateData = privateData == null ? new byte[0] : privateData.clone();
        check("responderResources", responderResources, 255);
        check("initiatorDepth", initiatorDepth, 255);
        check("retryCount", retryCount, 7);
        check("rnrRetryCount", rnrRetryCount, 7);
        if (privateData.length > 255) {
            throw new IllegalArgumentException("private data of " + privateData.length + " bytes: at most 255 fit a connection message");
        }
    }

    private static void check(String what, int value, int max) {
        if (value < 0 || value > max) {
            throw new IllegalArgumentException(what + " must be 0.." + max + ", got " + value);
        }
    }

    @Override
    public byte[] privateData() {
        return privateData.clone();
    }

    /** A copy with {@code data} as private data. */
    public ConnectionParameters withPrivateData(byte[] data) {
        return new ConnectionParameters(data, responderResources, initiatorDepth, flowControl, retryCount, rnrRetryCount, srq, qpNum);
    }

    /** A copy with these RDMA read / atomic depths. */
    public ConnectionParameters withRdmaReads(int responder, int initiator) {
        return new ConnectionParameters(privateData, responder, initiator, flowControl, retryCount, rnrRetryCount, srq, qpNum);
    }

    /** A copy with these retry counts. */
    public ConnectionParameters withRetries(int retry, int rnrRetry) {
        return new ConnectionParameters(privateData, responderResources, initiatorDepth, flowControl, retry, rnrRetry, srq, qpNum);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ConnectionParameters p && Arrays.equals(privateData, p.privateData)
                && responderResources == p.responderResources && initiatorDepth == p.initiatorDepth
                && flowControl == p.flowControl && retryCount == p.retryCount && rnrRetryCount == p.rnrRetryCount
                && srq == p.srq && qpNum == p.qpNum;
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(privateData) * 31 + responderResources * 7 + initiatorDepth + qpNum;
    }

    @Override
    public String toString() {
        return "ConnectionParameters[privateData=" + privateData.length + " bytes, responderResources=" + responderResources
                + ", initiatorDepth=" + initiatorDepth + ", flowControl=" + flowControl + ", retryCount=" + retryCount
                + ", rnrRetryCount=" + rnrRetryCount + ", srq=" + srq + ", qpNum=" + qpNum + "]";
    }
}
