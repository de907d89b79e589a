package dev.verbs4j.vipl;

import dev.verbs4j.rdmacm.CmEventType;
import dev.verbs4j.rdmacm.CmId;
import dev.verbs4j.rdmacm.EventChannel;
import dev.verbs4j.verbs.Closeables;
import dev.verbs4j.verbs.QpState;
import dev.verbs4j.verbs.QueuePairAttributes;

/**
 * The VI states of §5 and their transitions: Idle, Pending Connect while a VipConnectRequest or
 * VipConnectAccept attempt ({@link ConnectAttempt}) owns the VI, Connected, Error; VipDisconnect back to Idle, and the
 * destroy of an Idle VI (or of any VI by VipCloseNic). It owns the connection's RDMA CM id and
 * channel once connected. Everything here runs under the NIC lock unless it says otherwise.
 *
 * <p>An error that moves a reliable VI to the Error state also closes its connection, so that
 * the peer VI learns of it at once (Error state, asynchronous CONN_LOST) instead of at its own
 * next transfer (§12 tests 7 and 20).
 */
final class ViStateMachine {

    private static final System.Logger LOG = System.getLogger("dev.verbs4j.vipl");

    final VipVi vi;
    private final VipNic nic;
    volatile VipViState state = VipViState.IDLE;
    /** The VipConnectRequest or VipConnectAccept in progress, else null. Under the lock. */
    ConnectAttempt attempt;
    /** The connection's id and event channel while Connected or in Error, else null. Under the lock. */
    CmId id;
    EventChannel channel;
    /** The INIT, RTR and RTS attributes of the current connection (an Unreliable VI re-arms with them). */
    QueuePairAttributes[] connectedAttributes;
    /** An Unreliable VI's queue pair is in error and is being drained to be re-armed. */
    private boolean rearming;

    ViStateMachine(VipVi vi) {
        this.vi = vi;
        this.nic = vi.nic;
    }

    // ---- errors ----

    /**
     * A reliable VI's connection broke: Error state, the queue pair flushes the rest (§2.5.2). Under the lock.
     *
     * <p>Decision (§12 tests 7 and 20, "the VIs go to ERROR"): the connection is also closed at
     * the RDMA CM level, so that the peer VI learns of it at once (its connection watch puts it in
     * the Error state and reports CONN_LOST, §9.9.1) rather than only when its own next transfer
     * times out against a queue pair in error. This holds for every error that breaks a reliable
     * connection: a receive queue found empty, a receive too small, a protection error, a
     * transport error. Both VIs then stay in Error until each side calls VipDisconnect.
     */
    void enterError() {
        if (state == VipViState.CONNECTED || state == VipViState.CONNECT_PENDING) {
            state = VipViState.ERROR;
            try {
                vi.qp.toError();
            } catch (RuntimeException ignored) {
                // the queue pair may be in error already
            }
            if (id != null) {
                CmConnector.disconnect(id);
            }
        }
    }

    /**
     * After an error completion on an Unreliable VI, which stays Connected (§2.5.1): if the
     * queue pair went to the error state, what it flushes stays posted ({@link #rearming}) and,
     * once nothing is left in it, it is reset, moved to RTS again with the connection's attributes
     * (a UC queue pair has no connection state to lose: the peer resynchronises on the next
     * message) and the descriptors still queued are handed to it again, in order. Under the lock.
     */
    void afterUnreliableError() {
        if (state != VipViState.CONNECTED || connectedAttributes == null) {
            return;
        }
        try {
            if (vi.qp.queryState() != QpState.ERR) {
                return;
            }
        } catch (RuntimeException e) {
            return;
        }
        rearming = true;
        rearmIfDrained();
    }

    /** The second half of {@link #afterUnreliableError}, once the queue pair holds no descriptor. Under the lock. */
    void rearmIfDrained() {
        if (!rearming || vi.send.hasInVerbs() || vi.recv.hasInVerbs()) {
            return;
        }
        rearming = false;
        try {
            vi.qp.reset();
            for (QueuePairAttributes a : connectedAttributes) {
                vi.qp.modify(a);
            }
        } catch (RuntimeException e) {
            enterError(); // the queue pair cannot be used again: a catastrophic error (§7.1)
            return;
        }
        vi.translation.resubmit();
    }

    boolean rearming() {
        return rearming;
    }

    // ---- connecting: see ConnectAttempt ----

    /** VipConnectRequest on a VI found Idle (see {@link ConnectAttempt#request}). */
    VipReturn connectRequest(VipNetAddress local, VipNetAddress remote, long timeoutMillis) {
        return ConnectAttempt.request(this, local, remote, timeoutMillis);
    }

    /** VipConnectAccept (see {@link ConnectAttempt#accept}). */
    VipReturn accept(VipConnHandle conn) {
        return ConnectAttempt.accept(this, conn);
    }

    /**
     * Under the lock: cancels the attempt in progress, which then returns {@code code}, and
     * returns its event channel, which the caller closes once it has let go of the lock (that ends
     * the attempt's waits and destroys its connection id).
     */
    private EventChannel cancelAttempt(VipReturn code) {
        ConnectAttempt at = attempt;
        if (at == null) {
            return null;
        }
        attempt = null;
        return at.cancel(code);
    }

