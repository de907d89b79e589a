package dev.verbs4j.naaice;

import dev.verbs4j.rdmacm.CmId;
import dev.verbs4j.verbs.Access;
import dev.verbs4j.verbs.Closeables;
import dev.verbs4j.verbs.CompletionChannel;
import dev.verbs4j.verbs.CompletionQueue;
import dev.verbs4j.verbs.MemoryRegion;
import dev.verbs4j.verbs.ProtectionDomain;
import dev.verbs4j.verbs.QpType;
import dev.verbs4j.verbs.QueuePair;
import dev.verbs4j.verbs.QueuePairInit;
import dev.verbs4j.verbs.ReceiveRequests;
import dev.verbs4j.verbs.SendRequests;
import dev.verbs4j.verbs.WorkCompletions;
import dev.verbs4j.verbs.event.DescriptorWaiter;

import java.util.List;

/**
 * The verbs resources of a {@link NaaClient} (protection domain, completion channel and queue,
 * queue pair, the MRSP buffer, the parameter registrations; the work request and completion
 * arrays) and its sleep: one wait on every channel it needs at once (the connection manager's,
 * and the completion channel once it exists) until the caller's deadline, which {@link
 * #closeWaiters} ends for every sleeper. Owns all of it, and the waiters' eventfds; the queue pair
 * is the connection id's. Guarded by the client's lock, except {@link #sleep}.
 */
final class ClientResources implements AutoCloseable {

    /** The MRSP buffer: sent from and received into locally, never accessed by the NAA. */
    private static final int MRSP_ACCESS = Access.LOCAL_WRITE;

    final SendRequests sends;
    final ReceiveRequests receives = new ReceiveRequests(1, 1);
    final WorkCompletions completions = new WorkCompletions(64);
    private ProtectionDomain pd;
    private CompletionChannel completionChannel;
    private CompletionQueue cq;
    QueuePair qp;
    MemoryRegion mrspBuffer;
    /** What a sleep waits on: the event channel, then (once it exists) the completion channel too. */
    private DescriptorWaiter waiter;
    /** The waiter on the event channel alone, once replaced: woken, closed with the other. */
    private DescriptorWaiter retired;

    /** The host-side arrays for {@code parameters} regions; no native resource yet. */
    ClientResources(int parameters) {
        this.sends = new SendRequests(parameters + 1, 1);
    }

    /** Sleeps on the event channel {@code eventFd} from now on; the caller closes everything on failure. */
    void watch(int eventFd) {
        this.waiter = new DescriptorWaiter(eventFd);
    }

    /**
     * The verbs resources, once the address (and so the device) is known; and the parameter
     * regions registered, so that memory that cannot be registered fails the client before it
     * connects (the NAA never sees a connection without a region setup).
     */
    void create(CmId id, int eventFd, List<ClientRegion> params, ClientState state) {
        pd = id.context().allocateProtectionDomain();
        completionChannel = id.context().createCompletionChannel();
        int depth = params.size() + 4;
        cq = id.context().createCompletionQueue(2 * depth + 8, completionChannel, 0);
        qp = id.createQueuePair(pd, QueuePairInit.of(QpType.RC, cq).maxSendWr(depth).maxRecvWr(4).maxSendSge(1).maxRecvSge(1));
        mrspBuffer = pd.allocateRegion(2L * Mrsp.MAX_MESSAGE, MRSP_ACCESS);
        // a sleeper on the event channel alone wakes and sleeps on both from its next round
        DescriptorWaiter both = new DescriptorWaiter(eventFd, completionChannel.fd());
        retired = waiter;
        waiter = both;
        retired.wake();
        for (ClientRegion r : params) {
            try {
                r.mr = pd.register(r.segment, r.access());
            } catch (IllegalArgumentException e) {
                throw state.fail(NaaiceException.Reason.LOCAL, 0, r.label + ": its memory is not of an open RdmaArena or the global"
                        + " arena, so it could be freed while the NAA can reach it; allocate it from an RdmaArena", e);
            } catch (IllegalStateException e) {
                throw state.fail(NaaiceException.Reason.LOCAL, 0, r.label + ": its memory is closed (" + e.getMessage() + ")", e);
            } catch (RuntimeException e) {
                throw state.fail(NaaiceException.Reason.LOCAL, 0, r.label + ": cannot register its " + r.size + " bytes", e);
            }
        }
    }

    /** Whether the verbs resources exist (the address is resolved). */
    boolean created() {
        return cq != null;
    }

    /** Polls the completion queue into {@link #completions}; the number taken. */
    int poll() {
        return cq.poll(completions);
    }

    /**
     * Arms the completion queue for its next completion (only a solicited one if {@code
     * solicitedOnly}), after taking the channel's pending events (each wakes a sleep until taken).
     * The caller polls once more before it sleeps: what came before the arming raises no event.
     */
    void arm(boolean solicitedOnly) {
        while (completionChannel.tryGetEvent() != null) {
            // taken (and counted for its acknowledgement)
        }
        cq.requestNotify(solicitedOnly);
    }

    /** Under the lock: the waiter for the next sleep (keep it: {@link #create} may replace it meanwhile). */
    DescriptorWaiter waiter() {
        return waiter;
    }

    /**
     * Without the lock: sleeps on {@code w} until a channel is readable, {@code nanos} have passed
     * or {@link #closeWaiters} is called (then it returns at once, now and later).
     */
    static void sleep(DescriptorWaiter w, long nanos) {
        w.sleep((int) Math.min(Integer.MAX_VALUE, Math.max(1, (nanos + 999_999) / 1_000_000)));
    }

    /** Wakes every sleeper and waits until it has left: first in close, before the channels close. */
    void closeWaiters() {
        if (waiter != null) {
            waiter.close();
        }
        if (retired != null) {
            retired.close();
        }
    }

    /** Closes the queue, its channel and the protection domain (the queue pair went with the id) and the arrays. */
    @Override
    public void close() {
        closeWaiters();
        Closeables.closeAll(cq, completionChannel, pd, sends, receives, completions);
    }
}
