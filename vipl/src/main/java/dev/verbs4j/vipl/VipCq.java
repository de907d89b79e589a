package dev.verbs4j.vipl;

import dev.verbs4j.verbs.CompletionChannel;
import dev.verbs4j.verbs.CompletionQueue;

/**
 * A VIPL completion queue ({@code VIP_CQ_HANDLE}, §2.4, §3.4): a verbs completion queue with its
 * own completion channel, shared by the work queues attached to it at VipCreateVi. Its entries
 * name a VI and a queue; the descriptor itself is still dequeued with VipSendDone/VipRecvDone.
 * The verbs objects belong to this object; {@link #close()} is VipDestroyCQ.
 */
public final class VipCq implements AutoCloseable {

    final VipNic nic;
    final CompletionChannel channel;
    final CompletionQueue cq;
    /** The entries waiting to be taken: for each, the work queue of which a descriptor completed. */
    private final Ring<WorkQueue> entries = new Ring<>();
    /** What VipCQWait sleeps on. */
    final CompletionWatch watch;
    int entryCount;
    int attachedQueues;
    int attachedDepth;
    boolean destroyed;

    VipCq(VipNic nic, CompletionChannel channel, CompletionQueue cq, int entryCount) {
        this.nic = nic;
        this.channel = channel;
        this.cq = cq;
        this.entryCount = entryCount;
        this.watch = new CompletionWatch(nic, channel, cq);
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
        WorkQueue q = entries.pollFirst();
        if (q == null) {
            return false;
        }
        out.vi = q.vi;
        out.recvQueue = q.receive;
        return true;
    }

    /** Adds an entry: a descriptor of work queue {@code q} completed. Under the NIC lock. */
    void add(WorkQueue q) {
        entries.addLast(q);
        watch.signal();
    }

    /** The number of entries waiting to be taken. Under the NIC lock. */
    int pending() {
        return entries.size();
    }

    /** Drops every entry. Under the NIC lock. */
    void clearEntries() {
        entries.clear();
    }

    /** Drops the entries of {@code vi} (destroyed), keeping the others in order. Under the NIC lock. */
    void removeEntriesOf(VipVi vi) {
        entries.removeIf(q -> q.vi == vi);
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