    /**
     * The connection watch's event (not under the lock): the peer's disconnect or the device's
     * removal puts a Connected VI in the Error state and reports CONN_LOST; false ends the watch.
     */
    boolean connectionEvent(EventChannel ch, CmEventType t) {
        VipErrorDescriptor lost = null;
        nic.lock.lock();
        try {
            if (channel != ch || vi.destroyed) {
                return false;
            }
            if (t == null || t != CmEventType.DISCONNECTED && t != CmEventType.DEVICE_REMOVAL) {
                return true;
            }
            if (state == VipViState.CONNECTED) {
                enterError();
                lost = new VipErrorDescriptor(nic, vi, null, 0, 0, VipResourceCode.VI, VipErrorCode.CONN_LOST);
            }
        } finally {
            nic.lock.unlock();
        }
        if (lost != null) {
            nic.report(lost);
        }
        return false;
    }

    // ---- disconnecting and destroying ----

    /**
     * VipDisconnect: flushes every posted descriptor (DESC_FLUSHED) and returns to Idle (§4.2,
     * §9.4.5). A connection attempt in progress (VipConnectRequest, VipConnectAccept on another
     * thread) is cancelled: it returns INVALID_STATE and leaves the VI alone. Not under the lock.
     */
    VipReturn disconnect() {
        CmId cmId;
        EventChannel ch;
        EventChannel cancelled;
        nic.lock.lock();
        try {
            if (vi.destroyed) {
                return VipReturn.INVALID_PARAMETER;
            }
            if (state == VipViState.IDLE) {
                // (no attempt in progress: an attempt keeps the VI Pending Connect)
                vi.send.flushRemaining();
                vi.recv.flushRemaining();
                return VipReturn.SUCCESS;
            }
            cancelled = cancelAttempt(VipReturn.INVALID_STATE);
            rearming = false; // what the queue pair flushes now is flushed for the consumer too
            try {
                vi.qp.toError();
            } catch (RuntimeException ignored) {
                // already in error
            }
            cmId = id;
            ch = channel;
            id = null;
            channel = null;
        } finally {
            nic.lock.unlock();
        }
        Closeables.closeLogged(LOG, cancelled);
        if (cmId != null) {
            CmConnector.disconnect(cmId);
        }
        long deadline = System.nanoTime() + 2_000_000_000L;
        while (System.nanoTime() < deadline) {
            nic.poll(vi.send.ibvCq);
            nic.poll(vi.recv.ibvCq);
            nic.lock.lock();
            try {
                if (vi.destroyed || !vi.send.hasInVerbs() && !vi.recv.hasInVerbs()) {
                    break;
                }
            } finally {
                nic.lock.unlock();
            }
            // (the flush takes microseconds; a virtual thread lets its carrier run others meanwhile)
            Thread.yield();
        }
        nic.lock.lock();
        try {
            if (!vi.destroyed) {
                // (destroyed meanwhile by VipCloseNic on another thread: everything is gone already)
                vi.send.flushRemaining();
                vi.recv.flushRemaining();
                vi.resetQp();
                vi.remoteAttributes = null;
                state = VipViState.IDLE;
            }
        } finally {
            nic.lock.unlock();
        }
        Closeables.closeLogged(LOG, ch);
        return VipReturn.SUCCESS;
    }

    /**
     * VipSetViAttributes: values checked as VipCreateVi checks them, then only on an Idle VI; a new
     * tag gives the VI a new queue pair in that tag's domain (D12).
     */
    VipReturn setAttributes(VipViAttributes a) {
        VipReturn rc = QueueRegistry.checkAttributes(nic, a);
        if (rc != VipReturn.SUCCESS) {
            return rc;
        }
        nic.lock.lock();
        try {
            if (vi.destroyed) {
                return VipReturn.INVALID_PARAMETER;
            }
            if (state != VipViState.IDLE) {
                return VipReturn.INVALID_STATE;
            }
            if (!a.ptag().usableOn(nic)) {
                return VipReturn.INVALID_PTAG;
            }
            vi.replaceAttributes(a);
            return VipReturn.SUCCESS;
        } finally {
            nic.lock.unlock();
        }
    }

    /**
     * VipDestroyVi: only Idle with both queues empty (§9.3.2). A VipConnectPeerRequest still
     * waiting for its peer is cancelled (its outcome is INVALID_PARAMETER, its thread ends).
     */
    VipReturn destroy() {
        nic.lock.lock();
        try {
            if (vi.destroyed) {
                return VipReturn.INVALID_PARAMETER;
            }
            if (state != VipViState.IDLE || !vi.send.ring.isEmpty() || !vi.recv.ring.isEmpty()) {
                return VipReturn.ERROR_RESOURCE;
            }
            vi.release();
            return VipReturn.SUCCESS;
        } finally {
            nic.lock.unlock();
        }
    }

    /** VipCloseNic: disconnects (cancelling any connection attempt) and destroys, whatever the state. */
    void forceDestroy() {
        PeerConnect.Attempt pa = vi.peerConnect;
        if (pa != null) {
            pa.cancel(VipReturn.INVALID_PARAMETER);
        }
        EventChannel cancelled;
        nic.lock.lock();
        try {
            cancelled = cancelAttempt(VipReturn.INVALID_PARAMETER);
        } finally {
            nic.lock.unlock();
        }
        Closeables.closeLogged(LOG, cancelled);
        if (state != VipViState.IDLE) {
            disconnect();
        }
        nic.lock.lock();
        try {
            // an attempt another thread started after the disconnect: cancelled too
            cancelled = cancelAttempt(VipReturn.INVALID_PARAMETER);
            if (!vi.destroyed) {
                vi.release();
            }
        } finally {
            nic.lock.unlock();
        }
        Closeables.closeLogged(LOG, cancelled);
    }
}
