package dev.verbs4j.rdmacm;

import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.Closeables;
import dev.verbs4j.verbs.CompletionChannel;
import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.Context;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.QpType;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairInit;
import dev.verbs4j.verbs.ReceiveRequests;
import dev.verbs4j.verbs.SendRequests;
import dev.verbs4j.verbs.VerbsException;
import dev.verbs4j.verbs.WorkCompletions;
import dev.verbs4j.verbs.internal.Libc;

/**
 * The verbs resources of one {@link RdmaConnection}: its protection domain, completion channel
 * and completion queue (or its {@link RdmaEndpointGroup}'s), the RC queue pair on the connection
 * id, the registered send and receive rings (the receive ring is the group's shared slots in a
 * group with a shared receive queue), the one-element work request arrays, the native completion
 * array and the wake-up eventfd. Creates them in order, frees them in the order that is safe
 * ({@link #release}), and posts the ring's receives. Owns all of it except what is the group's;
 * the connection's lock guards the request arrays.
 */
final class ConnectionResources {

    private static final System.Logger LOG = System.getLogger(RdmaConnection.class.getName());

    final ProtectionDomain pd;
    /** The connection's own completion channel; null in a group. */
    final CompletionChannel completionChannel;
    final CompletionQueue cq;
    final QueuePair qp;
    final MemoryRegion sendRing;
    final MemoryRegion receiveRing;
    final SendRequests sendRequests = new SendRequests(1, 1);
    final ReceiveRequests receiveRequests = new ReceiveRequests(1, 1);
    /** The native completion array; null in a group, whose poller takes the completions. */
    final WorkCompletions completions;
    /** The group whose protection domain and completion queue the connection uses, or null (its own). */
    final RdmaEndpointGroup group;
    /** Whether the queue pair takes its receives from the group's shared receive queue (the receive ring is the group's slots). */
    final boolean shared;
    /** Signalled to wake the caller sleeping on the connection's descriptors. */
    final int wakeFd;
    /** The bytes of one ring slot: the largest message. */
    final int slot;

    /**
     * Creates the resources on {@code id} (bound to a device) and posts the ring's receives; in
     * {@code group} (or null) the queue pair uses the group's protection domain and completion
     * queue, and the caller holds the group's {@link RdmaEndpointGroup#queuePairLock} until
     * {@link #attach}. On failure frees what it created and throws; the id stays the caller's.
     */
    ConnectionResources(CmId id, ConnectionOptions options, RdmaEndpointGroup group, RdmaConnection owner) {
        this.group = group;
        this.shared = group != null && group.sharedReceiveQueue() != null;
        this.slot = options.maxMessageSize();
        int receives = options.receiveDepth() + CreditWindow.CONTROL_SLOTS;
        int sends = options.sendDepth() + CreditWindow.CONTROL_SLOTS;
        int ops = options.sendDepth();
        Context context = id.context();
        ProtectionDomain pd = null;
        CompletionChannel channel = null;
        CompletionQueue cq = null;
        MemoryRegion sendRing = null;
        MemoryRegion receiveRing = null;
        int wake = -1;
        WorkCompletions wcs = null;
        try {
            if (group != null) {
                if (group.context() != context) {
                    throw new IllegalArgumentException("the connection's device " + context.name()
                            + " is not the endpoint group's " + group.context().name());
                }
                pd = group.protectionDomain();
                cq = group.completionQueue();
            } else {
                pd = context.allocateProtectionDomain();
                channel = context.createCompletionChannel();
                cq = context.createCompletionQueue(sends + ops + receives, channel, 0);
            }
            QueuePairInit init = QueuePairInit.of(QpType.RC, cq).maxSendWr(sends + ops).maxRecvWr(receives).maxSendSge(1)
                    .maxRecvSge(1);
            if (shared) {
                init.sharedReceiveQueue(group.sharedReceiveQueue());
            }
            this.qp = id.createQueuePair(pd, init);
            sendRing = pd.allocateRegion((long) slot * options.sendDepth(), Access.LOCAL_WRITE);
            int ringSlots = shared ? 0 : options.postedReceives() ? CreditWindow.CONTROL_SLOTS : receives;
            receiveRing = shared ? group.sharedSlots() : pd.allocateRegion((long) slot * ringSlots, Access.LOCAL_WRITE);
            this.sendRing = sendRing;
            this.receiveRing = receiveRing;
            if (group == null) {
                wcs = new WorkCompletions(Math.min(64, sends + receives));
            }
            wake = Libc.eventfd();
            for (int i = 0; i < ringSlots; i++) {
                postRingReceive(i);
            }
            // the peer's initial credits are owed from the start (CreditWindow), returned by the first update
        } catch (RuntimeException e) {
            throw undo(e, id, owner, wake, wcs, sendRing, receiveRing, pd, cq, channel);
        }
        this.pd = pd;
        this.completionChannel = channel;
        this.cq = cq;
        this.completions = wcs;
        this.wakeFd = wake;
    }

