package dev.verbs4j.verbs;

/**
 * What two peers exchange out of band to connect their queue pairs, as the rdma-core examples do
 * (LID, QP number, packet sequence number, GID). Immutable value; owns no native memory.
 *
 * @param lid the port's LID (0 on RoCE)
 * @param qpn the queue pair number
 * @param psn the first packet sequence number (24 bits)
 * @param gid the GID to reach the port (the zero GID when the fabric routes by LID)
 */
public record QueuePairEndpoint(int lid, int qpn, int psn, Gid gid) {

    /** The endpoint with all fields checked: LID 16 bits, QPN and PSN 24 bits. */
    public QueuePairEndpoint {
        if ((lid & ~0xffff) != 0 || (qpn & ~0xffffff) != 0 || (psn & ~0xffffff) != 0 || gid == null) {
            throw new IllegalArgumentException("bad endpoint: lid " + lid + ", qpn " + qpn + ", psn " + psn + ", gid " + gid);
        }
    }
}
