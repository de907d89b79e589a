package dev.verbs4j.vipl;

import dev.verbs4j.verbs.CompletionChannel;
import dev.verbs4j.verbs.CompletionQueue;

import java.util.ArrayDeque;

/**
 * A VIPL completion queue ({@code VIP_CQ_HANDLE}, §2.4, §3.4): a verbs completion queue with its
 * own completion channel, shared by the work queues attached to it at VipCreateVi. Its entries
 * name a VI and a queue; the descriptor itself is still dequeued with VipSendDone/VipRecvDone.
 * The verbs objects belong to this object; {@link #close()} is VipDestroyCQ.
 */
public final class VipCq implements AutoCloseable {

    /** One entry: a descriptor of {@code vi}'s send or receive queue completed. */
    record Entry(VipVi vi, boolean recvQueue) {
    }

    final VipNic nic;
    final CompletionChannel channel;
    final CompletionQueue cq;
    final ArrayDeque<Entry> entries = new ArrayDeque<>();
    int entryCount;
    int attachedQueues;
    int attachedDepth;
    boolean destroyed;

    VipCq(VipNic nic, CompletionChannel channel, CompletionQueue cq, int entryCount) {
        this.nic = nic;
        this.channel = channel;
        this.cq = cq;
        this.entryCount = entryCount;
    }

    /** The NIC of this queue. */
    public VipNic nic() {
        return nic;
    }

    /** The number of entries it was created or resized with. */
    public int entryCount() {
        return entryCount;
    }

    /** Whether it was destroyed. */
    public boolean isDestroyed() {
        return destroyed;
    }

    /** Takes the next entry into {@code out}; progress first. Under the NIC lock. */
    boolean take(VipCqEntry out) {
        nic.poll(cq);
        Entry e = entries.pollFirst();
        if (e == null) {
            return false;
        }
        out.vi = e.vi();
        out.recvQueue = e.recvQueue();
        return true;
    }

    /** VipDestroyCQ. @throws VipException unless it returns VIP_SUCCESS */
    @Override
    public void close() {
        Vipl.check(Vipl.destroyCQ(this), "VipDestroyCQ");
    }

    @Override
    public String toString() {
        return "VipCq[" + nic.name() + ", " + entryCount + (destroyed ? ", destroyed]" : "]");
    }
}
