package dev.verbs4j.vipl;

import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.QpType;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairInit;

/**
 * A Virtual Interface ({@code VIP_VI_HANDLE}, §2.1, §3.3): a send and a receive work queue over an
 * RC queue pair (Reliable Delivery and Reliable Reception) created in its tag's protection domain,
 * connected through RDMA CM. It keeps the VI state of §5 ({@link ViStateMachine}) and the posted
 * descriptors of each queue in order ({@link WorkQueue}, {@link DescriptorTranslation}); the
 * descriptors themselves stay the application's memory. The queue pair, its hidden completion
 * queues and the RDMA CM id belong to the VI; {@link #close()} is VipDestroyVi.
 *
 * <p>D14: its connection asks for no receiver-not-ready retries, so that a missing receive is an
 * error at once.
 */
public final class VipVi implements AutoCloseable {

    final VipNic nic;
    /** Changed by VipSetViAttributes only, under the lock. */
    VipViAttributes attributes;
    /** The CQs the queues are attached to, or null. */
    final VipCq sendCq, recvCq;
    /** The posted descriptors of each queue, in post order. */
    final WorkQueue send, recv;
    /** Replaced (under the lock) when a new tag or reliability class needs another, or a reset failed. */
    QueuePair qp;
    final DescriptorTranslation translation;
    final ViStateMachine machine;
    /** The peer VI's attributes while connected, else null. */
    volatile VipViAttributes remoteAttributes;
    /** The VipConnectPeerRequest in progress or whose outcome is not yet collected, else null. */
    volatile PeerConnect.Attempt peerConnect;
    volatile boolean destroyed;

    /** A new Idle VI, its queues and its queue pair (VipCreateVi, under the NIC lock). */
    VipVi(VipNic nic, VipViAttributes attributes, VipCq sendCq, VipCq recvCq) {
        this.nic = nic;
        this.send = new WorkQueue(this, false, sendCq, nic.queueDepth);
        this.recv = new WorkQueue(this, true, recvCq, nic.queueDepth);
        this.attributes = attributes;
        this.sendCq = sendCq;
        this.recvCq = recvCq;
        this.qp = createQp(attributes.ptag(), qpType(attributes));
        this.translation = new DescriptorTranslation(this);
        this.machine = new ViStateMachine(this);
    }

    /** D18: Unreliable is a UC queue pair (no acknowledgements, no RDMA Read); the reliable levels RC. */
    static QpType qpType(VipViAttributes a) {
        return a.reliabilityLevel() == VipReliabilityLevel.UNRELIABLE ? QpType.UC : QpType.RC;
    }

    private QueuePair createQp(VipPtag ptag, QpType type) {
        QueuePair q = ptag.pd.createQueuePair(QueuePairInit.of(type, send.ibvCq, recv.ibvCq)
                .maxSendWr(nic.queueDepth).maxRecvWr(nic.queueDepth).maxSendSge(nic.maxSge).maxRecvSge(nic.maxSge));
        nic.viByQpn.put(q.qpNum(), this);
        return q;
    }

    /** The NIC of this VI. */
    public VipNic nic() {
        return nic;
    }

    /** The current state (as VipQueryVi gives it). */
    public VipViState state() {
        return machine.state;
    }

    /** The current attributes (as VipQueryVi gives them). */
    public VipViAttributes attributes() {
        return attributes;
    }

    /**
     * The remote VI's attributes, the OUT parameter {@code RemoteViAttribs} of a successful
     * VipConnectRequest (and of the request VipConnectAccept accepted); null when not connected.
     */
    public VipViAttributes remoteAttributes() {
        return remoteAttributes;
    }

    /** Whether VipDestroyVi destroyed it. */
    public boolean isDestroyed() {
        return destroyed;
    }

    /** The CQ the send queue is attached to, or null. */
    public VipCq sendCq() {
        return sendCq;
    }

    /** The CQ the receive queue is attached to, or null. */
    public VipCq recvCq() {
        return recvCq;
    }

    int qpAccess() {
        boolean read = attributes.enableRdmaRead() && reliable();
        return (attributes.enableRdmaWrite() ? Access.REMOTE_WRITE : 0) | (read ? Access.REMOTE_READ : 0);
    }

