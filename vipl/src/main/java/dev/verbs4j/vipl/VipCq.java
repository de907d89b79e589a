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
    /** The entries waiting to be taken, as a ring of (VI, queue) pairs: a descriptor of that queue completed. */
    private VipVi[] entryVi = new VipVi[16];
    private boolean[] entryRecv = new boolean[16];
    private int entryHead;
    private int pending;
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
        if (pending == 0) {
            return false;
        }
        out.vi = entryVi[entryHead];
        out.recvQueue = entryRecv[entryHead];
        entryVi[entryHead] = null;
        entryHead = (entryHead + 1) & (entryVi.length - 1);
        pending--;
        return true;
    }

    /** Adds an entry: a descriptor of {@code vi}'s receive or send queue completed. Under the NIC lock. */
    void add(VipVi vi, boolean recvQueue) {
        if (pending == entryVi.length) {
            VipVi[] vis = new VipVi[pending * 2];
            boolean[] recvs = new boolean[pending * 2];
            for (int i = 0; i < pending; i++) {
                int at = (entryHead + i) & (entryVi.length - 1);
                vis[i] = entryVi[at];
                recvs[i] = entryRecv[at];
            }
            entryVi = vis;
            entryRecv = recvs;
            entryHead = 0;
        }
        int at = (entryHead + pending) & (entryVi.length - 1);
        entryVi[at] = vi;
        entryRecv[at] = recvQueue;
        pending++;
    }

    /** The number of entries waiting to be taken. Under the NIC lock. */
    int pending() {
        return pending;
    }

    /** Drops every entry. Under the NIC lock. */
    void clearEntries() {
        java.util.Arrays.fill(entryVi, null);
        entryHead = 0;
        pending = 0;
    }

    /** Drops the entries of {@code vi} (destroyed), keeping the others in order. Under the NIC lock. */
    void removeEntriesOf(VipVi vi) {
        int kept = 0;
        int mask = entryVi.length - 1;
        for (int i = 0; i < pending; i++) {
            int from = (entryHead + i) & mask;
            if (entryVi[from] != vi) {
                int to = (entryHead + kept) & mask;
                entryVi[to] = entryVi[from];
                entryRecv[to] = entryRecv[from];
                kept++;
            }
        }
        for (int i = kept; i < pending; i++) {
            entryVi[(entryHead + i) & mask] = null;
        }
        pending = kept;
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