    /** In a group: {@code owner}'s queue pair joins it (its completions go there); on failure frees everything and throws. */
    void attach(CmId id, RdmaConnection owner) {
        if (group == null) {
            return;
        }
        try {
            group.attach(qp.qpNum(), owner);
        } catch (RuntimeException e) {
            throw undo(e, id, owner, wakeFd, completions, sendRing, receiveRing, pd, cq, completionChannel);
        }
    }

    /** Frees what a failed creation created, adding close failures to {@code e}; returns it. */
    private RuntimeException undo(RuntimeException e, CmId id, RdmaConnection owner, int wake, WorkCompletions wcs,
                                  MemoryRegion sendRing, MemoryRegion receiveRing, ProtectionDomain pd, CompletionQueue cq,
                                  CompletionChannel channel) {
        if (wake >= 0) {
            Libc.close(wake);
        }
        QueuePair q = id.queuePair();
        if (group != null && q != null) {
            // as a close: the queue is drained of the queue pair's completions before another is created
            group.queuePairGone(q.qpNum(), owner, () -> Closeables.closeLogged(LOG, q));
        }
        return Closeables.closeAfter(e, wcs, sendRequests, receiveRequests, group == null ? q : null, sendRing,
                shared ? null : receiveRing, group == null ? pd : null, group == null ? cq : null, channel);
    }

    /** Posts receive slot {@code s} of the ring for this queue pair. */
    void postRingReceive(int s) {
        receiveRequests.get(0).wrId(s).sge(receiveRing, (long) s * slot, slot);
        qp.postReceive(receiveRequests, 1);
    }

    /**
     * Gives receive slot {@code s} back after its message (or update, or immediate) was taken:
     * posted again for this connection when {@code counts} (true: it is owed to the peer as a
     * credit). A shared slot always goes back to the group's shared receive queue, whatever the
     * state, since other connections use it; it is owed as a credit only when {@code counts}.
     */
    boolean giveBack(int s, boolean counts) {
        if (shared) {
            group.repostShared(s);
            return counts;
        }
        return counts && repost(s);
    }

    /** Posts receive slot {@code s} again; false when the queue pair no longer takes receives. */
    private boolean repost(int s) {
        try {
            postRingReceive(s);
            return true;
        } catch (VerbsException e) {
            // the queue pair went to the error state: the CM event or the flush tells why
            LOG.log(System.Logger.Level.DEBUG, "receive not reposted: {0}", e.getMessage());
            return false;
        }
    }

    /**
     * Frees everything, in this order: the id (and its queue pair; in a group through the group,
     * which drains its queue of the queue pair's completions before another can take its number),
     * the rings ({@code returnShared} gives back a shared ring's slots instead), the domain, queue
     * and channel when they are the connection's, the event channel, the request arrays, the
     * eventfd. Never throws: what a close throws is logged.
     */
    void release(CmId id, EventChannel events, RdmaConnection owner, Runnable returnShared) {
        if (group != null) {
            group.queuePairGone(qp.qpNum(), owner, () -> Closeables.closeLogged(LOG, id));
            Closeables.closeLogged(LOG, sendRing);
            if (shared) {
                returnShared.run();
            } else {
                Closeables.closeLogged(LOG, receiveRing);
            }
        } else {
            Closeables.closeLogged(LOG, id, pd, cq, completionChannel, completions);
        }
        Closeables.closeLogged(LOG, events, sendRequests, receiveRequests);
        Libc.close(wakeFd);
    }
}
