package dev.verbs4j.vipl;

import dev.verbs4j.rdmacm.CmId;

/**
 * A connection request VipConnectWait found ({@code VIP_CONN_HANDLE}, §9.4.1): the RDMA CM id of
 * the request, the requester's address and VI attributes. VipConnectAccept (on success) or
 * VipConnectReject consumes it; {@link #close()} rejects it if neither did.
 */
public final class VipConnHandle implements AutoCloseable {

    final VipNic nic;
    final CmId id;
    final VipNetAddress remoteAddress;
    final VipViAttributes remoteAttributes;
    final byte[] targetDiscriminator;
    final int remoteResponderResources;
    /** Set under the NIC lock by the accept or reject that takes the request (or by its listener when the requester gave up). */
    volatile boolean consumed;

    VipConnHandle(VipNic nic, CmId id, VipNetAddress remoteAddress, VipViAttributes remoteAttributes,
                  byte[] targetDiscriminator, int remoteResponderResources) {
        this.nic = nic;
        this.id = id;
        this.remoteAddress = remoteAddress;
        this.remoteAttributes = remoteAttributes;
        this.targetDiscriminator = targetDiscriminator;
        this.remoteResponderResources = remoteResponderResources;
    }

    /** The requester's address (its host address and the discriminator of its LocalAddr). */
    public VipNetAddress remoteAddress() {
        return remoteAddress;
    }

    /** The requesting VI's attributes (without a Ptag). */
    public VipViAttributes remoteAttributes() {
        return remoteAttributes;
    }

    /** Whether Accept or Reject consumed it. */
    public boolean isConsumed() {
        return consumed;
    }

    /** Rejects the request unless it was accepted or rejected already. */
    @Override
    public void close() {
        if (!consumed) {
            Vipl.connectReject(this);
        }
    }

    @Override
    public String toString() {
        return "VipConnHandle[from " + remoteAddress + (consumed ? ", consumed]" : "]");
    }
}
