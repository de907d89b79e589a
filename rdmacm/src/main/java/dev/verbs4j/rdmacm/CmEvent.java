package dev.verbs4j.rdmacm;

/**
 * One connection manager event ({@code struct rdma_cm_event}), copied to the Java heap and already
 * acknowledged ({@code rdma_ack_cm_event}) when the application sees it: nothing to free, nothing
 * to forget.
 *
 * @param type        what happened
 * @param status      0, or the failure: a negative errno, or for {@link CmEventType#REJECTED} the
 *                    reject reason (28 = consumer reject, 8 = no listener on that port)
 * @param id          the id the event is about; for {@link CmEventType#CONNECT_REQUEST} a new id
 *                    for the incoming connection, which the application accepts, rejects or closes
 * @param listener    the listening id of a {@link CmEventType#CONNECT_REQUEST}, else null
 * @param privateData the private data the peer sent (connect, accept, reject), possibly padded
 *                    with zeros to the transport's size; empty when none
 * @param connection  the connection parameters of a connection event on a connected id, else null
 * @param datagram    the address, queue pair number and Q_Key of a datagram event (UD connect,
 *                    multicast join), else null
 */
public record CmEvent(CmEventType type, int status, CmId id, CmId listener, byte[] privateData,
                      ConnectionParameters connection, UdParameters datagram) {

    /** Reject reason of a consumer reject ({@code rdma_reject}) in {@link #status()}. */
    public static final int REJECT_CONSUMER = 28;
    /** Reject reason when nobody listens on the port, in {@link #status()}. */
    public static final int REJECT_INVALID_SERVICE_ID = 8;

    public CmEvent {
        privateData = privateData == null ? new byte[0] : privateData;
    }

    @Override
    public byte[] privateData() {
        return privateData.clone();
    }

    /** The private data without trailing zero padding. */
    public byte[] privateDataTrimmed() {
        int n = privateData.length;
        while (n > 0 && privateData[n - 1] == 0) {
            n--;
        }
        return java.util.Arrays.copyOf(privateData, n);
    }

    @Override
    public String toString() {
        return type + (status != 0 ? " (status " + status + ")" : "") + " on " + id
                + (privateData.length > 0 ? ", " + privateData.length + " bytes of private data" : "");
    }
}