    boolean reliable() {
        return attributes.reliabilityLevel() != VipReliabilityLevel.UNRELIABLE;
    }

    /** The receive queue when {@code receive}, else the send queue. */
    WorkQueue queue(boolean receive) {
        return receive ? recv : send;
    }

    /** The CQ the receive queue (when {@code receive}) or the send queue is attached to, or null. */
    VipCq cq(boolean receive) {
        return receive ? recvCq : sendCq;
    }

    /** VipQueryVi's answer, read under the lock. */
    VipViQuery query() {
        nic.lock.lock();
        try {
            return new VipViQuery(state(), attributes, send.ring.isEmpty(), recv.ring.isEmpty());
        } finally {
            nic.lock.unlock();
        }
    }

    /** VipSendWait, VipRecvWait: ERROR_RESOURCE on a CQ-attached queue (D2), else the queue's wait. */
    VipReturn await(boolean receive, long timeoutMillis, VipDescriptor out) {
        return cq(receive) != null ? VipReturn.ERROR_RESOURCE : queue(receive).await(timeoutMillis, out);
    }

    /** VipSendNotify, VipRecvNotify: ERROR_RESOURCE on a CQ-attached queue, else the queue's notify. */
    VipReturn notifyHandler(boolean receive, Object context, VipNotifyHandler handler) {
        return cq(receive) != null ? VipReturn.ERROR_RESOURCE : queue(receive).notify(context, handler);
    }

    VipReturn post(VipDescriptor d, VipMemHandle descriptorMemory, boolean receive) {
        try {
            return translation.post(d, descriptorMemory, receive);
        } finally {
            nic.flushReports();
        }
    }

    // ---- the state machine, for the work queues' completions (under the lock) ----

    /** A reliable VI's connection broke (see {@link ViStateMachine#enterError}). Under the lock. */
    void enterError() {
        machine.enterError();
    }

    /** An error completion on an Unreliable VI (see {@link ViStateMachine#afterUnreliableError}). Under the lock. */
    void afterUnreliableError() {
        machine.afterUnreliableError();
    }

    /** See {@link ViStateMachine#rearmIfDrained}. Under the lock. */
    void rearmIfDrained() {
        machine.rearmIfDrained();
    }

    boolean rearming() {
        return machine.rearming();
    }

    // ---- the queue pair (under the lock) ----

    /** Back to RESET after a disconnect; a queue pair that cannot be reset is replaced. Under the lock. */
    void resetQp() {
        try {
            qp.reset();
        } catch (RuntimeException ignored) {
            // a queue pair that cannot be reset is replaced
            nic.viByQpn.remove(qp.qpNum());
            qp.close();
            qp = createQp(attributes.ptag(), qpType(attributes));
        }
    }

    /** New attributes for an Idle VI; a new tag or reliability class gets a new queue pair (D12). Under the lock. */
    void replaceAttributes(VipViAttributes a) {
        if (a.ptag() != attributes.ptag() || qpType(a) != qpType(attributes)) {
            // another domain, or another reliability class (RC / UC): another queue pair
            QueuePair old = qp;
            qp = createQp(a.ptag(), qpType(a));
            nic.viByQpn.remove(old.qpNum());
            old.close();
            attributes.ptag().users.remove(this);
            a.ptag().users.add(this);
        }
        attributes = a;
    }

    /** Frees everything of the VI. Under the lock. */
    void release() {
        destroyed = true;
        PeerConnect.Attempt pa = peerConnect;
        if (pa != null) {
            pa.cancel(VipReturn.INVALID_PARAMETER);
        }
        // no connection attempt is in progress: the VI is Idle (VipDestroyVi), or VipCloseNic cancelled it
        nic.viByQpn.remove(qp.qpNum());
        qp.close();
        send.close();
        recv.close();
        translation.close();
        QueueRegistry.forget(this);
    }

    /** VipDestroyVi. @throws VipException unless it returns VIP_SUCCESS */
    @Override
    public void close() {
        Vipl.check(Vipl.destroyVi(this), "VipDestroyVi");
    }

    @Override
    public String toString() {
        return "VipVi[" + nic.name() + ", " + state() + (destroyed ? ", destroyed]" : "]");
    }
}
