package dev.verbs4j.vipl;

/**
 * The OUT parameters of VipCQDone and VipCQWait: which VI and which of its work queues has a
 * completed descriptor. A mutable holder the caller owns and reuses.
 */
public final class VipCqEntry {

    VipVi vi;
    boolean recvQueue;

    /** The VI of the last entry taken, or null. */
    public VipVi vi() {
        return vi;
    }

    /** True for the receive queue, false for the send queue. */
    public boolean recvQueue() {
        return recvQueue;
    }

    @Override
    public String toString() {
        return "VipCqEntry[" + vi + ", " + (recvQueue ? "recv" : "send") + "]";
    }
}
